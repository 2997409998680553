"""National identity numbers recognised by their check digits (``python-stdnum``).

Why a library: each country's id has its own check-digit scheme (ISO 7064
mod 11,10 for the German Steuer-ID, mod 97 for the French NIR, mod 11 for the
Dutch BSN and the Portuguese NIF, a check letter for the Spanish DNI/NIE and
the Italian codice fiscale...). ``python-stdnum`` (LGPL-2.1+, pure Python,
imported, not copied) validates them all, kept up to date with the schemes.

Two strengths:

- ``strong``: schemes whose check leaves about one random number in a
  hundred or fewer passing, and whose shape is distinctive (NIR: 15 digits
  with sex, year, month, place; codice fiscale; DNI/NIE letters). Safe in
  prose without a context word.
- every scheme, the weak ones too (BSN, NIF, Steuer-ID: about one in ten or
  eleven random numbers passes): only where something else says "this is an
  id" -- a document or id key, a table column named so.
"""

from __future__ import annotations

import importlib
from functools import lru_cache
from types import ModuleType

#: Strong schemes (see the module docstring): module paths in ``stdnum``.
STRONG: tuple[str, ...] = ("fr.nir", "it.codicefiscale", "es.dni", "es.nie")
#: Schemes that need a context: the national ids of the languages we redact and their
#: neighbours (tax, citizen and social-insurance numbers).
WEAK: tuple[str, ...] = (
    "nl.bsn",
    "pt.nif",
    "de.idnr",
    "de.svnr",
    "at.vnr",
    "ch.ssn",
    "es.nss",
    "fr.nif",
    "be.nn",
    "pl.pesel",
    "dk.cpr",
    "se.personnummer",
    "no.fodselsnummer",
    "fi.hetu",
    "ie.pps",
    "lu.matricule",
)


@lru_cache(maxsize=1)
def _modules() -> tuple[tuple[str, ModuleType, bool], ...]:
    out = []
    for path in STRONG + WEAK:
        try:
            mod = importlib.import_module(f"stdnum.{path}")
        except ImportError:  # a scheme a given stdnum release lacks
            continue
        out.append((path, mod, path in STRONG))
    return tuple(out)


@lru_cache(maxsize=8192)
def national_id_scheme(value: str, strong_only: bool = False) -> str | None:
    """The ``stdnum`` scheme (``"nl.bsn"``) whose check digits ``value`` passes, or None.

    Separators (spaces, dots, hyphens, slashes) are ignored; values with fewer than
    eight letters and digits are no national id.
    """
    compact = "".join(c for c in value if c.isalnum())
    if not 8 <= len(compact) <= 20 or sum(c.isdigit() for c in compact) < 5:
        return None
    for path, mod, strong in _modules():
        if strong_only and not strong:
            continue
        if mod.is_valid(value):
            return path
    return None
