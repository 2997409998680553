"""A national number's identity read from a few regions is the one the full ranking gives.

``PhoneContext.identity`` reads a national number only in the regions that can
decide it (``_identity_lazily``); the rule is the module docstring's, applied
to every region's reading. These tests compare the two on numbers of every
shape the trace's other numbers make interesting (the same digits in another
country, a country the trace names, none), and check the one fact the short
cut rests on: such a number read in a region carries that region's country code.
"""

from __future__ import annotations

import phonenumbers
import pytest
from flywheel.promote._pseudonyms import (
    _PLAIN_NATIONAL,
    PHONE_REGIONS,
    PhoneContext,
    _dialled_abroad,
    _main_number,
    phone_readings,
)
from hypothesis import given, settings
from hypothesis import strategies as st


def _reference(context: list[str], value: str) -> str:
    """``identity`` as it was: the rule over the full ranking of ``phone_readings``."""
    e164: set[str] = set()
    regions: dict[str, int] = {}
    for v in context:
        international, readings = phone_readings(v)
        if international and readings:
            e164.add(readings[0][1])
            regions[readings[0][0]] = regions.get(readings[0][0], 0) + 1
    international, readings = phone_readings(value)
    if not readings:
        digits = "".join(c for c in value if c.isdigit())
        return "?" + (digits.lstrip("0") or value.strip())
    if international:
        return readings[0][1]
    for _, e in readings:
        if e in e164:
            return e
    return max(readings, key=lambda r: regions.get(r[0], 0))[1]


def _example(region: str, kind: int) -> phonenumbers.PhoneNumber:
    kinds = (phonenumbers.PhoneNumberType.MOBILE, phonenumbers.PhoneNumberType.FIXED_LINE)
    return phonenumbers.example_number_for_type(region, kinds[kind % 2])


def _written(num: phonenumbers.PhoneNumber, fmt: int) -> str:
    formats = (
        phonenumbers.PhoneNumberFormat.NATIONAL,
        phonenumbers.PhoneNumberFormat.INTERNATIONAL,
        phonenumbers.PhoneNumberFormat.E164,
    )
    return phonenumbers.format_number(num, formats[fmt % 3])


NATIONALS = [
    "06 12 34 56 78",
    "0171 2345678",
    "(415) 555-0132",
    "415.555.0132",
    "612 34 56 78",
    "020 7946 0958",
    "0116 496 0196",
    "0985777204",
    "542-200-7428",
    "030 1234567",
    "01 23 45 67 89",
    "0049 30 1234567",  # international by its 00: the full path
    "011 44 20 7946 0958",  # US dialling prefix: the full path
    "09 1234 5678",  # Mexico's dialling prefix: the full path
    "12",
    "0000000",
]


@pytest.mark.parametrize("value", NATIONALS)
@pytest.mark.parametrize(
    "context",
    [
        [],
        ["+33 6 12 34 56 78"],
        ["+49 6123 45678"],
        ["+49 30 1234567", "+44 20 7946 0958", "+44 161 496 0299"],
        ["+34 612 34 56 78", "+33 6 12 34 56 78"],
        ["+1 415 555 0132"],
        ["+44 116 496 0196", "+1 542 200 7428"],
        ["+999 12"],
    ],
)
def test_identity_is_the_full_rankings(context: list[str], value: str) -> None:
    assert PhoneContext([*context, value]).identity(value) == _reference([*context, value], value)


_REGION = st.sampled_from(PHONE_REGIONS)


@st.composite
def _national(draw: st.DrawFn) -> str:
    if draw(st.booleans()):
        num = _example(draw(_REGION), draw(st.integers(0, 1)))
        digits = str(num.national_number)
        cut = draw(st.integers(0, 3))
        digits = digits[: len(digits) - cut] + "".join(
            draw(st.lists(st.sampled_from("0123456789"), max_size=cut))
        )
        lead = draw(st.sampled_from(["", "0", "1", "(0)"]))
    else:
        digits = "".join(draw(st.lists(st.sampled_from("0123456789"), min_size=6, max_size=13)))
        lead = ""
    seps = draw(
        st.lists(st.sampled_from([" ", "-", ".", ""]), min_size=len(digits), max_size=len(digits))
    )
    return lead + "".join(d + s for d, s in zip(digits, seps, strict=True)).strip(" -.")


@st.composite
def _context(draw: st.DrawFn) -> list[str]:
    out = []
    for _ in range(draw(st.integers(0, 4))):
        num = _example(draw(_REGION), draw(st.integers(0, 1)))
        out.append(_written(num, draw(st.integers(1, 2))))
    return out


@settings(max_examples=300, deadline=None)
@given(context=_context(), value=_national(), same_digits=st.booleans(), region=_REGION)
def test_identity_is_the_full_rankings_on_generated_numbers(
    context: list[str], value: str, same_digits: bool, region: str
) -> None:
    if same_digits:  # the national digits written internationally in some country
        digits = "".join(c for c in value if c.isdigit()).lstrip("0")
        context = [*context, f"+{phonenumbers.country_code_for_region(region)} {digits}"]
    values = [*context, value]
    assert PhoneContext(values).identity(value) == _reference(values, value)


@settings(max_examples=300, deadline=None)
@given(value=_national(), abroad=st.sampled_from(["", "00", "011", "09", "0 0", "(0)0", "0-11"]))
def test_a_national_number_read_in_a_region_has_its_country_code(value: str, abroad: str) -> None:
    """Unless it starts with the region's dialling prefix (then it may have any)."""
    main, international = _main_number(abroad + value)
    if international or not _PLAIN_NATIONAL.match(main):
        return
    for region in PHONE_REGIONS:
        try:
            num = phonenumbers.parse(main, region)
        except phonenumbers.NumberParseException:
            continue
        if region not in _dialled_abroad(main):
            assert num.country_code == phonenumbers.country_code_for_region(region), (main, region)


def test_dialling_prefixes_are_each_regions() -> None:
    assert _dialled_abroad("0049 30 1234567") == set(PHONE_REGIONS) - {"US"}
    assert _dialled_abroad("011 44 20 7946 0958") == {"US"}
    assert _dialled_abroad("09 1234 5678") == {"MX"}
    assert _dialled_abroad("(0)6 12 34 56 78") == set()
    assert not _PLAIN_NATIONAL.match("tel 030") and not _PLAIN_NATIONAL.match("+44 20")


@pytest.mark.parametrize("region", [*PHONE_REGIONS, "JE", "CA", "LU", "VA"])
def test_country_code_of_an_e164_number(region: str) -> None:
    from flywheel.promote._pseudonyms import _country_code_of

    num = _example(region, 0)
    e164 = phonenumbers.format_number(num, phonenumbers.PhoneNumberFormat.E164)
    assert _country_code_of(e164) == num.country_code
