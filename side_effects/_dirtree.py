"""Directory trees as canonical records: path, kind, size, mode and content hash."""

from __future__ import annotations

import fnmatch
import hashlib
import os
import stat
from collections.abc import Iterable, Sequence
from pathlib import Path

from ._adapters import register_adapter
from ._records import Record


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


@register_adapter
class DirectoryAdapter:
    """One record per file, directory and symlink under a root (not following links).

    Resource type is ``file`` (or ``<prefix>file``), the key is the POSIX path
    relative to the root. Fields: ``kind`` (file, dir, symlink), ``mode``
    (permission bits in octal, so a chmod shows up as a permission change),
    ``size`` and ``sha256`` for files, ``target`` for links. ``ignore`` globs
    (on the relative path) skip caches such as ``__pycache__/*``.
    """

    name = "dirtree"

    def __init__(self, prefix: str = "", ignore: Sequence[str] = ()) -> None:
        self.rtype = f"{prefix}file"
        self.ignore = tuple(ignore)

    def records(self, source: str | Path) -> Iterable[Record]:
        """Walk ``source`` and yield its entries."""
        root = Path(source)
        if not root.is_dir():
            raise NotADirectoryError(f"{root} is not a directory")
        for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
            dirnames.sort()
            base = Path(dirpath)
            for name in [*dirnames, *sorted(filenames)]:
                p = base / name
                rel = p.relative_to(root).as_posix()
                if any(fnmatch.fnmatchcase(rel, g) for g in self.ignore):
                    continue
                st = p.lstat()
                mode = oct(stat.S_IMODE(st.st_mode))
                fields: dict[str, str | int]
                if stat.S_ISLNK(st.st_mode):
                    fields = {"kind": "symlink", "mode": mode, "target": os.readlink(p)}
                elif stat.S_ISDIR(st.st_mode):
                    fields = {"kind": "dir", "mode": mode}
                else:
                    fields = {
                        "kind": "file",
                        "mode": mode,
                        "size": st.st_size,
                        "sha256": _sha256(p),
                    }
                yield Record(self.rtype, (rel,), fields)
