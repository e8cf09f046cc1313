"""A per-repository cache of per-file results, so repeated `dun check` runs re-read only changed files.

Entries are keyed by path and validated by size and mtime. Like git's racy-clean rule, results for files modified
within the last few seconds are not stored: a same-size rewrite inside the clock's granularity could go unseen.
The cache lives under `$XDG_CACHE_HOME/dun/`, never in the repository; `DUN_NO_CACHE=1` turns it off.
"""

from __future__ import annotations

import marshal
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from dun.core.cachedir import VOLATILE_ENV, cache_base_path, cache_dir_path, stable_env
from dun.core.digest import sha256

__all__ = ["VOLATILE_ENV", "stable_env"]  # kept here too: the caches' keys are built from them

CACHE_VERSION = 5
RACY_WINDOW_NS = 3_000_000_000

# What git says of the work tree for `FileCache`: HEAD, every path `git status` names, and when it looked.
GitView = tuple[str, set[str], int]

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
    """Results of one computation (`name`, plus a `salt` such as the regex) for many files of one repo.

    An entry holds the file's size and mtime and, when git saw the file clean as it was read, the commit it was
    read at. With `view` (HEAD and the paths `git status` names, from the run's shared status), an entry of that
    very commit whose file git still sees clean is valid without a stat: its content is HEAD's. Otherwise size
    and mtime decide. Stored with marshal (a fifth of JSON's load time on 10,000-entry caches).
    """

    def __init__(self, root: Path, name: str, salt: str = "",
                 view: GitView | Callable[[], GitView | None] | None = None) -> None:
        tag = sha256(f"{CACHE_VERSION}\0{name}\0{salt}".encode()).hexdigest()[:16]
        self.path = cache_dir(root) / f"{name}-{tag}.marshal"
        self.enabled = os.environ.get("DUN_NO_CACHE", "") in ("", "0")
        self._view = view  # a callable is asked at the first lookup: the file loads while git still looks
        self._head: str | None = None
        self._changed: set[str] = set()
        self._looked_ns = 0
        self._entries: dict[str, list[Any]] = {}
        self._dirty = False
        self._lock = threading.Lock()
        if self.enabled:
            try:
                with open(self.path, "rb") as fh:
                    loaded = marshal.loads(fh.read())
                if isinstance(loaded, dict):
                    self._entries = loaded
            except (OSError, ValueError, EOFError, TypeError):
                self._entries = {}  # missing or corrupt: start empty, it is only a cache

    @staticmethod
    def stamp(path: Path | str) -> tuple[int, int] | None:
        try:
            st = os.stat(path)
        except OSError:
            return None
        return st.st_size, st.st_mtime_ns

    def _git(self) -> None:
        if self._view is not None:
            view = self._view() if callable(self._view) else self._view
            self._view = None
            if view is not None:
                self._head, self._changed, self._looked_ns = view

    def vouched_many(self, keys: list[str]) -> dict[str, Any]:
        """The values of the keys git vouches for (same commit as when read, the file clean now), in one pass over
        10,000s of files; the other keys need `get` with a stamp."""
        self._git()
        head, changed, entries = self._head, self._changed, self._entries
        if head is None or not self.enabled:
            return {}
        out = {}
        for key in keys:
            entry = entries.get(key)
            if entry is not None and len(entry) == 4 and entry[3] == head and key not in changed:
                out[key] = entry[2]
        return out

    def get(self, key: str, stamp: tuple[int, int] | None) -> Any:
        if not self.enabled or stamp is None:
            return None
        self._git()
        entry = self._entries.get(key)
        if entry is not None and entry[0] == stamp[0] and entry[1] == stamp[1]:
            head = self._clean_head(key) if stamp[1] < self._looked_ns - RACY_WINDOW_NS else None
            if isinstance(entry, list) and len(entry) == 4 and entry[3] != head:
                with self._lock:  # the file is still as read, now clean at this commit (or no longer clean)
                    entry[3] = head
                    self._dirty = True
            return entry[2]
        return None

    def _clean_head(self, key: str) -> str | None:
        return self._head if key not in self._changed else None

    def put(self, key: str, stamp: tuple[int, int] | None, value: Any, path: Path | str | None = None) -> None:
        """Store `value`, computed from the file as `stamp` describes it. With `path`, the file is looked at again:
        git vouches for the entry only when it was read unchanged, and last written before git's look (racy
        window included), so what was read is what git saw."""
        if not self.enabled or stamp is None or time.time_ns() - stamp[1] < RACY_WINDOW_NS:
            return
        self._git()
        head = self._clean_head(key)
        if head is not None and (path is None or stamp[1] >= self._looked_ns - RACY_WINDOW_NS
                                 or self.stamp(path) != stamp):
            head = None
        with self._lock:
            self._entries[key] = [stamp[0], stamp[1], value, head]
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
            try:
                data = marshal.dumps(self._entries)
            except ValueError:
                return  # a value marshal cannot hold: keep what is on disk
            self._dirty = False
        try:
            from dun.core.atomic import write_bytes_atomic

            write_bytes_atomic(self.path, data)
        except OSError:
            pass  # a read-only or full cache directory must never fail a check
