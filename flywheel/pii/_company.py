"""Organisations' register, VAT and tax numbers: named by their scheme, checked, and so not personal.

Why: an invoice or a payment line writes a company's number beside its
scheme's name (``NIP spółdzielni 526-104-82-09``, ``CNPJ 27.845.192/0001-93``,
``Orgnr 556677-8899``). Such a number is public, not a person's datum, yet its
digit groups look like a phone number to a matcher that only counts digits.
``python-stdnum`` (imported, not copied) knows each scheme's name (the first
line of its docstring: ``NIP (Numer Identyfikacji Podatkowej, Polish VAT
number)``) and its check digits, so a number right after a scheme's name that
passes that scheme's check is that organisation number (``company_number``).
"""

from __future__ import annotations

import importlib
import re
from functools import lru_cache
from types import ModuleType

#: Company, VAT and organisation-number schemes (module paths in ``stdnum``).
COMPANY_SCHEMES: tuple[str, ...] = (
    "pl.nip", "pl.regon", "br.cnpj", "tr.vkn", "ee.registrikood", "es.cif", "fr.siren",
    "fr.siret", "fr.tva", "nl.btw", "nl.kvk", "dk.cvr", "fi.ytunnus", "no.orgnr", "se.orgnr",
    "ch.uid", "cz.dic", "hu.anum", "ro.cui", "lt.pvm", "lv.pvn", "gb.vat", "gb.utr", "ie.vat",
    "it.iva", "in_.gstin", "au.abn", "au.acn", "mx.rfc", "vn.mst", "be.vat", "at.uid",
    "de.vat", "de.stnr", "gr.vat", "ru.inn", "ua.edrpou", "ar.cuit", "co.nit", "pe.ruc",
    "pt.nif", "za.tin", "is_.vsk", "si.ddv", "hr.oib", "bg.vat", "sk.dph", "cl.rut",
)  # fmt: skip


@lru_cache(maxsize=1)
def _modules() -> tuple[ModuleType, ...]:
    out = []
    for path in COMPANY_SCHEMES:
        try:
            out.append(importlib.import_module(f"stdnum.{path}"))
        except ImportError:  # a scheme a given stdnum release lacks
            continue
    return tuple(out)


def _names(doc: str) -> set[str]:
    """A scheme's names from its docstring's first line: the abbreviations before the
    parenthesis (``BTW, TVA, NWSt``) and the native name first inside it."""
    line = doc.strip().split("\n")[0]
    head, _, rest = line.partition("(")
    out = {p.strip().strip('".').lower() for p in re.split(r",| or ", head)}
    out.add(rest.split(",")[0].strip().strip('").').lower())
    return {w for w in out if 3 <= len(w) <= 40 and not w.startswith(("the ", "a ", "an "))}


@lru_cache(maxsize=1)
def _by_name() -> dict[str, tuple[ModuleType, ...]]:
    """Each scheme name (lower case) -> the schemes it names (``orgnr``: Norway's and Sweden's)."""
    out: dict[str, list[ModuleType]] = {}
    for mod in _modules():
        for name in _names(mod.__doc__ or ""):
            out.setdefault(name, []).append(mod)
    return {k: tuple(v) for k, v in out.items()}


@lru_cache(maxsize=1)
def _name_before() -> re.Pattern[str]:
    """A scheme's name, at most two words, then the number (the end of the text before it)."""
    alt = "|".join(re.escape(n) for n in sorted(_by_name(), key=len, reverse=True))
    return re.compile(
        rf"(?i)(?<![^\W\d_])(?P<n>{alt})(?![^\W\d_])(?:[ \t]+[^\s\d]+){{0,2}}?[ \t:#.\-]*\(?\Z"
    )


_WINDOW = 48


def company_number(text: str, start: int, end: int) -> bool:
    """Whether ``text[start:end]`` is an organisation's number: a scheme's name shortly before
    it (at most two words between) and that scheme's check digits pass."""
    m = _name_before().search(text, max(0, start - _WINDOW), start)
    if m is None:
        return False
    value = text[start:end]
    return any(mod.is_valid(value) for mod in _by_name().get(m.group("n").lower(), ()))
