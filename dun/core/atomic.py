"""Atomic file writes: temp file in the same directory, fsync, rename. A crash leaves old or new, never torn."""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path

from dun.core.errors import UnsafePathError

PRIVATE_DIR = 0o700  # dun's records may hold what an agent printed: only their owner reads them


def write_text_atomic(path: Path, text: str, private: bool = False, durable: bool = True) -> None:
    """Write `text` to `path` atomically, the file 0600 (mkstemp's mode); `private`: directories it creates are
    0700 too. `durable=False` skips the fsync (10 ms on a slow disk): for a display rewritten many times, which a
    crash of the process still leaves old or new, and only a power loss could leave empty."""
    write_bytes_atomic(path, text.encode("utf-8"), private, durable)


def write_bytes_atomic(path: Path, data: bytes, private: bool = False, durable: bool = True) -> None:
    """`write_text_atomic` for bytes."""
    if private:
        make_private_dir(path.parent)
    else:
        path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = _temp_beside(path)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            if durable:
                os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _temp_beside(path: Path) -> tuple[int, str]:
    """A new file `.NAME.RANDOM.tmp` beside `path`, as `tempfile.mkstemp` makes it (0600, created exclusively,
    never through a link), without importing tempfile: it loads shutil, bz2, lzma and random, 3-5 ms of a check."""
    flags = os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    for _ in range(100):
        tmp = os.path.join(path.parent, f".{path.name}.{os.urandom(6).hex()}.tmp")
        try:
            return os.open(tmp, flags, 0o600), tmp
        except FileExistsError:
            continue
    raise FileExistsError(f"no free temporary name beside {path}")


def write_json_atomic(path: Path, data: object, private: bool = False, durable: bool = True) -> None:
    write_text_atomic(path, json.dumps(data, indent=2, sort_keys=False) + "\n", private, durable)


def make_private_dir(path: Path) -> None:
    """`path` and the parents it lacks, created 0700 whatever the umask."""
    missing = [p for p in (path, *path.parents) if not p.exists()]
    path.mkdir(parents=True, exist_ok=True)
    for created in missing:
        os.chmod(created, PRIVATE_DIR)


def inside(root: Path, rel: str) -> Path:
    """`root / rel`, once no part of it below `root` is a link and it does not climb out of `root`. Raises
    UnsafePathError naming the link: what dun writes, restores or deletes in a repository is never reached through
    a link the agent could have planted (MISSION.md made a link to a file outside, a directory made a link)."""
    parts = Path(rel).parts
    if not parts or Path(rel).is_absolute() or ".." in parts:
        raise UnsafePathError(f"{rel}: not a path inside {root}")
    path = root
    for part in parts:
        path = path / part
        if os.path.islink(path):
            raise UnsafePathError(f"{path}: a link where dun expects a file or directory (it points to "
                                  f"{os.readlink(path)}); dun writes nothing through links: replace it with the "
                                  "real file")
    return path


def write_inside(root: Path, rel: str, data: bytes) -> None:
    """Write `data` to `root / rel` (made if missing, its mode kept if not) without following any link."""
    path = inside(root, rel)
    for parent in reversed(path.relative_to(root).parents[:-1]):
        with contextlib.suppress(FileExistsError):
            os.mkdir(root / parent)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0) |
                 getattr(os, "O_CLOEXEC", 0), 0o666)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)


def remove_inside(root: Path, rel: str) -> None:
    """Delete `root / rel` if it is there, without following any link on the way."""
    path = inside(root, rel)
    if os.path.lexists(path):
        os.unlink(path)
