"""Releases and the exposure log under a full disk, short writes and a crash between steps.

Faults are injected into ``os.write`` / ``os.fsync`` / ``os.rename`` as the
release code calls them (the filesystem itself is real): a failed append
leaves its log byte for byte as it was, a release cut short is finished by
the next release of the same content, and ``LATEST`` only ever names a
version whose files verify.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from flywheel.evalset._bundle import (
    EXPOSURE_FILE,
    RELEASES_FILE,
    exposure_status,
    record_exposure,
    release_tasks,
    verify_bundle,
    versions,
)

from flywheel import UserError
from tests.evalset.test_bundle import task


@contextmanager
def _fault(name: str, fail: Callable[..., Any]) -> Iterator[None]:
    """Replace ``os.<name>`` with ``fail`` for the block (a stand-in for a failing disk)."""
    real = getattr(os, name)
    setattr(os, name, fail)
    try:
        yield
    finally:
        setattr(os, name, real)


def _enospc(*_: Any) -> Any:
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def _snapshot(d: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in d.iterdir() if p.is_file() and p.name != ".lock"}


def _short_then_full() -> Callable[..., int]:
    """``os.write`` that writes 5 bytes of the first call, then finds the disk full."""
    real = os.write
    calls = {"n": 0}

    def write(fd: int, data: Any) -> int:
        calls["n"] += 1
        if calls["n"] == 1:
            return real(fd, bytes(data)[:5])
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    return write


@pytest.mark.parametrize("fault", ["short_write", "fsync_eio"])
def test_a_failed_exposure_append_leaves_the_log_as_it_was(tmp_path: Path, fault: str) -> None:
    r = release_tasks(tmp_path, "s", [task("a"), task("h", "held-out")], max_held_out_uses=3)
    ref = f"s@{r.version}"
    record_exposure(tmp_path, ref, "picked B", by="ci")
    log = tmp_path / "s" / EXPOSURE_FILE
    before = log.read_bytes()
    if fault == "short_write":
        bad = _short_then_full()
    else:

        def bad(*_: Any) -> None:
            raise OSError(errno.EIO, os.strerror(errno.EIO))

    with _fault("write" if fault == "short_write" else "fsync", bad):
        with pytest.raises(UserError, match=EXPOSURE_FILE) as e:
            record_exposure(tmp_path, ref, "picked C", by="ci")
    assert "\n" not in str(e.value) and "nothing was recorded" in str(e.value)
    assert log.read_bytes() == before
    # The log still reads (no torn line), and the next append lands.
    assert exposure_status(tmp_path, ref).uses == 1
    record_exposure(tmp_path, ref, "picked C", by="ci")
    assert exposure_status(tmp_path, ref).uses == 2


def test_a_full_disk_at_the_release_log_is_finished_by_the_next_release(tmp_path: Path) -> None:
    r1 = release_tasks(tmp_path, "s", [task("a")])
    base = tmp_path / "s"
    before = _snapshot(base)
    with _fault("write", _short_then_full()):
        with pytest.raises(UserError, match=RELEASES_FILE):
            release_tasks(tmp_path, "s", [task("a"), task("b")])
    # Nothing recorded: the log and LATEST are byte for byte as before.
    assert _snapshot(base) == before
    assert [v["version"] for v in versions(tmp_path, "s")] == [r1.version]
    # The new version's directory was renamed into place before the log failed.
    assert len([p for p in base.iterdir() if p.is_dir() and not p.name.startswith(".")]) == 2
    r2 = release_tasks(tmp_path, "s", [task("a"), task("b")])
    assert r2.created and [v["version"] for v in versions(tmp_path, "s")] == [
        r1.version,
        r2.version,
    ]
    assert (base / "LATEST").read_text().strip() == r2.version and verify_bundle(r2.path).ok


def test_a_crash_before_the_rename_leaves_no_version(tmp_path: Path) -> None:
    r1 = release_tasks(tmp_path, "s", [task("a")])
    with _fault("rename", _enospc):
        with pytest.raises(OSError):
            release_tasks(tmp_path, "s", [task("a"), task("c")])
    base = tmp_path / "s"
    assert (base / "LATEST").read_text().strip() == r1.version
    assert [v["version"] for v in versions(tmp_path, "s")] == [r1.version]
    assert sorted(p.name for p in base.iterdir() if not p.name.startswith(".")) == sorted(
        [r1.version, "LATEST", RELEASES_FILE]
    )
    assert release_tasks(tmp_path, "s", [task("a"), task("c")]).created
