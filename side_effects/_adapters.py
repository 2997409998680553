"""The adapter protocol and registry: how a kind of state becomes records.

Adding an adapter is one small class with a ``name`` and a ``records(source)``
method, decorated with ``@register_adapter``. ``snapshot(name, source, **opts)``
builds a ``Snapshot`` through the registry, so harnesses can name adapters in
configuration and a stored trial can say which adapter produced its state.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Protocol, TypeVar, runtime_checkable

from ._records import Record, Snapshot


@runtime_checkable
class Adapter(Protocol):
    """Turns one kind of environment state into canonical records."""

    name: str

    def records(self, source: Any) -> Iterable[Record]:
        """Yield the records of ``source`` (a path, a connection, a document...)."""
        ...


_REGISTRY: dict[str, Callable[..., Adapter]] = {}

A = TypeVar("A", bound=type)


def register_adapter(cls: A) -> A:
    """Class decorator: make an adapter available by its ``name``."""
    name = getattr(cls, "name", None)
    if not isinstance(name, str) or not name:
        raise TypeError(f"{cls.__name__} needs a class attribute `name`")
    _REGISTRY[name] = cls
    return cls


def adapter_names() -> list[str]:
    """Names of the registered adapters, sorted."""
    return sorted(_REGISTRY)


def get_adapter(name: str, **options: Any) -> Adapter:
    """An adapter instance by registered name."""
    try:
        factory = _REGISTRY[name]
    except KeyError:
        raise KeyError(f"no adapter {name!r}; known: {', '.join(adapter_names())}") from None
    return factory(**options)


def snapshot(name: str, source: Any, **options: Any) -> Snapshot:
    """Snapshot ``source`` with the adapter registered as ``name``."""
    return Snapshot.from_records(get_adapter(name, **options).records(source))
