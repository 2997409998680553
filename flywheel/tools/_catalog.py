"""The catalog: every source about a project's tools merged into one decision per field.

Per field, the strongest source that decided it wins: the manifest (the
user's override), then an observed state change (effect only: a tool whose
call changed state is a write whatever its name, its annotations or the
agent's attributes say), then the agent's ``flywheel.tool.*`` span
attributes, then MCP annotations, then
inference from the definition (name, description, schema). A call refines
its tool's semantics with its action or HTTP-method argument
(``refine_for_call``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from ._declared import Declaration, ToolDeclarationError, annotation_decisions, attribute_declaration
from ._infer import infer, refine_for_call
from ._model import FIELDS, Decision, ToolDefinition, ToolSemantics


@dataclass(frozen=True)
class ToolObservation:
    """What a recorded environment showed about a tool's calls."""

    tool: str
    changed_state: bool
    evidence: str = ""
    count: int = 1


class ToolCatalog:
    """Tool semantics for one project: manifest, observations, definitions seen on spans."""

    def __init__(
        self,
        *,
        manifest: Mapping[str, Declaration] | None = None,
        observations: Iterable[ToolObservation] = (),
        definitions: Iterable[ToolDefinition] = (),
    ) -> None:
        self.manifest: dict[str, Declaration] = dict(manifest or {})
        self.observed: dict[str, ToolObservation] = {}
        for o in observations:
            prev = self.observed.get(o.tool)
            if prev is None or (o.changed_state and not prev.changed_state):
                self.observed[o.tool] = o
        self.definitions: dict[str, ToolDefinition] = {}
        self.attributes: dict[str, Declaration] = {}
        self.problems: dict[str, list[str]] = {}
        self.unreadable_definitions = 0
        self._cache: dict[str, ToolSemantics] = {}
        for d in definitions:
            self.add_definition(d)

    # -- feeding ------------------------------------------------------------
    def add_definition(self, definition: ToolDefinition) -> None:
        """A definition seen on a span; a richer one (description, schema) replaces a poorer."""
        prev = self.definitions.get(definition.name)
        if prev is None or _richness(definition) > _richness(prev):
            merged = definition
            if prev is not None and definition.annotations is None:
                merged = replace(definition, annotations=prev.annotations)
            self.definitions[definition.name] = merged
            self._cache.pop(definition.name, None)
        elif definition.annotations is not None and prev.annotations is None:
            self.definitions[definition.name] = replace(prev, annotations=definition.annotations)
            self._cache.pop(definition.name, None)

    def add_attributes(self, tool: str, attributes: Mapping[str, Any]) -> None:
        """``flywheel.tool.*`` attributes of a tool span; a malformed one is kept as a problem."""
        try:
            decl = attribute_declaration(tool, attributes)
        except ToolDeclarationError as exc:
            self._problem(tool, str(exc))
            return
        if decl.decisions:
            self.attributes[tool] = decl
            self._cache.pop(tool, None)

    def _problem(self, tool: str, text: str) -> None:
        if text not in self.problems.setdefault(tool, []):
            self.problems[tool].append(text)
        self._cache.pop(tool, None)

    # -- asking ---------------------------------------------------------------
    def names(self) -> list[str]:
        """Every tool the catalog knows of, sorted."""
        return sorted({*self.manifest, *self.observed, *self.definitions, *self.attributes})

    def semantics(self, name: str) -> ToolSemantics:
        """The merged semantics of tool ``name`` (see module docstring)."""
        if name not in self._cache:
            self._cache[name] = self._resolve(name)
        return self._cache[name]

    def for_call(self, name: str, args: Any = None) -> ToolSemantics:
        """The semantics of one call of ``name`` with ``args`` (action arguments refine it)."""
        return refine_for_call(self.semantics(name), args) if args else self.semantics(name)

    def _resolve(self, name: str) -> ToolSemantics:
        manifest = self.manifest.get(name)
        definition = (manifest.definition if manifest else None) or self.definitions.get(
            name, ToolDefinition(name)
        )
        if manifest and not (definition.description or definition.parameters):
            seen = self.definitions.get(name)
            if seen is not None:
                definition = replace(seen, annotations=definition.annotations or seen.annotations)
        sem = infer(definition)
        problems = list(self.problems.get(name, ()))
        ignored: tuple[str, ...] = ()
        try:
            annotated, ignored = annotation_decisions(name, definition.annotations)
        except ToolDeclarationError as exc:
            annotated = {}
            problems.append(str(exc))
        layers: list[dict[str, Decision]] = [annotated]
        if name in self.attributes:
            layers.append(self.attributes[name].decisions)
        obs = self.observed.get(name)
        if obs is not None and obs.changed_state:
            declared = {**annotated, **layers[-1]}
            layers.append({"effect": _observed_effect(sem, declared, obs)})
        if manifest is not None:
            layers.append(manifest.decisions)
            ignored = ignored or manifest.ignored_keys
        for layer in layers:
            for field_name in FIELDS:
                if field_name in layer:
                    sem = sem.with_decision(field_name, layer[field_name])
        if sem.read_only and not sem.reversible.value:
            sem = sem.with_decision("reversible", Decision(True, sem.effect.source,
                                                           "reads change nothing", sem.effect.confidence))
        return replace(sem, problems=tuple(problems), ignored_keys=ignored)


def _observed_effect(
    sem: ToolSemantics, annotated: Mapping[str, Decision], obs: ToolObservation
) -> Decision:
    current = annotated.get("effect", sem.effect)
    value = current.value if current.value != "read" else "additive"
    why = f"observed: {obs.count} call(s) changed state" + (f" ({obs.evidence})" if obs.evidence else "")
    if current.value == "read":
        why += f"; overrides {current.origin}"
    return Decision(value, "observed", why, 0.9)


def _richness(d: ToolDefinition) -> int:
    return (2 if d.parameters else 0) + (1 if d.description else 0) + (1 if d.annotations else 0)
