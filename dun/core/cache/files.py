"""A per-repository cache of per-file results, so repeated `dun check` runs re-read only changed files.

Entries are keyed by path and validated by the file's stamp (`dun.core.cache.stamp`: size, mtime, ctime, inode,
mode). Results read from files changed within the racy window are not stored: a same-size rewrite inside the clock's
granularity could go unseen. The cache lives in the repository's cache directory (dun/core/cachedir.py), never in
the repository.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dun.core.cache import racy, stamp
from dun.core.cache.file import CacheFile
from dun.core.cache.session import Caches
from dun.core.cachedir import cache_dir_path
from dun.core.digest import sha256

if TYPE_CHECKING:
    from dun.core.cache import Stamp

# What git says of the work tree for `FileCache`: HEAD, every path `git status` names, and when it looked.
GitView = tuple[str, set[str], int]


class FileCache:
    """Results of one computation (`name`, plus a `salt` such as the regex) for many files of one repo.

    An entry is [stamp, value, commit]: the commit is the one the file was read at when git saw it clean as it was
    read. With `view` (HEAD and the paths `git status` names, from the run's shared status), an entry of that very
    commit whose file git still sees clean is valid without a stat: its content is HEAD's. Otherwise the stamp
    decides. With `caches.read` off (`--no-cache`), nothing is read back but what is computed is stored.
    """

    def __init__(self, root: Path, name: str, salt: str = "",
                 view: GitView | Callable[[], GitView | None] | None = None, caches: Caches | None = None) -> None:
        tag = sha256(f"{name}\0{salt}".encode()).hexdigest()[:16]
        self.file = CacheFile(Path(cache_dir_path(str(root))) / f"{name}-{tag}.marshal", "files:" + name)
        self.path = Path(self.file.path)
        self.caches = caches or Caches()
        self.enabled = self.caches.read
        self._view = view  # a callable is asked at the first lookup: the file loads while git still looks
        self._head: str | None = None
        self._changed: set[str] = set()
        self._looked_ns = 0
        self._entries: dict[str, list[object]] = {}
        self._dirty = False
        self._lock = threading.Lock()
        if self.enabled:
            self._entries = self.file.load(_entries) or {}

    @staticmethod
    def stamp(path: Path | str) -> Stamp | None:
        return stamp(path)

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
            if type(entry) is list and len(entry) == 3 and entry[2] == head and key not in changed:
                out[key] = entry[1]
        return out

    def get(self, key: str, st: Stamp | None) -> Any:
        if st is None:
            return None
        self._git()
        self.caches.reads.note(st, key in self._changed)  # what a result was made from: read now, or as stored
        if not self.enabled:
            return None
        entry = self._entries.get(key)
        if type(entry) is list and len(entry) == 3 and entry[0] == st:
            head = self._clean_head(key) if not racy(st, self._looked_ns) else None
            if entry[2] != head:
                with self._lock:  # the file is still as read, now clean at this commit (or no longer clean)
                    entry[2] = head
                    self._dirty = True
            return entry[1]
        return None

    def _clean_head(self, key: str) -> str | None:
        return self._head if key not in self._changed else None

    def put(self, key: str, st: Stamp | None, value: object, path: Path | str | None = None) -> None:
        """Store `value`, computed from the file as `st` describes it. With `path`, the file is looked at again:
        git vouches for the entry only when it was read unchanged, and last written before git's look (racy
        window included), so what was read is what git saw."""
        if st is None:
            return
        self._git()
        self.caches.reads.note(st, key in self._changed)
        if racy(st):
            return
        head = self._clean_head(key)
        if head is not None and (path is None or racy(st, self._looked_ns) or stamp(path) != st):
            head = None
        with self._lock:
            self._entries[key] = [st, value, head]
            self._dirty = True

    def save(self, keep: set[str] | None = None) -> None:
        """Write the cache if anything changed; `keep` drops entries of files no longer looked at. A run that read
        nothing (`--no-cache`) writes what it found: the next run starts from the truth."""
        with self._lock:
            if keep is not None:
                stale = set(self._entries) - keep
                for key in stale:
                    del self._entries[key]
                self._dirty = self._dirty or bool(stale)
            if not self._dirty:
                return
            entries = self._entries
            self._dirty = False
            if not self.enabled:  # entries not read back: merge into what is stored rather than drop it
                entries = {**(self.file.load(_entries) or {}), **entries}
        self.file.store(entries)


def _entries(payload: object) -> dict[str, list[object]]:
    """A stored payload accepted as a mapping; each entry's shape is checked where it is used (checking 10,000s
    here would cost every run), and one of another shape is a miss."""
    if not isinstance(payload, dict):
        raise TypeError("not a mapping")
    return payload
