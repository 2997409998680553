"""Lazy public APIs for packages whose implementation imports heavy libraries.

``flywheel --help`` imports every package's ``_cli`` module, which runs the
package's ``__init__``. Eager re-exports pulled Presidio, spaCy, datasketch,
scipy and Textual into every command start (about 2 s). A package lists its
public names per module once; each name is imported on first use (PEP 562).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any


def lazy_exports(
    package: str, exports: dict[str, list[str]]
) -> tuple[list[str], Callable[[str], Any], Callable[[], list[str]]]:
    """``(__all__, __getattr__, __dir__)`` for ``package`` from ``{module: [names]}``.

    Args:
        package: the package's ``__name__`` (error messages name it).
        exports: private module (absolute name) -> public names it defines.
    """
    where = {name: module for module, names in exports.items() for name in names}
    public = sorted(where)

    def __getattr__(name: str) -> Any:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(module), name)

    def __dir__() -> list[str]:
        return public

    return public, __getattr__, __dir__
