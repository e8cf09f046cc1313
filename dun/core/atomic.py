"""Atomic file writes: temp file in the same directory, fsync, rename. A crash leaves old or new, never torn."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

PRIVATE_DIR = 0o700  # dun's records may hold what an agent printed: only their owner reads them


def write_text_atomic(path: Path, text: str, private: bool = False) -> None:
    """Write `text` to `path` atomically, the file 0600 (mkstemp's mode); `private`: directories it creates are
    0700 too."""
    write_bytes_atomic(path, text.encode("utf-8"), private)


def write_bytes_atomic(path: Path, data: bytes, private: bool = False) -> None:
    """`write_text_atomic` for bytes."""
    if private:
        make_private_dir(path.parent)
    else:
        path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def write_json_atomic(path: Path, data: Any, private: bool = False) -> None:
    write_text_atomic(path, json.dumps(data, indent=2, sort_keys=False) + "\n", private)


def make_private_dir(path: Path) -> None:
    """`path` and the parents it lacks, created 0700 whatever the umask."""
    missing = [p for p in (path, *path.parents) if not p.exists()]
    path.mkdir(parents=True, exist_ok=True)
    for created in missing:
        os.chmod(created, PRIVATE_DIR)
