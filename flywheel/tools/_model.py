"""What a tool does, each decision with the source that made it.

A ``ToolSemantics`` holds five decisions about one tool -- effect, reach,
touches, reversibility, idempotence -- each a ``Decision`` naming its source
(strongest first):

========= ============================================================ =====
source    what made it                                                 conf.
========= ============================================================ =====
declared  the project's tool manifest (a user's override, 1.0), an     0.8-1
          agent's ``flywheel.tool.*`` span attributes (0.9), MCP tool
          annotations from the tool's server (hints: 0.8, MCP defaults
          for hints left out: 0.6)
observed  a call changed state in a recorded environment: a write,     0.9
          whatever the name says
inferred  the name's verb (0.7), an action-like argument of the call   0.3-0.7
          (0.7), an HTTP method (0.8), the description (0.5),
          parameter names and formats (0.5)
default   nothing said: the cautious side (a write that may reach      0.3
          anything), since a lower-confidence flag beats silence
========= ============================================================ =====
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from typing import Any

from ._vocabulary import EFFECTS, REACHES, TOUCHES

SOURCES = ("declared", "observed", "inferred", "default")
FIELDS = ("effect", "reach", "touches", "reversible", "idempotent")
Tier = str  # "read-only" | "reversible" | "irreversible"


@dataclass(frozen=True)
class Decision:
    """One decision about a tool: its value, which source made it, why, how sure."""

    value: Any
    source: str
    origin: str
    confidence: float

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form (touches as a sorted list)."""
        value = sorted(self.value) if isinstance(self.value, frozenset) else self.value
        return {**asdict(self), "value": value}


@dataclass(frozen=True)
class ToolSemantics:
    """Effect, reach, touches, reversibility and idempotence of one tool (or one call)."""

    name: str
    effect: Decision
    reach: Decision
    touches: Decision
    reversible: Decision
    idempotent: Decision
    #: Problems met while reading declarations for this tool (one line each).
    problems: tuple[str, ...] = ()
    #: Annotation keys that were not understood and were ignored.
    ignored_keys: tuple[str, ...] = ()
    #: The verb that decided the effect (the name's, the description's or an action
    #: argument's), in dictionary form; "" when none did.
    verb: str = ""

    @property
    def writes(self) -> bool:
        """Whether a call can change state (additive or destructive)."""
        return self.effect.value != "read"

    @property
    def read_only(self) -> bool:
        """Whether calls only read."""
        return not self.writes

    @property
    def open_world(self) -> bool:
        """Whether calls reach beyond the tool's own world (network, people)."""
        return self.reach.value != "closed"

    @property
    def egress(self) -> bool:
        """Whether calls contact a network address (the address is a payload)."""
        return self.reach.value == "egress"

    @property
    def sensitive(self) -> bool:
        """Whether a call can be steered to harm: every write (cautious by default)."""
        return self.writes

    @property
    def sensitivity_confidence(self) -> float:
        """How sure the sensitivity is: the effect's confidence, raised by what is at stake."""
        if not self.writes:
            return self.effect.confidence
        stakes = bool(self.touches.value) or self.open_world or not self.reversible.value
        return round(min(1.0, self.effect.confidence + (0.2 if stakes else 0.0)), 3)

    @property
    def tier(self) -> Tier:
        """Reversibility tier: ``read-only``, ``reversible`` or ``irreversible``."""
        if self.read_only:
            return "read-only"
        return "reversible" if self.reversible.value else "irreversible"

    def with_decision(self, name: str, decision: Decision) -> ToolSemantics:
        """A copy with one decision replaced."""
        return replace(self, **{name: decision})

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form: each decision with its source, plus derived flags."""
        return {
            "name": self.name,
            **{f: getattr(self, f).as_dict() for f in FIELDS},
            "writes": self.writes,
            "open_world": self.open_world,
            "sensitive": self.sensitive,
            "tier": self.tier,
            "verb": self.verb,
            "problems": list(self.problems),
            "ignored_keys": list(self.ignored_keys),
        }


def check_value(field_name: str, value: Any) -> Any:
    """A decision value checked against its field's domain; ValueError names the fix."""
    if field_name == "effect":
        if value not in EFFECTS:
            raise ValueError(f"must be one of {', '.join(EFFECTS)}, got {value!r}")
        return value
    if field_name == "reach":
        if value not in REACHES:
            raise ValueError(f"must be one of {', '.join(REACHES)}, got {value!r}")
        return value
    if field_name == "touches":
        items = [value] if isinstance(value, str) else value
        if not isinstance(items, list | tuple | set | frozenset) or any(
            t not in TOUCHES for t in items
        ):
            raise ValueError(f"must be a list of {', '.join(TOUCHES)}, got {value!r}")
        return frozenset(items)
    if field_name in ("reversible", "idempotent"):
        if isinstance(value, str) and value.lower() in ("true", "false"):
            return value.lower() == "true"
        if not isinstance(value, bool):
            raise ValueError(f"must be true or false, got {value!r}")
        return value
    raise ValueError(f"unknown field; use one of {', '.join(FIELDS)}")


@dataclass(frozen=True)
class ToolDefinition:
    """What a trace, an MCP server or a manifest says about a tool before any decision.

    ``parameters`` is the JSON schema of the arguments; ``annotations`` the MCP
    tool annotations object (``readOnlyHint``...); ``origin`` where the
    definition was read (``gen_ai.tool.definitions``, ``mcp tools/list``...).
    """

    name: str
    description: str = ""
    parameters: Any = None
    annotations: Any = None
    origin: str = ""
