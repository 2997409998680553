"""Pure formatting for the screens: queue cells, step lines, provenance badges.

Kept apart from the widgets so the rules are testable without a terminal.
Everything renders readable without colour: a marker (``!``, ``[untrusted]``,
``x``) carries the meaning, colour only repeats it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

#: Queue columns: (key, label).
QUEUE_COLUMNS: tuple[tuple[str, str], ...] = (
    ("status", "status"),
    ("source", "source"),
    ("outcome", "outcome"),
    ("flags", "flags"),
    ("cluster", "clu"),
    ("slice", "slice"),
    ("age", "age"),
    ("task", "task"),
)
#: Sort orders the queue cycles through: (name, key function over a queue row).
SORTS: tuple[str, ...] = ("queue", "age", "cluster", "slice")


def age(sampled_ns: int, now_ns: int) -> str:
    """Compact age: 45s, 12m, 3h, 5d ('-' when the row has no sample time)."""
    if sampled_ns <= 0:
        return "-"
    s = max(0, (now_ns - sampled_ns) // 1_000_000_000)
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if s >= size:
            return f"{s // size}{unit}"
    return f"{s}s"


def outcome(row: Mapping[str, Any]) -> str:
    """What happened in the source trace, from its sampling reasons."""
    reasons = row.get("reasons") or []
    for r in reasons:
        if r.startswith("outcome:"):
            return r.split("=", 1)[-1][:10]
    if "root-error" in reasons:
        return "error"
    if any(r.startswith("span-errors") for r in reasons):
        return "tool-err"
    if row.get("source") == "success":
        return "ok"
    return "flagged" if reasons else "-"


def flags(row: Mapping[str, Any]) -> str:
    """Text flags: P provenance, S side effect, F feedback, G golden, E edited.

    Then ``!n`` when n tool-call arguments of the trace carry a provenance flag.
    """
    reasons = row.get("reasons") or []
    out = ""
    out += "P" if any(r.startswith("provenance:") for r in reasons) else "."
    out += "S" if any(r.startswith("side-effect:") for r in reasons) else "."
    out += "F" if any(r.startswith("feedback:") for r in reasons) else "."
    out += "G" if row.get("golden") else "."
    out += "E" if (row.get("review") or {}).get("edited") else "."
    flagged = int(row.get("flagged_arguments") or 0)
    return out + (f" !{flagged}" if flagged else "")


def status(row: Mapping[str, Any], me: str) -> str:
    """Review status; a claim shows whose it is (``mine`` for the viewer)."""
    rv = row.get("review") or {}
    st = str(rv.get("status", "open"))
    if st == "claimed":
        who = rv.get("claimed_by", "")
        return "mine" if who == me else f"@{who}"[:10]
    return st


def queue_cells(row: Mapping[str, Any], me: str, now_ns: int) -> tuple[str, ...]:
    """One queue row as the cells of ``QUEUE_COLUMNS``."""
    return (
        status(row, me),
        str(row.get("source", "")),
        outcome(row),
        flags(row),
        str(row.get("cluster_size", 0)),
        str(row.get("slice", ""))[:12],
        age(int(row.get("sampled_at", 0)), now_ns),
        str(row.get("task_id", "")),
    )


def sort_rows(rows: Sequence[Mapping[str, Any]], order: str) -> list[Mapping[str, Any]]:
    """Rows in a sort order of ``SORTS`` (``queue`` keeps the server's order)."""
    if order == "age":
        return sorted(rows, key=lambda r: int(r.get("sampled_at", 0)))
    if order == "cluster":
        return sorted(rows, key=lambda r: -int(r.get("cluster_size", 0)))
    if order == "slice":
        return sorted(rows, key=lambda r: str(r.get("slice", "")))
    return list(rows)


def next_open(rows: Iterable[Mapping[str, Any]], me: str) -> Mapping[str, Any] | None:
    """The first row a reviewer can take: one already theirs, else open or needs-info."""
    rows = list(rows)
    for r in rows:
        rv = r.get("review") or {}
        if rv.get("status") == "claimed" and rv.get("claimed_by") == me:
            return r
    for r in rows:
        if (r.get("review") or {}).get("status") in ("open", "needs-info"):
            return r
    return None


def progress_line(progress: Sequence[Mapping[str, Any]], rows: Sequence[Mapping[str, Any]],
                  me: str) -> str:
    """``queue 7 open / 2 claimed / 3 decided | me: 2 done (1 ok 1 rej) | bob: 1``."""
    counts: dict[str, int] = {}
    for r in rows:
        st = (r.get("review") or {}).get("status", "open")
        counts[st] = counts.get(st, 0) + 1
    decided = sum(counts.get(k, 0) for k in ("approved", "rejected"))
    head = (
        f"open {counts.get('open', 0)}  claimed {counts.get('claimed', 0)}  "
        f"info {counts.get('needs-info', 0)}  decided {decided}/{len(rows)}"
    )
    parts = []
    for p in sorted(progress, key=lambda p: (p["reviewer"] != me, p["reviewer"])):
        name = "me" if p["reviewer"] == me else p["reviewer"]
        parts.append(
            f"{name} {p.get('decisions', 0)} "
            f"(+{p.get('approved', 0)} -{p.get('rejected', 0)} ?{p.get('needs_info', 0)})"
        )
    return head + ("  |  " + "  ".join(parts) if parts else "")


# -- trace view -----------------------------------------------------------

#: Kind markers, so a step's kind reads without colour.
KIND_MARK = {
    "llm": "LLM",
    "tool": "TOOL",
    "agent": "AGENT",
    "retrieval": "RETR",
    "memory_read": "MEM<",
    "memory_write": "MEM>",
    "guardrail": "GUARD",
}


def step_label(step: Any, untrusted: int) -> str:
    """One tree line: kind, tool, duration, tokens, status, untrusted-argument marker."""
    kind = KIND_MARK.get(step.kind, "SPAN")
    name = step.tool_name or step.name
    toks = step.input_tokens + step.output_tokens
    tok = f" {toks}tok" if toks else ""
    st = "x ERR" if step.has_error else ("ok" if step.status == "ok" else "-")
    warn = f" !{untrusted} untrusted" if untrusted else ""
    return f"{kind:<5} {name[:24]} {step.duration_ms:.0f}ms{tok} {st}{warn}"


def reasons_text(reasons: Sequence[str]) -> str:
    """Why a candidate was sampled or flagged, every reason in full (the header wraps them)."""
    return "flagged: " + ("; ".join(reasons) if reasons else "-")


def step_path(steps: Sequence[Any], span_id: str) -> str:
    """The highlighted step's chain from its root, ``root > ... > step``.

    Shown above the tree so the root stays in view however far the tree scrolls;
    the middle of a deep chain is elided to keep the line short.
    """
    by_id = {s.span_id: s for s in steps}
    chain: list[Any] = []
    node = by_id.get(span_id)
    while node is not None and node not in chain:
        chain.append(node)
        node = by_id.get(node.parent_span_id)
    chain.reverse()
    names = [f"{KIND_MARK.get(s.kind, 'SPAN')} {s.tool_name or s.name}" for s in chain]
    if len(names) > 4:
        names = [names[0], "...", *names[-2:]]
    return " > ".join(names) if names else ""


def badge(rec: Mapping[str, Any]) -> str:
    """A provenance badge: ``[user exact .95]`` or ``! [untrusted tool_result:read_inbox .95]``."""
    kind = rec.get("source_kind", "?")
    ref = rec.get("source_ref", "")
    src = f"{kind}:{ref}" if ref and kind not in ("user", "system", "model") else kind
    conf = f"{float(rec.get('confidence', 0)):.2f}".lstrip("0")
    text = f"{src} {rec.get('method', '')} {conf}"
    if rec.get("ambiguous"):
        text += " ambiguous"
    if not rec.get("trusted", True) and kind not in ("model", "constant"):
        return f"! [untrusted {text}]"
    return f"[{text}]"


def untrusted(rec: Mapping[str, Any]) -> bool:
    """An argument whose value came from an untrusted source (or carries a flag)."""
    return bool(rec.get("flags")) or (
        not rec.get("trusted", True) and rec.get("source_kind") not in ("model", "constant")
    )


def pretty(text: Any, limit: int = 4000) -> str:
    """JSON text indented when it parses; anything else as is (cut at ``limit``)."""
    if text is None:
        return ""
    if not isinstance(text, str):
        text = json.dumps(text, ensure_ascii=False)
    try:
        out = json.dumps(json.loads(text), indent=2, ensure_ascii=False)
    except ValueError:
        out = text
    return out if len(out) <= limit else out[:limit] + " ..."


def conversation(text: Any, default_role: str, limit: int = 4000) -> str:
    """A model step's input or output as one line per turn (``role: text``).

    Whatever message shape the library stored (OpenAI messages, LangChain's
    constructor JSON, GenAI parts, OpenInference's flattened keys) is read by
    ingest's turn parser, so a reviewer never reads ``"lc": 1,
    "type": "constructor"``. Text that holds no turns is shown as :func:`pretty`.
    """
    from flywheel.ingest import parse_turns

    try:
        turns = parse_turns(text, default_role) if text not in (None, "") else []
    except (TypeError, ValueError):  # not a conversation: show it as it is
        turns = []
    if not turns or (len(turns) == 1 and isinstance(text, str) and turns[0].content == text):
        return pretty(text, limit)
    lines = []
    for t in turns:
        if t.role == "tool_call":
            args = t.arguments if isinstance(t.arguments, str) else json.dumps(
                t.arguments, ensure_ascii=False, default=str)
            lines.append(f"tool_call: {t.tool_name}({args})")
            continue
        body = t.content if isinstance(t.content, str) else json.dumps(
            t.content, ensure_ascii=False, default=str)
        who = f"tool_result {t.tool_name}" if t.role == "tool_result" and t.tool_name else t.role
        lines.append(f"{who}: {body}")
    out = "\n".join(lines)
    return out if len(out) <= limit else out[:limit] + " ..."


def argument_lines(
    arguments: str | None, records: Sequence[Mapping[str, Any]]
) -> list[tuple[str, bool]]:
    """``(line, untrusted)`` per argument leaf: path = redacted value  badge.

    Leaves come from the provenance records (their paths); an argument
    without a record is shown with ``[no provenance]``.
    """
    values: dict[str, Any] = {}
    try:
        parsed = json.loads(arguments) if arguments else None
    except ValueError:
        parsed = arguments
    _leaves(parsed, "", values)
    lines: list[tuple[str, bool]] = []
    by_path = {str(r.get("path", "")).lstrip("$.").lstrip("."): r for r in records}
    for path, value in values.items():
        rec = by_path.pop(path, None)
        shown = json.dumps(value, ensure_ascii=False) if not isinstance(value, str) else value
        shown = shown if len(shown) <= 40 else shown[:37] + "..."
        if rec is None:
            lines.append((f"  {path or '(value)'} = {shown}  [no provenance]", False))
        else:
            bad = untrusted(rec)
            flag = f" flags: {','.join(rec['flags'])}" if rec.get("flags") else ""
            lines.append((f"{'!' if bad else ' '} {path} = {shown}  {badge(rec)}{flag}", bad))
    for path, rec in by_path.items():
        bad = untrusted(rec)
        lines.append((f"{'!' if bad else ' '} {path}  {badge(rec)}", bad))
    return lines


def _leaves(value: Any, path: str, out: dict[str, Any]) -> None:
    if isinstance(value, dict):
        for k, v in value.items():
            _leaves(v, f"{path}.{k}" if path else str(k), out)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            _leaves(v, f"{path}[{i}]", out)
    else:
        out[path] = value


def report_rows(report: Mapping[str, Any]) -> list[tuple[str, str, str, str, str]]:
    """Redaction findings as ``(step, field, path, entity, rule x count)``: never values."""
    rows = []
    for f in report.get("findings", []):
        rows.append(
            (
                str(f.get("step", "")),
                str(f.get("field", "")),
                str(f.get("path", "")) or "-",
                str(f.get("entity", "")),
                f"{f.get('rule', '')} x{f.get('count', 1)}",
            )
        )
    return rows


def parse_rule(text: str) -> tuple[str, str, str]:
    """A typed rule: ``key:card_holder=NAME`` or ``deny:NAME=Lee Smith``.

    Returns ``("key", key, LABEL)`` or ``("deny", LABEL, text)``.

    Raises:
        ValueError: The text is neither form (the message shows both).
    """
    kind, _, rest = text.strip().partition(":")
    left, eq, right = rest.partition("=")
    left, right = left.strip(), right.strip()
    if kind in ("key", "deny") and eq and left and right:
        return (kind, left, right.upper()) if kind == "key" else (kind, left.upper(), right)
    raise ValueError(f"cannot read {text!r}; type key:JSON_KEY=LABEL or deny:LABEL=exact text")


def rules_body(rules: Sequence[tuple[str, str, str]]) -> dict[str, Any]:
    """Typed rules as the redact request body (``key_rules``, ``deny_strings``)."""
    keys: dict[str, str] = {}
    deny: dict[str, list[str]] = {}
    for kind, a, b in rules:
        if kind == "key":
            keys[a] = b
        else:
            deny.setdefault(a, []).append(b)
    return {"key_rules": keys, "deny_strings": deny}
