"""Benchmark: redaction recall and decoy survival through the whole pipeline (issue 20).

Usage:
    python bench/redaction_quality.py                  # the frozen corpus (the reported figures)
    python bench/redaction_quality.py --corpus dev     # the tuning corpus
    python bench/redaction_quality.py --corpus holdout2  # the second hand-written corpus
                                                       # (its untuned run: holdout2.independent.txt)
    python bench/redaction_quality.py --corpus holdout3  # the third hand-written corpus
                                                       # (its untuned run: holdout3.independent.txt)
    python bench/redaction_quality.py --corpus holdout4  # the fourth hand-written corpus
                                                       # (its untuned run: holdout4.independent.txt)
    python bench/redaction_quality.py --corpus holdout5  # the fifth hand-written corpus
                                                       # (its untuned run: holdout5.independent.txt)
    python bench/redaction_quality.py --corpus holdout6  # the sixth hand-written corpus
                                                       # (its untuned run: holdout6.independent.txt)
    python bench/redaction_quality.py --corpus holdout7  # the seventh hand-written corpus
                                                       # (its untuned run: holdout7.independent.txt)
    python bench/redaction_quality.py --corpus holdout8  # the eighth hand-written corpus (its untuned
                                                       # run: holdout8.before-round8.txt); half A is
                                                       # development data, half B stays blind:
    python bench/redaction_quality.py --corpus holdout8 --parts --misses  # half A's misses only
    python bench/redaction_quality.py --corpus holdout9  # the ninth hand-written corpus
                                                       # (first run: holdout9.independent.txt;
                                                       # misses never read: keep it blind)
    python bench/redaction_quality.py --corpus holdout10  # the tenth hand-written corpus
                                                       # (committed before any detector ran on it;
                                                       # its first run is the independent figure)
    python bench/redaction_quality.py --json

Pipeline, on a fresh chDB store: the corpus's OTLP/JSON file ->
``flywheel.ingest.import_otlp_json`` -> ``promote`` sample (every trace),
dedupe, redact, draft -> review over the REST API (claim, approve; every
candidate and queue response kept) -> ``evalset release`` -> ``export`` ->
scan. When the release scanner refuses, the bench counts the findings, then
records an exception for each (as a reviewer who waved everything through
would) and releases, so the figures for the released task measure redaction
alone.

Scoring (independent of the product's detectors): a planted value leaks when
one of its ``parts`` (see bench/redaction_corpus/README.md) occurs in an
output string, after this file's own JSON-in-string, base64 and
percent-decoding. "All fields" = the review API's candidate responses (the
redacted steps, the draft, the report) and the queue; "released task" = the
exported bundle, over the planted values that a draft of the *unredacted*
trace would have carried (what could reach a task at all). A decoy survives
when it still occurs verbatim in the candidate response. Intervals: Wilson
95 % (``flywheel.evalset.stats.wilson_interval``, checked against
statsmodels when installed). The values in the released bundle are split
into those at a path the release scanner refused (released only because this
bench records an exception for every refusal, as a reviewer who waved
everything through would) and those the scanner did not see. Exit 1 when a
type's recall or decoy survival is below 0.95 or the released bundle holds any
planted value (excepted or not: the bench's reviewer excepts blindly).
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import binascii
import json
import os
import platform
import re
import shutil
import sys
import tempfile
import time
import urllib.parse
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

CORPUS = Path(__file__).resolve().parent / "redaction_corpus"
TARGET = 0.95
# Corpora whose misses may be read (each has had its one independent run, or never was independent).
DEVELOPMENT = ("dev", "frozen", "holdout2", "holdout3", "holdout4", "holdout5", "holdout6", "holdout7")
# Corpora whose half A (see part_of) is development data and whose half B stays blind: their
# misses are listed for half A only, with --parts, and never in --json.
HALF_DEVELOPMENT = ("holdout8",)


def part_of(labels: dict[str, Any], part: str) -> set[str]:
    """Trace ids of one half of a corpus, for tuning on one half and checking on the other:
    English traces alternate in corpus order; the other languages alternate in sorted order,
    so half B's languages are never seen while tuning on half A."""
    langs = sorted({lab["lang"].split("-")[0] for lab in labels.values()} - {"en"})
    nn = {"nn": "nb"}  # Nynorsk with Bokmål: one language for the split
    a_langs = {lg for k, lg in enumerate(x for x in langs if x not in nn) if k % 2 == 0}
    out, en = set(), 0
    for tid, lab in labels.items():
        lg = lab["lang"].split("-")[0]
        lg = nn.get(lg, lg)
        if lg == "en":
            side = "A" if en % 2 == 0 else "B"
            en += 1
        else:
            side = "A" if lg in a_langs else "B"
        if side == part:
            out.add(tid)
    return out

# -- the bench's own decoder (not the product's) ------------------------------
_B64 = re.compile(r"[A-Za-z0-9+/_\-]{16,}={0,2}")


def _b64_texts(s: str) -> list[str]:
    out = []
    for m in _B64.finditer(s):
        tok = m.group()
        for part in [tok, *tok.split(".")] if "." in s[m.start() : m.end() + 1] else [tok]:
            pad = part + "=" * (-len(part) % 4)
            for dec in (base64.b64decode, base64.urlsafe_b64decode):
                try:
                    raw = dec(pad)
                    text = raw.decode("utf-8")
                except (binascii.Error, ValueError, UnicodeDecodeError):
                    continue
                if text and sum(c.isprintable() or c in "\n\r\t" for c in text) / len(text) > 0.9:
                    out.append(text)
                break
    # JWT-like: split on dots and decode each segment
    for tok in re.findall(r"[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}(?:\.[A-Za-z0-9_\-]*)?", s):
        for seg in tok.split("."):
            try:
                text = base64.urlsafe_b64decode(seg + "=" * (-len(seg) % 4)).decode("utf-8")
            except (binascii.Error, ValueError, UnicodeDecodeError):
                continue
            if text and text.isprintable():
                out.append(text)
    return out


def haystack(node: Any, depth: int = 0) -> list[str]:
    """Every string in ``node``, plus decoded forms (JSON in strings, base64, %-encoding)."""
    out: list[str] = []
    if isinstance(node, str):
        out.append(node)
        if depth >= 4:
            return out
        if node.lstrip()[:1] in ("{", "[", '"'):
            try:
                out += haystack(json.loads(node), depth + 1)
            except ValueError:
                pass
        if "%" in node or "+" in node:
            dec = urllib.parse.unquote_plus(node)
            if dec != node:
                out += haystack(dec, depth + 1)
        for text in _b64_texts(node):
            out += haystack(text, depth + 1)
    elif isinstance(node, dict):
        for k, v in node.items():
            out += haystack(k, depth) + haystack(v, depth)
    elif isinstance(node, (list, tuple)):
        for v in node:
            out += haystack(v, depth)
    elif node is not None:
        out.append(str(node))
    return out


def leaked(planted: dict[str, Any], texts: str) -> bool:
    """Any part of the planted value in the joined texts (names: whole words only; a part
    made of digits alone: not inside a longer run of letters and digits, where a year or a
    postcode turns up by chance in a SHA-256 or an id the pipeline wrote)."""
    for part in planted["parts"]:
        if planted["type"] == "EMAIL":
            if part.casefold() in texts.casefold():
                return True
        elif planted["type"] in ("NAME", "ADDRESS"):
            if re.search(rf"(?<!\w){re.escape(part)}(?!\w)", texts):
                return True
        elif part.isdigit():
            if re.search(rf"(?<![0-9A-Za-z]){part}(?![0-9A-Za-z])", texts):
                return True
        elif part in texts:
            return True
    return False


# -- the pipeline ---------------------------------------------------------------
def _client(store: Any) -> Any:
    import httpx

    from flywheel import Settings, create_app, create_key

    app = create_app(Settings(), store)
    key = create_key(store, "default", ["read", "review"], name="bench-reviewer")
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://bench",
                             headers={"authorization": f"Bearer {key}"})


async def _review_all(store: Any, evalset: str) -> tuple[dict[str, Any], list[Any]]:
    """Claim and approve every drafted candidate; return candidate responses by trace and queue pages."""
    responses: dict[str, Any] = {}
    pages: list[Any] = []
    h: dict[str, str] = {}  # the client's review key names the reviewer
    async with _client(store) as client:
        page = (await client.get("/api/promote/queue", params={"limit": 1000})).json()
        pages.append(page)
        items = page if isinstance(page, list) else page.get("items", [])
        for item in items:
            cid = item["candidate_id"]
            detail = (await client.get(f"/api/promote/candidates/{cid}")).json()
            responses[detail["candidate"]["trace_id"] if "candidate" in detail else item["trace_id"]] = detail
            v = detail["review"]["version"]
            r = await client.post(f"/api/promote/candidates/{cid}/claim", json={"base_version": v}, headers=h)
            r.raise_for_status()
            r = await client.post(
                f"/api/promote/candidates/{cid}/decision",
                json={"base_version": r.json()["version"], "decision": "approve"},
                headers=h,
            )
            if r.status_code != 200:
                print(f"approve {cid}: {r.status_code} {r.text[:200]}", file=sys.stderr)
        pages.append((await client.get("/api/promote/queue", params={"limit": 1000})).json())
    return responses, pages


def _exposed(store: Any, labels: dict[str, Any]) -> dict[str, set[int]]:
    """Per trace: indexes of planted values a draft of the unredacted trace would carry."""
    from flywheel.promote import draft_task, list_candidates, load_traces

    from flywheel.promote._candidates import steps_json  # bench only: raw steps for the reference draft

    out: dict[str, set[int]] = {}
    cands = list_candidates(store, stages=["drafted"], bodies=True)
    material = load_traces(store, [c.trace_id for c in cands], project="default")
    from dataclasses import replace

    for c in cands:
        m = material.get(c.trace_id)
        raw = replace(c, redacted_steps=steps_json(m.steps if m else []))
        raw_root = getattr(m, "root_attributes", {}) if m else {}
        try:
            task = draft_task(raw, m)
        except Exception as exc:  # noqa: BLE001 - a bench: report and go on
            print(f"reference draft of {c.trace_id}: {exc}", file=sys.stderr)
            continue
        doc = task.model_dump(mode="json")
        doc["_slice"] = raw_root.get("flywheel.slice", "")
        text = "\x00".join(haystack(doc))
        out[c.trace_id] = {
            i for i, p in enumerate(labels.get(c.trace_id, {}).get("planted", [])) if leaked(p, text)
        }
    return out


def run(corpus: str, workdir: Path, parts: tuple[str, ...] = ("",)) -> list[dict[str, Any]]:
    """The whole pipeline on one corpus; returns the figures of each part ("" = all)."""
    from flywheel.evalset import export_bundle, release_from_store
    from flywheel.ingest import import_otlp_json
    from flywheel.promote import (
        SamplingPolicy,
        dedupe_candidates,
        draft_candidates,
        redact_candidates,
        sample_candidates,
    )

    from flywheel import open_store

    labels = json.loads((CORPUS / f"{corpus}.labels.json").read_text(encoding="utf-8"))
    store = open_store(f"chdb://{workdir / 'chdb'}?database=bench_redaction")
    store.migrate()
    t0 = time.perf_counter()
    imp = import_otlp_json(store, CORPUS / f"{corpus}.otlp.jsonl")
    policy = SamplingPolicy(evalset="redaction-bench", successes={"per_slice": 1000})
    sample_candidates(store, policy)
    dedupe_candidates(store)
    redact_candidates(store, policy=policy.redaction, workers=1)
    drafted = draft_candidates(store, held_out_fraction=0.3)
    responses, pages = asyncio.run(_review_all(store, policy.evalset))
    exposed = _exposed(store, labels)
    root = workdir / "evalsets"
    refused: list[dict[str, Any]] = []
    try:
        result = release_from_store(store, root, policy.evalset, released_by="bench")
    except Exception as exc:  # the release refused (LeakError): record exceptions, retry
        findings = getattr(exc, "findings", None)
        if findings is None:
            raise
        refused = [f if isinstance(f, dict) else f.to_dict() for f in findings]
        _record_exceptions(store, refused)
        result = release_from_store(store, root, policy.evalset, released_by="bench")
    out_dir = workdir / "export"
    export_error = ""
    try:
        export_bundle(root, f"{policy.evalset}@{result.version}", out_dir)
    except Exception as exc:  # noqa: BLE001 - report the refusal, then score the release dir
        export_error = str(exc).splitlines()[0]
        out_dir = result.path
    pipeline_s = time.perf_counter() - t0
    bundle_tasks = {}
    for line in (Path(out_dir) / "tasks.jsonl").read_text(encoding="utf-8").splitlines():
        if line.strip():
            task = json.loads(line)
            bundle_tasks[task.get("source_trace_id")] = task
    manifest = json.loads((Path(out_dir) / "manifest.json").read_text(encoding="utf-8"))
    manifest_text = "\x00".join(haystack(manifest))
    queue_text = "\x00".join(haystack(pages))

    store.close()

    def score(part: str) -> dict[str, Any]:
        keep = part_of(labels, part) if part else set(labels)
        rows: dict[str, Counter[str]] = defaultdict(Counter)
        misses: dict[str, list[str]] = defaultdict(list)
        decoys = Counter()
        decoy_lost: list[str] = []
        bundle_leaks: list[str] = []
        excepted_leaks: list[str] = []  # on a path the scanner refused (then excepted)
        leaking_traces: set[str] = set()
        for trace_id, lab in labels.items():
            if trace_id not in keep:
                continue
            resp = responses.get(trace_id)
            resp_text = "\x00".join(haystack(resp)) + "\x00" + queue_text if resp else ""
            task = bundle_tasks.get(trace_id)
            task_text = ("\x00".join(haystack(task)) if task else "") + "\x00" + manifest_text
            seen: set[tuple[str, str]] = set()
            for i, p in enumerate(lab["planted"]):
                if (p["type"], p["value"]) in seen:
                    continue
                seen.add((p["type"], p["value"]))
                rows[p["type"]]["n_all"] += 1
                if resp is None:
                    rows[p["type"]]["no_candidate"] += 1
                    continue
                if leaked(p, resp_text):
                    rows[p["type"]]["leak_all"] += 1
                    misses[p["type"]].append(f"{lab['key']}: {p['value'][:40]!r}")
                if i in exposed.get(trace_id, set()):
                    rows[p["type"]]["n_task"] += 1
                    if leaked(p, task_text):
                        rows[p["type"]]["leak_task"] += 1
                        bundle_leaks.append(f"{lab['key']} {p['type']}")
                        leaking_traces.add(trace_id)
                        if _refused_here(p, task, manifest, refused):
                            excepted_leaks.append(bundle_leaks[-1])
            raw_text = resp_text
            for dv in lab["decoys"]:
                decoys["n"] += 1
                if resp is not None and dv in raw_text:
                    decoys["kept"] += 1
                else:
                    decoy_lost.append(f"{lab['key']}: {dv!r}")
        leaking_tasks = {
            bundle_tasks[tr].get("task_id") for tr in leaking_traces if tr in bundle_tasks
        }
        clean_refusals = [f for f in refused if f.get("task_id") not in leaking_tasks]
        return {
            "corpus": corpus + (f" part {part}" if part else ""),
            "traces": len(keep),
            "imported_spans": imp.spans,
            "drafted": len(drafted),
            "reviewed": len(responses),
            "pipeline_s": round(pipeline_s, 1),
            "release_refused_findings": len(refused),
            "refused_types": dict(Counter(f.get("entity", f.get("type", "?")) for f in refused)),
            "refused_rules": dict(Counter(f.get("rule", "?") for f in refused)),
            "refused_on_clean_tasks": len(clean_refusals),
            "export_error": export_error,
            "rows": {k: dict(v) for k, v in sorted(rows.items())},
            "misses": {k: v for k, v in sorted(misses.items())},
            "decoys": dict(decoys),
            "decoys_lost": decoy_lost,
            "bundle_leaks": bundle_leaks,
            "bundle_leaks_excepted": excepted_leaks,
        }

    return [score(p) for p in parts]


def _record_exceptions(store: Any, findings: list[dict[str, Any]]) -> None:
    """Record a reviewer's exception for every refused finding (worst case: all waved through)."""
    from flywheel.promote import record_leak_exception

    for f in findings:
        record_leak_exception(
            store,
            evalset="redaction-bench",
            task_id=f["task_id"],
            path=f["path"],
            entity=f["entity"],
            reviewer="bench-reviewer",
            reason="bench: measure redaction alone",
        )


def wilson(k: int, n: int) -> tuple[float, float, float]:
    """Point and Wilson 95 % interval (the product's; statsmodels cross-check when present)."""
    from flywheel.evalset.stats import wilson_interval

    iv = wilson_interval(k, n)
    lo, hi = float(iv.lo), float(iv.hi)
    try:
        from statsmodels.stats.proportion import proportion_confint

        slo, shi = proportion_confint(k, n, method="wilson")
        assert abs(slo - lo) < 1e-9 and abs(shi - hi) < 1e-9, (k, n, lo, slo)
    except ImportError:
        pass
    return (k / n if n else float("nan")), lo, hi


#: One step of a scanner path: ``.key``, ``[3]`` or ``["a key"]``.
_PATH_STEP = re.compile(r'\.([A-Za-z_]\w*)|\[(\d+)\]|\[("(?:[^"\\]|\\.)*")\]')


def _at_path(doc: Any, path: str) -> Any:
    """The part of ``doc`` a scanner finding's path names (``$.criteria[0].grader``).

    JSON held in a string is followed; the walk stops at the deepest part it can
    resolve (a decoded segment or a key marker), which is what holds the finding.
    """
    cur, pos = doc, len(path) - len(path.lstrip("$").removeprefix("manifest"))
    while pos < len(path):
        if isinstance(cur, str):
            try:
                cur = json.loads(cur)
            except ValueError:
                return cur
        m = _PATH_STEP.match(path, pos)
        if m is None:
            return cur
        key: Any = m.group(1) or (int(m.group(2)) if m.group(2) else json.loads(m.group(3)))
        try:
            cur = cur[key]
        except (KeyError, IndexError, TypeError):
            return cur
        pos = m.end()
    return cur


def _refused_here(
    planted: dict[str, Any], task: Any, manifest: Any, refused: list[dict[str, Any]]
) -> bool:
    """Whether a leaking value sits at a path the first release was refused for."""
    for f in refused:
        tid = f.get("task_id", "")
        doc = manifest if not tid else task if task and task.get("task_id") == tid else None
        if doc is not None and leaked(planted, "\x00".join(haystack(_at_path(doc, f["path"])))):
            return True
    return False


def report(fig: dict[str, Any]) -> bool:
    """Print the table; return True when every target holds."""
    ok = True
    print(
        f"corpus {fig['corpus']}: {fig['traces']} traces, {fig['imported_spans']} spans imported, "
        f"{fig['drafted']} drafted, {fig['reviewed']} reviewed; pipeline {fig['pipeline_s']} s"
    )
    print(
        f"release scanner: {fig['release_refused_findings']} finding(s) refused the first release "
        f"{fig['refused_types']} by rule {fig['refused_rules']}; "
        f"{fig['refused_on_clean_tasks']} on tasks (or the manifest) holding no planted value; "
        f"export: {fig['export_error'] or 'ok'}"
    )
    print(f"{'type':<12} {'recall, all fields':<30} {'recall in the released task':<30}")
    for t, r in fig["rows"].items():
        n, miss = r.get("n_all", 0), r.get("leak_all", 0) + r.get("no_candidate", 0)
        p, lo, hi = wilson(n - miss, n)
        nt, mt = r.get("n_task", 0), r.get("leak_task", 0)
        pt, lot, hit = wilson(nt - mt, nt) if nt else (float("nan"), 0.0, 1.0)
        a = f"{n - miss}/{n} = {p:.3f} [{lo:.3f}, {hi:.3f}]"
        b = f"{nt - mt}/{nt} = {pt:.3f} [{lot:.3f}, {hit:.3f}]" if nt else "n/a (none reach a task)"
        print(f"{t:<12} {a:<30} {b:<30}")
        ok &= p >= TARGET and (not nt or pt >= TARGET)
    d = fig["decoys"]
    p, lo, hi = wilson(d.get("kept", 0), d.get("n", 0))
    print(f"decoy survival: {d.get('kept', 0)}/{d.get('n', 0)} = {p:.3f} [{lo:.3f}, {hi:.3f}]")
    ok &= p >= TARGET
    n_exc = len(fig.get("bundle_leaks_excepted", []))
    print(
        f"planted values in the released bundle: {len(fig['bundle_leaks'])} "
        f"({n_exc} at a path the release scanner refused, released only under the exceptions "
        f"this bench records for every refusal; {len(fig['bundle_leaks']) - n_exc} the scanner "
        "did not see)"
    )
    ok &= not fig["bundle_leaks"]
    return ok


def main() -> int:
    """Run and print; exit 1 on a missed target."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    corpora = [
        "frozen", "dev", "holdout2", "holdout3", "holdout4", "holdout5", "holdout6", "holdout7",
        "holdout8", "holdout9", "holdout10",
    ]
    ap.add_argument("--corpus", default="frozen", choices=corpora)
    ap.add_argument("--parts", action="store_true",
                    help="also score each half (see part_of): tune on A's misses, check on B")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--misses", action="store_true", help="list the missed values (development corpora only)")
    args = ap.parse_args()
    load = os.getloadavg()
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, load {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    tmp = Path(tempfile.mkdtemp(prefix="bench-redaction-"))
    try:
        figs = run(args.corpus, tmp, ("", "A", "B") if args.parts else ("",))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    ok = report(figs[0])
    for part_fig in figs[1:]:
        print()
        report(part_fig)
    fig = figs[-2] if args.parts else figs[0]  # misses: half A only
    readable = args.corpus in DEVELOPMENT or (args.corpus in HALF_DEVELOPMENT and args.parts)
    if args.misses:
        if not readable:
            print(
                f"(misses are listed for the development corpora only: {', '.join(DEVELOPMENT)}; "
                f"for half A of {', '.join(HALF_DEVELOPMENT)} with --parts)"
            )
        else:
            for t, ms in fig["misses"].items():
                print(t, ms)
            print("decoys lost", fig["decoys_lost"])
    if args.json:
        shown = fig if args.corpus in DEVELOPMENT else {
            k: v for k, v in fig.items() if k not in ("misses", "decoys_lost")
        }
        print(json.dumps(shown, default=str))
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
