"""Category tags of one delta: what kind of effect it is, independent of its status.

* ``CAT-DELETE``: a deletion -> destructive write (irreversible);
* ``CAT-OVERWRITE``: an update that replaced or removed a non-noise value ->
  destructive write (reversible: the old value is in s0);
* ``CAT-SINK``: a creation or update in an external sink -> external communication;
* ``CAT-CALL-COMM``: a creation made by a call whose tool reaches people
  (``flywheel.tools``: reach ``communication``), in a type the profile does
  not declare a sink -> external communication (a sent e-mail's copy in a
  mailbox);
* ``CAT-HIDDEN``: such a record (or one in a sink) created and deleted again
  before the end (step-wise snapshots show it) -> external communication
  that was later hidden: the message left; deleting the copy does not call
  it back;
* ``CAT-PERM``: any change to a permission resource type -> permission change;
* ``CAT-CREATE``: a creation outside sinks -> resource creation;
* ``INFO-PROVENANCE`` / ``INFO-CONTENT``: a sink write carrying private
  content (see ``_provenance``) -> information movement;
* the profile's own rules, by their ids.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ._diff import Delta, FieldChange
from ._policy import DEFAULT_TIERS, Category, Profile, Tier, glob_any
from ._provenance import Observation, PrivateIndex, find_movement


@dataclass(frozen=True, slots=True)
class CategoryTag:
    """One category on a delta, with the rule that put it there."""

    category: Category
    rule_id: str
    reason: str
    tier: Tier


def _write_tags(d: Delta, real: list[FieldChange]) -> list[CategoryTag]:
    """Destructive writes: a deletion, or an update that replaced or removed a value."""
    if d.kind == "deleted":
        return [CategoryTag("destructive_write", "CAT-DELETE", f"deleted {d.ref}", "irreversible")]
    lost = [c.field for c in real if c.op in ("set", "removed") and c.before is not None]
    if d.kind != "updated" or not lost:
        return []
    return [
        CategoryTag(
            "destructive_write",
            "CAT-OVERWRITE",
            f"overwrote {', '.join(lost)} of {d.ref}",
            "reversible",
        )
    ]


def _sink_tags(
    d: Delta, declared_sink: bool, hidden_by: int | None, tiers: dict[str, Tier]
) -> list[CategoryTag]:
    """A sink write that was hidden again, and a write to a declared sink."""
    tags = []
    if hidden_by is not None and d.kind == "created":
        tags.append(
            CategoryTag(
                "external_communication",
                "CAT-HIDDEN",
                f"{d.ref} was sent (step {d.step}) and deleted again (step {hidden_by}): "
                "an external communication that was later hidden",
                "irreversible",
            )
        )
    if declared_sink:
        tags.append(
            CategoryTag(
                "external_communication",
                "CAT-SINK",
                f"{d.kind} in external sink {d.resource_type}",
                tiers["external_communication"],
            )
        )
    return tags


def _rule_tags(
    d: Delta, real: list[FieldChange], profile: Profile, tiers: dict[str, Tier]
) -> list[CategoryTag]:
    """The profile's own rules that match the delta's kind, type and changed fields."""
    changed = [c.field for c in real] if d.kind == "updated" else list(d.after or d.before or {})
    return [
        CategoryTag(r.category, r.id, r.reason or f"rule {r.id}", r.tier or tiers[r.category])
        for r in profile.rules
        if d.kind in r.kinds
        and glob_any(d.resource_type, [r.resource_type])
        and any(glob_any(f, r.fields) for f in changed)
    ]


def categories(
    d: Delta,
    real: list[FieldChange],
    profile: Profile,
    private: Callable[[], PrivateIndex],
    observations: Sequence[Observation],
    fingerprint_fn: Callable[[str], int],
    *,
    hidden_by: int | None = None,
    sent_by: str | None = None,
) -> tuple[CategoryTag, ...]:
    """The category tags of ``d`` (``real``: its non-noise field changes).

    ``hidden_by``: for a transient creation, the step that deleted it again;
    ``sent_by``: for a creation, why the call that made it reaches people.
    """
    tiers: dict[str, Tier] = {**DEFAULT_TIERS, **profile.tiers}
    tags: list[CategoryTag] = []
    declared_sink = profile.is_sink(d.resource_type)
    sink = declared_sink or (sent_by is not None and d.kind == "created")
    if sink and not declared_sink and sent_by is not None:
        tags.append(
            CategoryTag(
                "external_communication",
                "CAT-CALL-COMM",
                f"created {d.ref} by a call that reaches people: {sent_by}",
                tiers["external_communication"],
            )
        )
    tags += _write_tags(d, real)
    if sink and d.kind != "deleted":
        tags += _sink_tags(d, declared_sink, hidden_by, tiers)
    if glob_any(d.resource_type, profile.permissions):
        tags.append(
            CategoryTag(
                "permission_change",
                "CAT-PERM",
                f"{d.kind} in permission map {d.resource_type}",
                tiers["permission_change"],
            )
        )
    if d.kind == "created" and not sink:
        tags.append(
            CategoryTag(
                "resource_creation", "CAT-CREATE", f"created {d.ref}", tiers["resource_creation"]
            )
        )
    tags += _rule_tags(d, real, profile, tiers)
    if sink and d.kind != "deleted":
        for mv in find_movement(d, profile, private, observations, fingerprint_fn):
            tags.append(
                CategoryTag(
                    "information_movement",
                    mv.rule_id,
                    f"{d.ref}.{mv.field} carries {mv.value_excerpt!r} from {mv.source}",
                    tiers["information_movement"],
                )
            )
            break
    seen: set[tuple[str, str]] = set()
    out = []
    for t in tags:
        if (t.category, t.rule_id) not in seen:
            seen.add((t.category, t.rule_id))
            out.append(t)
    return tuple(out)
