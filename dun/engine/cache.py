"""A per-repository cache of per-file results, so repeated `dun check` runs re-read only changed files.

Entries are keyed by path and validated by size and mtime. Like git's racy-clean rule, results for files modified
within the last few seconds are not stored: a same-size rewrite inside the clock's granularity could go unseen.
The cache lives under `$XDG_CACHE_HOME/dun/`, never in the repository; `DUN_NO_CACHE=1` turns it off.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
import time
from pathlib import Path
from typing import Any

from dun.core.cachedir import VOLATILE_ENV, cache_base_path, cache_dir_path, stable_env

__all__ = ["VOLATILE_ENV", "stable_env"]  # kept here too: the caches' keys are built from them

CACHE_VERSION = 1
RACY_WINDOW_NS = 3_000_000_000

# Every file look (stamp, or whether it exists) a cache key was built from in this process: a run whose results
# all came from caches can be replayed while these and the work tree are unchanged (dun/engine/replay.py).
WATCHED: dict[str, Any] = {}


def watch(path: str, look: Any) -> None:
    WATCHED[path] = look


def cache_base() -> Path:
    return Path(cache_base_path())


def cache_dir(root: Path) -> Path:
    return Path(cache_dir_path(str(root)))


class FileCache:
    """Results of one computation (`name`, plus a `salt` such as the regex) for many files of one repo."""

    def __init__(self, root: Path, name: str, salt: str = "") -> None:
        tag = hashlib.sha256(f"{CACHE_VERSION}\0{name}\0{salt}".encode()).hexdigest()[:16]
        self.path = cache_dir(root) / f"{name}-{tag}.json"
        self.enabled = os.environ.get("DUN_NO_CACHE", "") in ("", "0")
        self._entries: dict[str, list[Any]] = {}
        self._dirty = False
        self._lock = threading.Lock()
        if self.enabled:
            try:
                loaded = json.loads(self.path.read_text("utf-8"))
                if isinstance(loaded, dict):
                    self._entries = loaded
            except (OSError, ValueError):
                self._entries = {}  # missing or corrupt: start empty, it is only a cache

    @staticmethod
    def stamp(path: Path | str) -> tuple[int, int] | None:
        try:
            st = os.stat(path)
        except OSError:
            return None
        return st.st_size, st.st_mtime_ns

    def get(self, key: str, stamp: tuple[int, int] | None) -> Any:
        if not self.enabled or stamp is None:
            return None
        entry = self._entries.get(key)
        if entry is not None and entry[0] == stamp[0] and entry[1] == stamp[1]:
            return entry[2]
        return None

    def put(self, key: str, stamp: tuple[int, int] | None, value: Any) -> None:
        if not self.enabled or stamp is None or time.time_ns() - stamp[1] < RACY_WINDOW_NS:
            return
        with self._lock:
            self._entries[key] = [stamp[0], stamp[1], value]
            self._dirty = True

    def save(self, keep: set[str] | None = None) -> None:
        """Write the cache if anything changed; `keep` drops entries of files no longer looked at."""
        if not self.enabled:
            return
        with self._lock:
            if keep is not None:
                stale = set(self._entries) - keep
                for key in stale:
                    del self._entries[key]
                self._dirty = self._dirty or bool(stale)
            if not self._dirty:
                return
            data = json.dumps(self._entries, separators=(",", ":"))
            self._dirty = False
        try:
            from dun.core.atomic import write_text_atomic

            write_text_atomic(self.path, data)
        except OSError:
            pass  # a read-only or full cache directory must never fail a check
