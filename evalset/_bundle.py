"""Immutable, content-addressed eval-set versions: release, export, verify, exposure.

A version is a directory ``ROOT/NAME/VERSION/`` holding ``tasks.jsonl`` (one
task per line, each line the task's canonical JSON) and ``manifest.json``
(per-task SHA-256, split counts, parent version, changelog, exposure policy,
sampling policies). The version id is the SHA-256 (first 16 hex digits) of
the canonical manifest without its ``version`` field, so the id names the
content and its history; ``verify`` recomputes every hash without a
database. Releasing content identical to the latest version is a no-op, and
an existing version directory is never rewritten.

The held-out split loses its value each time it steers a decision
(acceptance-and-statistics 13.3.5: a held-out suite used to choose among
configurations becomes a control target). Each such use is appended to
``ROOT/NAME/exposure.jsonl`` beside the versions (the bundle itself is
immutable), hash-chained so an edit is detected. A held-out task's exposure
is the number of logged uses whose held-out split contained it; once the
split reaches the manifest's ``max_held_out_uses`` it is flagged for
retirement, and every later release puts its exhausted tasks into dev
(``metadata.retired_from_held_out``; the changelog lists them as ``retired``
once), so a fresh held-out split carries the release claim.

No release and no export leaks: both run the release scanner
(``_leaks``) and refuse a finding no reviewer excepted; the exceptions a
release used are listed in its manifest (``leak_exceptions``).

``tasks.jsonl`` + ``manifest.json`` stay readable by ``load_evalset``.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import tempfile
import time
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from flywheel.evalset._leaks import refuse_leaks, scan_bundle, scan_release, stored_exceptions
from flywheel.evalset._task import TASK_SCHEMA_VERSION, Task
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from flywheel import canonical_json as _canonical
from flywheel import record_audit, sha256_hex
from flywheel.errors import NotFoundError, UserError

FORMAT = "flywheel-evalset"
FORMAT_VERSION = 1
SPLITS = ("dev", "held-out")
#: Default number of decisions the held-out split may steer before retirement.
DEFAULT_MAX_HELD_OUT_USES = 5
VERSION_CHARS = 16
EXPOSURE_FILE = "exposure.jsonl"
RELEASES_FILE = "releases.jsonl"


# -- hashing ------------------------------------------------------------------
def canonical_json(obj: Any) -> str:
    """Sorted keys, no whitespace, UTF-8 text; NaN and non-JSON leaves refused."""
    return _canonical(obj, strict=True)


sha256_text = sha256_hex


def task_canonical(task: Task) -> str:
    """The canonical JSON line of a task (what ``tasks.jsonl`` holds)."""
    return canonical_json(task.model_dump(mode="json"))


def task_sha256(task: Task) -> str:
    """SHA-256 of the task's canonical JSON."""
    return sha256_text(task_canonical(task))


def task_split(task: Task) -> str:
    """``metadata.split`` (dev when absent)."""
    split = str(task.metadata.get("split", "dev"))
    if split not in SPLITS:
        raise UserError(f"task {task.task_id!r}: metadata.split {split!r}; use 'dev' or 'held-out'")
    return split


# -- the manifest -------------------------------------------------------------
class ManifestTask(BaseModel):
    """One task's line in the manifest."""

    model_config = ConfigDict(extra="forbid")

    task_id: str
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    split: Literal["dev", "held-out"]
    slice: str
    golden: bool
    version: str
    source_trace_id: str | None = None


class Changelog(BaseModel):
    """What changed against the parent version (task ids)."""

    model_config = ConfigDict(extra="forbid")

    added: list[str] = Field(default_factory=list)
    changed: list[str] = Field(default_factory=list)
    removed: list[str] = Field(default_factory=list)
    retired: list[str] = Field(
        default_factory=list, description="Held-out tasks moved into dev after their exposure."
    )


class ExposurePolicy(BaseModel):
    """How often the held-out split may steer a decision before it retires."""

    model_config = ConfigDict(extra="forbid")

    max_held_out_uses: int = Field(DEFAULT_MAX_HELD_OUT_USES, ge=1)
    log: str = EXPOSURE_FILE


class Manifest(BaseModel):
    """``manifest.json`` of a released version."""

    model_config = ConfigDict(extra="forbid")

    format: Literal["flywheel-evalset"] = "flywheel-evalset"
    format_version: Literal[1] = 1
    name: str = Field(min_length=1)
    version: str = ""
    sequence: int = Field(ge=1)
    parent: str | None = None
    task_schema_version: int = TASK_SCHEMA_VERSION
    tasks: list[ManifestTask]
    splits: dict[str, int]
    changelog: Changelog
    exposure: ExposurePolicy
    sampling_policies: list[str] = Field(default_factory=list)
    policies: dict[str, Any] = Field(
        default_factory=dict, description="The sampling policies' content, by policy id."
    )
    leak_exceptions: list[dict[str, Any]] = Field(
        default_factory=list,
        description="Release-scanner findings a reviewer excepted (task, path, entity, "
        "reviewer, review event id); never values.",
    )

    def content_version(self) -> str:
        """The version id this manifest's content hashes to."""
        body = self.model_dump(mode="json")
        body.pop("version")
        if not body["leak_exceptions"]:
            body.pop("leak_exceptions")  # manifests from before the field hash as they did
        return sha256_text(canonical_json(body))[:VERSION_CHARS]

    def held_out(self) -> list[str]:
        """Task ids of the held-out split."""
        return [t.task_id for t in self.tasks if t.split == "held-out"]


def _name_ok(name: str) -> str:
    if not name or not all(c.isalnum() or c in "-_." for c in name) or name.startswith("."):
        raise UserError(f"invalid eval-set name {name!r}; use letters, digits, '-', '_' and '.'")
    return name


def parse_ref(ref: str) -> tuple[str, str | None]:
    """``NAME@VERSION`` (or ``NAME``, meaning the latest) -> (name, version or None)."""
    name, sep, version = ref.partition("@")
    _name_ok(name)
    if sep and not version:
        raise UserError(f"invalid reference {ref!r}; use NAME@VERSION or NAME for the latest")
    return name, (version or None)


def default_root(store_url: str | None = None) -> Path:
    """Where versions live: ``$FLYWHEEL_EVALSETS_DIR``, beside a chDB store, or ./.flywheel."""
    env = os.environ.get("FLYWHEEL_EVALSETS_DIR")
    if env:
        return Path(env)
    if store_url and store_url.startswith("chdb://"):
        path = store_url[len("chdb://") :].split("?", 1)[0]
        if path.startswith("/./") or path.startswith("/../"):
            path = path[1:]
        return Path(path).parent / "evalsets"
    return Path(".flywheel") / "evalsets"


# -- reading versions ---------------------------------------------------------
def read_manifest(directory: str | Path) -> Manifest:
    """Parse ``DIR/manifest.json`` (UserError naming the problem)."""
    path = Path(directory) / "manifest.json"
    if not path.is_file():
        raise UserError(f"{path} not found; a bundle directory holds manifest.json and tasks.jsonl")
    try:
        return Manifest.model_validate_json(path.read_text(encoding="utf-8"))
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ())) or "manifest"
        raise UserError(f"{path}: {where}: {first.get('msg')}") from exc


def read_tasks(directory: str | Path) -> list[Task]:
    """The tasks of a bundle directory, in file order."""
    path = Path(directory) / "tasks.jsonl"
    if not path.is_file():
        raise UserError(f"{path} not found")
    return [
        Task.model_validate_json(line)
        for line in path.read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]


def versions(root: str | Path, name: str) -> list[dict[str, Any]]:
    """Releases of ``name``, oldest first (from ``releases.jsonl``)."""
    path = Path(root) / _name_ok(name) / RELEASES_FILE
    if not path.is_file():
        return []
    return [
        json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()
    ]


def resolve(root: str | Path, ref: str) -> tuple[str, str, Path]:
    """(name, version, directory) of ``NAME@VERSION`` (a unique version prefix works) or ``NAME``.

    Raises:
        NotFoundError: No such eval set or version.
    """
    name, version = parse_ref(ref)
    known = [r["version"] for r in versions(root, name)]
    if not known:
        raise NotFoundError(
            f"no released versions of eval set {name!r} under {root}; "
            f"run `flywheel evalset release {name}`"
        )
    if version is None:
        version = known[-1]
    else:
        hits = [v for v in known if v.startswith(version)]
        if len(hits) != 1:
            raise NotFoundError(
                f"eval set {name!r} has {'no' if not hits else 'several'} version(s) matching "
                f"{version!r}; known: {', '.join(known)}"
            )
        version = hits[0]
    return name, version, Path(root) / name / version


# -- releasing ----------------------------------------------------------------
@dataclass(frozen=True)
class ReleaseResult:
    """What ``release`` did."""

    name: str
    version: str
    created: bool
    path: Path
    manifest: Manifest

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready summary."""
        return {
            "name": self.name,
            "version": self.version,
            "ref": f"{self.name}@{self.version}",
            "created": self.created,
            "path": str(self.path),
            "parent": self.manifest.parent,
            "sequence": self.manifest.sequence,
            "tasks": len(self.manifest.tasks),
            "splits": self.manifest.splits,
            "changelog": self.manifest.changelog.model_dump(),
        }


def _atomic_write(path: Path, text: str) -> None:
    """Replace ``path`` with ``text``: written, synced, renamed, and the rename synced."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    _fsync_dir(path.parent)


def _write_synced(path: Path, text: str) -> None:
    """Write ``text`` to a new file ``path`` and sync it to disk."""
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())


def _append_synced(path: Path, line: str) -> None:
    """Append ``line`` to the log ``path`` whole, synced, or not at all.

    A failed write or sync (a full disk, an I/O error) cuts the file back to
    its size before the append, so a log is never left with a torn last line.

    Raises:
        UserError: The append failed; the message names the file and the reason.
    """
    data = line.encode("utf-8")
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        size = os.fstat(fd).st_size
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        except OSError as e:
            os.ftruncate(fd, size)
            raise UserError(
                f"{path}: could not append ({e.strerror or e}); nothing was recorded"
            ) from e
    finally:
        os.close(fd)


def _fsync_dir(path: Path) -> None:
    """Sync a directory, so the names created or renamed in it survive a crash."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def build_manifest(
    name: str,
    tasks: Sequence[Task],
    parent: Manifest | None,
    *,
    max_held_out_uses: int | None = None,
    sampling_policies: Iterable[str] = (),
    retired: Sequence[str] = (),
    policies: dict[str, Any] | None = None,
    leak_exceptions: Sequence[dict[str, Any]] = (),
) -> Manifest:
    """The manifest of ``tasks`` released after ``parent`` (version id filled in)."""
    ordered = sorted(tasks, key=lambda t: t.task_id)
    ids = [t.task_id for t in ordered]
    dup = [i for i, n in Counter(ids).items() if n > 1]
    if dup:
        raise UserError(f"task id(s) {', '.join(dup)} appear twice; task ids must be unique")
    entries = [
        ManifestTask(
            task_id=t.task_id,
            sha256=task_sha256(t),
            split=task_split(t),  # type: ignore[arg-type]
            slice=t.slice,
            golden=t.golden,
            version=t.version,
            source_trace_id=t.source_trace_id,
        )
        for t in ordered
    ]
    old = {t.task_id: t.sha256 for t in parent.tasks} if parent else {}
    new = {t.task_id: t.sha256 for t in entries}
    log = Changelog(
        added=sorted(set(new) - set(old)),
        changed=sorted(i for i in set(new) & set(old) if new[i] != old[i]),
        removed=sorted(set(old) - set(new)),
        retired=sorted(set(retired) & set(new)),
    )
    splits = dict.fromkeys(SPLITS, 0)
    for e in entries:
        splits[e.split] += 1
    uses = max_held_out_uses or (
        parent.exposure.max_held_out_uses if parent else DEFAULT_MAX_HELD_OUT_USES
    )
    m = Manifest(
        name=name,
        sequence=(parent.sequence + 1) if parent else 1,
        parent=parent.version if parent else None,
        tasks=entries,
        splits=splits,
        changelog=log,
        exposure=ExposurePolicy(max_held_out_uses=uses),
        sampling_policies=sorted(set(sampling_policies)),
        policies=dict(sorted((policies or {}).items())),
        leak_exceptions=list(leak_exceptions),
    )
    m.version = m.content_version()
    return m


def release_tasks(
    root: str | Path,
    name: str,
    tasks: Sequence[Task],
    *,
    max_held_out_uses: int | None = None,
    sampling_policies: Iterable[str] = (),
    released_by: str = "",
    policies: dict[str, Any] | None = None,
    leak_exceptions: Sequence[dict[str, Any]] = (),
    source_values: Mapping[str, Mapping[str, str]] | None = None,
) -> ReleaseResult:
    """Write a new immutable version of ``name`` from ``tasks`` (no-op when unchanged).

    Held-out tasks whose split reached its exposure limit are moved into dev
    first (``metadata.split = "dev"``, ``metadata.retired_from_held_out``).
    Every task and the manifest are scanned for personal data and secrets
    first (also for the values of ``source_values``, see ``scan_release``); a
    finding not in ``leak_exceptions`` (dicts with ``task_id``, ``path``,
    ``entity``) refuses the release.

    Raises:
        UserError: No tasks, duplicate ids, or an invalid split.
        LeakRefused: The scanner found something no exception covers.
    """
    _name_ok(name)
    if not tasks:
        raise UserError(
            f"no approved tasks for eval set {name!r}; approve candidates in review first"
        )
    base = Path(root) / name
    base.mkdir(parents=True, exist_ok=True)
    with _locked(base / ".lock"):
        history = versions(root, name)
        parent = read_manifest(base / history[-1]["version"]) if history else None
        limit = max_held_out_uses or (
            parent.exposure.max_held_out_uses if parent else DEFAULT_MAX_HELD_OUT_USES
        )
        log = base / EXPOSURE_FILE
        uses = _task_uses(_read_exposure(log)[0]) if log.is_file() else Counter()
        tasks, retired = _retire_overused(tasks, uses, limit, parent)

        def manifest_with(exceptions: Sequence[dict[str, Any]]) -> Manifest:
            return build_manifest(
                name,
                tasks,
                parent,
                max_held_out_uses=max_held_out_uses,
                sampling_policies=sampling_policies,
                retired=retired,
                policies=policies,
                leak_exceptions=exceptions,
            )

        manifest = manifest_with(())
        findings = scan_release(tasks, manifest.model_dump(mode="json"), source_values)
        used = refuse_leaks(findings, leak_exceptions, f"release of {name}")
        if used:
            manifest = manifest_with(used)
        if (
            parent is not None
            and manifest.policies == parent.policies
            and [(t.task_id, t.sha256) for t in manifest.tasks]
            == [(t.task_id, t.sha256) for t in parent.tasks]
            and manifest.exposure == parent.exposure
            and manifest.leak_exceptions == parent.leak_exceptions
        ):
            return ReleaseResult(name, parent.version, False, base / parent.version, parent)
        target = base / manifest.version
        if target.exists():
            if manifest.version in {h["version"] for h in history}:
                return ReleaseResult(name, manifest.version, False, target, read_manifest(target))
            # A release cut short after its directory was renamed into place (the
            # version id is the content's hash, so the directory holds this manifest).
            manifest = read_manifest(target)
        else:
            _write_version(base, manifest, tasks)
        _record_release(base, manifest, released_by)
        return ReleaseResult(name, manifest.version, True, target, manifest)


def _retire_overused(
    tasks: Sequence[Task], uses: Counter[str], limit: int, parent: Manifest | None
) -> tuple[list[Task], list[str]]:
    """Tasks with every held-out one used ``limit`` times or more moved to dev.

    Returns:
        The tasks, and the ids of those the parent release held out and this one retires.
    """
    was_held = set(parent.held_out()) if parent else set()
    retired: list[str] = []
    out: list[Task] = []
    for t in tasks:
        if task_split(t) == "held-out" and uses[t.task_id] >= limit:
            meta = {**t.metadata, "split": "dev", "retired_from_held_out": True}
            t = t.model_copy(update={"metadata": meta})
            if t.task_id in was_held:
                retired.append(t.task_id)
        out.append(t)
    return out, retired


def _write_version(base: Path, manifest: Manifest, tasks: Sequence[Task]) -> None:
    """Write a version's directory: files synced in a private staging directory, renamed.

    The rename is synced before the release is recorded (``_record_release``),
    so after a crash the log and ``LATEST`` never name a version whose files
    are not on disk; a directory renamed but not recorded is recorded by the
    next release of the same content.
    """
    staging = Path(tempfile.mkdtemp(dir=base, prefix=f".{manifest.version}."))
    by_id = {t.task_id: t for t in tasks}
    lines = [task_canonical(by_id[e.task_id]) for e in manifest.tasks]
    _write_synced(staging / "tasks.jsonl", "\n".join(lines) + "\n")
    _write_synced(
        staging / "manifest.json",
        json.dumps(manifest.model_dump(mode="json"), indent=1, ensure_ascii=False) + "\n",
    )
    for f in staging.iterdir():
        f.chmod(0o444)
    staging.chmod(0o755)  # mkdtemp made it private; a release is for everyone to read
    _fsync_dir(staging)
    os.rename(staging, base / manifest.version)
    _fsync_dir(base)


def _record_release(base: Path, manifest: Manifest, released_by: str) -> None:
    """The version's line in the release log, then ``LATEST`` (each synced)."""
    record = {
        "version": manifest.version,
        "parent": manifest.parent,
        "sequence": manifest.sequence,
        "tasks": len(manifest.tasks),
        "released_at": time.time_ns(),
        "released_by": released_by,
    }
    _append_synced(base / RELEASES_FILE, canonical_json(record) + "\n")
    _atomic_write(base / "LATEST", manifest.version + "\n")


class _locked:
    """An exclusive ``flock`` on a file for the duration of a block."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.fd = -1

    def __enter__(self) -> None:
        self.fd = os.open(self.path, os.O_CREAT | os.O_RDWR, 0o644)
        fcntl.flock(self.fd, fcntl.LOCK_EX)

    def __exit__(self, *exc: object) -> None:
        fcntl.flock(self.fd, fcntl.LOCK_UN)
        os.close(self.fd)


# -- exporting and verifying --------------------------------------------------
def export_bundle(root: str | Path, ref: str, out_dir: str | Path) -> Path:
    """Copy ``NAME@VERSION`` (and its exposure log) to ``out_dir``; verify and scan the copy.

    The copy is scanned like a release (a version released before a detector
    improved may hold what it now finds); a finding its manifest does not
    except removes the copy and refuses.

    Raises:
        UserError: ``out_dir`` exists and is not empty, or the copy does not verify.
        LeakRefused: The copy holds a finding no recorded exception covers.
    """
    name, version, src = resolve(root, ref)
    out = Path(out_dir)
    if out.exists() and any(out.iterdir()):
        raise UserError(f"{out} is not empty; export into a new or empty directory")
    out.mkdir(parents=True, exist_ok=True)
    for fname in ("tasks.jsonl", "manifest.json"):
        shutil.copyfile(src / fname, out / fname)
    log = Path(root) / name / EXPOSURE_FILE
    if log.is_file():
        shutil.copyfile(log, out / EXPOSURE_FILE)
    report = verify_bundle(out)
    if not report.ok:
        raise UserError(f"exported {name}@{version} does not verify: {report.problems[0]}")
    try:
        refuse_leaks(
            scan_bundle(out), read_manifest(out).leak_exceptions, f"export of {name}@{version}"
        )
    except UserError:
        for f in out.iterdir():
            f.unlink()
        raise
    return out


@dataclass
class VerifyReport:
    """The result of ``verify_bundle``: ok when there are no problems."""

    directory: str
    name: str = ""
    version: str = ""
    tasks: int = 0
    splits: dict[str, int] = field(default_factory=dict)
    held_out_uses: int = 0
    retire: bool = False
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """No problem found."""
        return not self.problems

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return {
            "directory": self.directory,
            "ok": self.ok,
            "name": self.name,
            "version": self.version,
            "tasks": self.tasks,
            "splits": self.splits,
            "held_out_uses": self.held_out_uses,
            "retire": self.retire,
            "problems": self.problems,
        }


def verify_bundle(directory: str | Path) -> VerifyReport:
    """Recompute every hash of a bundle directory; no database needed.

    Checks: the manifest parses and hashes to its version; every line of
    ``tasks.jsonl`` is a valid task in canonical form whose SHA-256, split,
    slice and golden flag match its manifest entry, in manifest order, with
    no task missing or extra; split counts match; the exposure log (if
    present) is an unbroken hash chain.
    """
    d = Path(directory)
    rep = VerifyReport(str(d))
    try:
        m = read_manifest(d)
    except UserError as exc:
        rep.problems.append(str(exc))
        return rep
    rep.name, rep.version, rep.tasks, rep.splits = m.name, m.version, len(m.tasks), dict(m.splits)
    if m.content_version() != m.version:
        rep.problems.append(
            f"manifest content hashes to {m.content_version()}, not its version {m.version}"
        )
    path = d / "tasks.jsonl"
    if not path.is_file():
        rep.problems.append(f"{path} not found")
        return rep
    lines = [ln for ln in path.read_text(encoding="utf-8").splitlines() if ln.strip()]
    if len(lines) != len(m.tasks):
        rep.problems.append(f"tasks.jsonl holds {len(lines)} task(s), the manifest {len(m.tasks)}")
    counts = dict.fromkeys(SPLITS, 0)
    for i, (line, entry) in enumerate(zip(lines, m.tasks, strict=False), 1):
        try:
            task = Task.model_validate_json(line)
        except ValidationError as exc:
            rep.problems.append(f"tasks.jsonl:{i}: not a valid task ({exc.errors()[0].get('msg')})")
            continue
        if task.task_id != entry.task_id:
            rep.problems.append(
                f"tasks.jsonl:{i}: task {task.task_id!r}, manifest says {entry.task_id!r}"
            )
        if sha256_text(line) != entry.sha256:
            rep.problems.append(
                f"tasks.jsonl:{i}: {task.task_id} SHA-256 differs from the manifest"
            )
        elif task_canonical(task) != line:
            rep.problems.append(f"tasks.jsonl:{i}: {task.task_id} is not in canonical form")
        split = str(task.metadata.get("split", "dev"))
        if split != entry.split or task.slice != entry.slice or task.golden != entry.golden:
            rep.problems.append(
                f"tasks.jsonl:{i}: {task.task_id} split/slice/golden differ from the manifest"
            )
        if split in counts:
            counts[split] += 1
    if counts != {k: m.splits.get(k, 0) for k in SPLITS}:
        rep.problems.append(f"split counts {counts} differ from the manifest's {m.splits}")
    log = d / m.exposure.log
    if log.is_file():
        entries, problems = _read_exposure(log)
        rep.problems.extend(problems)
        uses = _task_uses(entries)
        rep.held_out_uses = max((uses[t] for t in m.held_out()), default=0)
        rep.retire = rep.held_out_uses >= m.exposure.max_held_out_uses
    return rep


# -- exposure -----------------------------------------------------------------
@dataclass(frozen=True)
class ExposureStatus:
    """How often the held-out split of a version has steered a decision."""

    name: str
    version: str
    held_out: int
    uses: int
    max_uses: int
    retire: bool
    entry: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return {
            "ref": f"{self.name}@{self.version}",
            "held_out_tasks": self.held_out,
            "uses": self.uses,
            "max_uses": self.max_uses,
            "retire": self.retire,
            "entry": self.entry,
        }


def _read_exposure(path: Path) -> tuple[list[dict[str, Any]], list[str]]:
    entries: list[dict[str, Any]] = []
    problems: list[str] = []
    prev = ""
    for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            e = json.loads(line)
        except json.JSONDecodeError:
            problems.append(f"{path.name}:{i}: not JSON")
            continue
        if e.get("prev", "") != prev or e.get("seq") != len(entries) + 1:
            problems.append(f"{path.name}:{i}: the hash chain is broken (edited or reordered log)")
        prev = sha256_text(line)
        entries.append(e)
    return entries, problems


def _task_uses(entries: Sequence[dict[str, Any]]) -> Counter[str]:
    uses: Counter[str] = Counter()
    for e in entries:
        uses.update(set(e.get("held_out", [])))
    return uses


def exposure_status(root: str | Path, ref: str) -> ExposureStatus:
    """Uses of the held-out split of ``NAME@VERSION`` and whether it must retire."""
    name, version, d = resolve(root, ref)
    m = read_manifest(d)
    log = Path(root) / name / EXPOSURE_FILE
    entries = _read_exposure(log)[0] if log.is_file() else []
    held = m.held_out()
    uses = _task_uses(entries)
    n = max((uses[t] for t in held), default=0)
    return ExposureStatus(
        name, version, len(held), n, m.exposure.max_held_out_uses, n >= m.exposure.max_held_out_uses
    )


def record_exposure(
    root: str | Path, ref: str, decision: str, *, by: str = "", configs: Sequence[str] = ()
) -> ExposureStatus:
    """Append one use of the held-out split to decide between configurations.

    Args:
        root: Versions root.
        ref: ``NAME@VERSION`` whose held-out split was used.
        decision: What was decided (free text, required).
        by: Who decided.
        configs: The configurations compared.

    Raises:
        UserError: Empty decision, or the version has no held-out split.
    """
    if not decision.strip():
        raise UserError("--decision is empty; say which configurations the held-out split decided")
    name, version, d = resolve(root, ref)
    m = read_manifest(d)
    held = m.held_out()
    if not held:
        raise UserError(f"{name}@{version} has no held-out task; nothing to record")
    log = Path(root) / name / EXPOSURE_FILE
    with _locked(Path(root) / name / ".lock"):
        entries, problems = _read_exposure(log) if log.is_file() else ([], [])
        if problems:
            raise UserError(f"{log}: {problems[0]}; the exposure log must be append-only")
        prev = ""
        if log.is_file():
            last = [ln for ln in log.read_text(encoding="utf-8").splitlines() if ln.strip()]
            prev = sha256_text(last[-1]) if last else ""
        entry = {
            "seq": len(entries) + 1,
            "prev": prev,
            "at": time.time_ns(),
            "version": version,
            "split": "held-out",
            "decision": decision.strip(),
            "by": by,
            "configs": list(configs),
            "held_out": sorted(held),
        }
        _append_synced(log, canonical_json(entry) + "\n")
    status = exposure_status(root, ref)
    return ExposureStatus(
        status.name,
        status.version,
        status.held_out,
        status.uses,
        status.max_uses,
        status.retire,
        entry,
    )


# -- the store side -----------------------------------------------------------
def approved_tasks(
    store: Any, name: str, *, project: str = "default"
) -> tuple[list[Task], list[str]]:
    """Tasks approved in review for eval set ``name`` (table ``approved_tasks``) and their policies.

    Each body is checked against the SHA-256 its approval recorded, so only
    the exact reviewed content can be released.

    Raises:
        UserError: A stored body no longer matches its approval hash.
    """
    rows = store.query(
        "SELECT task_id, body, task_sha256 FROM approved_tasks FINAL"
        " WHERE project_id = {p:String} AND evalset = {e:String} AND NOT withdrawn"
        " ORDER BY task_id",
        {"p": project, "e": name},
    )
    tasks: list[Task] = []
    policies: set[str] = set()
    for r in rows:
        task = Task.model_validate_json(r["body"])
        if task_sha256(task) != r["task_sha256"]:
            raise UserError(
                f"approved task {task.task_id!r} does not match the SHA-256 its review approved; "
                "reopen and approve it again"
            )
        tasks.append(task)
        pol = task.metadata.get("sampling_policy")
        if isinstance(pol, str) and pol:
            policies.add(pol)
    return tasks, sorted(policies)


def record_release(
    store: Any, result: ReleaseResult, tasks: Sequence[Task], *, project: str = "default"
) -> int:
    """Make the released tasks queryable in the store (``evalset_tasks``, ``NAME@VERSION``)."""
    by_id = {t.task_id: t for t in tasks}
    lines = [(e, by_id[e.task_id]) for e in result.manifest.tasks if e.task_id in by_id]
    if not lines:
        return 0
    ref = f"{result.name}@{result.version}"
    now = time.time_ns()
    return store.insert(
        "evalset_tasks",
        {
            "project_id": [project] * len(lines),
            "evalset_version": [ref] * len(lines),
            "task_id": [e.task_id for e, _ in lines],
            "task_version": [t.version for _, t in lines],
            "slice": [t.slice for _, t in lines],
            "golden": [t.golden for _, t in lines],
            "schema_version": [t.schema_version for _, t in lines],
            "body": [task_canonical(t) for _, t in lines],
            "written_at": [now] * len(lines),
        },
    )


def _policy_bodies(store: Any, policy_ids: Sequence[str], project: str) -> dict[str, Any]:
    """The stored content of the sampling policies (table ``promote_policies``), by id."""
    if not policy_ids:
        return {}
    rows = store.query(
        "SELECT policy_id, any(body) AS body FROM promote_policies"
        " WHERE project_id = {p:String} AND policy_id IN {ids:Array(String)} GROUP BY policy_id",
        {"p": project, "ids": list(policy_ids)},
    )
    return {r["policy_id"]: json.loads(r["body"]) for r in rows}


def release_from_store(
    store: Any,
    root: str | Path,
    name: str,
    *,
    project: str = "default",
    max_held_out_uses: int | None = None,
    released_by: str = "",
) -> ReleaseResult:
    """Release the approved tasks of ``name`` as a new version (see ``release_tasks``).

    The scanner's second witness reads each task's source trace: what it held
    under personal keys must not be in the task (``_source_values``).
    """
    tasks, policy_ids = approved_tasks(store, name, project=project)
    # imported here: the witness reads redaction's tables (word frequencies, check-digit
    # schemes), which a server that imports this module for its routes should not hold idle
    from flywheel.evalset._source_values import personal_values

    result = release_tasks(
        root,
        name,
        tasks,
        max_held_out_uses=max_held_out_uses,
        sampling_policies=policy_ids,
        released_by=released_by,
        policies=_policy_bodies(store, policy_ids, project),
        leak_exceptions=stored_exceptions(store, name, project=project),
        source_values=personal_values(
            store, [t.source_trace_id for t in tasks if t.source_trace_id], project=project
        ),
    )
    if result.created:
        record_release(store, result, read_tasks(result.path), project=project)
        store.insert(
            "evalset_releases",
            {
                "project_id": [project],
                "evalset": [name],
                "version": [result.version],
                "parent": [result.manifest.parent or ""],
                "sequence": [result.manifest.sequence],
                "tasks": [len(result.manifest.tasks)],
                "released_by": [released_by],
                "released_at": [time.time_ns()],
            },
        )
        record_audit(
            store,
            "evalset.release",
            actor=released_by,
            project=project,
            target=f"{name}@{result.version}",
            detail={"parent": result.manifest.parent, "tasks": len(result.manifest.tasks)},
        )
    return result
