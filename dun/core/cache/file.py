"""A cache file: one marshalled (magic, (version, code), kind, payload) tuple, read with every guard a file anyone
could replace needs. Only a regular file is read (a FIFO, a device, a directory or a link is a miss: opened without
blocking and without following a link, checked with fstat before a byte is read), never more than `cap` bytes, and a
payload of another version, written by other code (dun/core/cache/code.py: dun's source changed since), of another
kind or shape is a miss. A miss is never an error: the caller computes afresh.

Import-light (os, stat, marshal): the replay path reads its file before the rest of dun loads.
"""

from __future__ import annotations

import marshal
import os

from dun.core.cache import VERSION, stamp
from dun.core.regularfile import read_regular

TYPE_CHECKING = False  # not typing's: this module loads before everything else
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, TypeVar

    T = TypeVar("T")

MAGIC = "dun-cache"
DEFAULT_CAP = 128 * 1024 * 1024  # far beyond a 50,000-file repository's largest cache (a few MB)
class CacheFile:
    """One cache file of kind `kind` at `path`."""

    def __init__(self, path: str | os.PathLike[str], kind: str, cap: int = DEFAULT_CAP,
                 code: tuple[str, ...] | None = None) -> None:
        """`code`: the source files whose code computed the payload, when not the whole of dun (None): () for a
        payload that carries its own looks of every module it was made with (the replay, the launch plan)."""
        self.path = os.fspath(path)
        self.kind = kind
        self.cap = cap
        self.code = code

    def _header(self) -> tuple[object, object]:
        if self.code is None:
            from dun.core.cache.code import CODE

            return VERSION, CODE
        return VERSION, tuple(stamp(path) for path in self.code)

    def load(self, accept: Callable[[Any], T] | None = None) -> T | Any | None:
        """The payload stored, passed through `accept` (which may raise on a wrong shape); None on any miss."""
        data = read_regular(self.path, self.cap)
        if data is None:
            return None
        try:
            loaded = marshal.loads(data)
            if (not isinstance(loaded, tuple) or len(loaded) != 4 or loaded[0] != MAGIC
                    or loaded[1] != self._header() or loaded[2] != self.kind):
                return None
            return accept(loaded[3]) if accept is not None else loaded[3]
        except Exception:  # any shape a hand-made or damaged file can have: it is only a cache
            return None

    def store(self, payload: object) -> bool:
        """Write `payload` atomically; False when marshal cannot hold it or the directory is read-only or full (a
        cache must never fail a run)."""
        try:
            data = marshal.dumps((MAGIC, self._header(), self.kind, payload))  # type: ignore[arg-type]
        except ValueError:
            return False
        if len(data) > self.cap:
            return False
        try:
            import pathlib

            from dun.core.atomic import write_bytes_atomic

            # not durable: a cache a power loss leaves empty or short is a miss, and the fsync cost 10-15 ms a run
            write_bytes_atomic(pathlib.Path(self.path), data, durable=False)
        except OSError:
            return False
        return True
