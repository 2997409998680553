"""Deriving a task's scope from a ground-truth run.

The deltas of the reference run are the task's expected state change: each
becomes an ``ExpectedDelta`` with the values it wrote. Step deltas that the
reference run itself undid (see ``transient_deltas``) are kept as transient
expectations, so a candidate run that does the same dance is not flagged.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ._diff import Delta
from ._policy import AllowRule, ExpectedDelta, NoiseRule, Scope, glob_any

FreeFields = Sequence[str] | Mapping[str, Sequence[str]]


def _free_for(rtype: str, free: FreeFields) -> list[str]:
    if isinstance(free, Mapping):
        return [f for glob, fields in free.items() if glob_any(rtype, [glob]) for f in fields]
    return list(free)


def _expected(i: int, d: Delta, transient: bool, free: FreeFields) -> ExpectedDelta:
    return ExpectedDelta(
        id=f"{'T' if transient else 'E'}{i}",
        kind=d.kind,
        resource_type=d.resource_type,
        key=list(d.key),
        fields=d.changed_fields(),
        ignore_fields=_free_for(d.resource_type, free),
        transient=transient,
    )


def derive_scope(
    deltas: Sequence[Delta],
    *,
    transient: Sequence[Delta] = (),
    task_id: str | None = None,
    source: str = "ground-truth run",
    allow: Sequence[AllowRule] = (),
    noise: Sequence[NoiseRule] = (),
    free_fields: FreeFields = (),
) -> Scope:
    """A scope whose expectations are the deltas of a reference run.

    Args:
        deltas: net deltas of the reference (ground-truth) run.
        transient: its step deltas undone by the end (``transient_deltas``).
        task_id: the task this scope belongs to.
        source: a phrase naming the reference run, quoted in decision reasons.
        allow: extra declared allowances.
        noise: task-specific noise.
        free_fields: globs of fields whose wording is the agent's choice (a
            message body, a subject): the change must happen, its value is not
            compared. A list applies to every resource type; a mapping of
            resource-type glob -> field globs applies per type (``{"outbox.*":
            ["body"]}``). Empty (the default) compares every value exactly.
    """
    expected = [_expected(i, d, False, free_fields) for i, d in enumerate(deltas, 1)]
    expected += [_expected(i, d, True, free_fields) for i, d in enumerate(transient, 1)]
    return Scope(
        task_id=task_id, source=source, expected=expected, allow=list(allow), noise=list(noise)
    )
