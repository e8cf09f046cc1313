"""A per-repository cache of per-file results, so repeated `dun check` runs re-read only changed files.

Entries are keyed by path and validated by the file's stamp (`dun.core.cache.stamp`: size, mtime, ctime, inode,
mode). Results read from files changed within the racy window are not stored: a same-size rewrite inside the clock's
granularity could go unseen. The cache lives in the repository's cache directory (dun/core/cachedir.py), never in
the repository.
"""

from __future__ import annotations

import marshal
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

    Stored by columns (`_Columns`): the paths and stamps as two joined strings, each distinct value and commit once,
    and per entry two small indices. Reading 7,500 entries as [stamp, value, commit] lists cost 5.8 ms a run; the
    columns load in a fifth of that, and an entry is built only when asked for by path (`get`, on a changed file).
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
        self._stored = _Columns.load(self.file) if self.enabled else _Columns()
        self._new: dict[str, list[object]] = {}  # entries put or updated by this run, over the stored ones
        self._dirty = False
        self._lock = threading.Lock()

    @staticmethod
    def stamp(path: Path | str) -> Stamp | None:
        return stamp(path)

    def _git(self) -> None:
        if self._view is not None:
            view = self._view() if callable(self._view) else self._view
            self._view = None
            if view is not None:
                self._head, self._changed, self._looked_ns = view

    def _entry(self, key: str) -> list[object] | None:
        entry = self._new.get(key)
        return entry if entry is not None else self._stored.entry(key)

    def vouched_many(self, keys: list[str]) -> dict[str, Any]:
        """The values of the keys git vouches for (same commit as when read, the file clean now), in one pass over
        10,000s of files; the other keys need `get` with a stamp."""
        self._git()
        head, changed = self._head, self._changed
        if head is None or not self.enabled:
            return {}
        out = self._stored.at_commit(keys, head, changed)
        for key, entry in self._new.items():  # this run's own, usually none yet
            if key not in changed and entry[2] == head:
                out[key] = entry[1]
        return out

    def get(self, key: str, st: Stamp | None) -> Any:
        if st is None:
            return None
        self._git()
        self.caches.reads.note(st, key in self._changed)  # what a result was made from: read now, or as stored
        if not self.enabled:
            return None
        entry = self._entry(key)
        if type(entry) is list and len(entry) == 3 and entry[0] == st:
            head = self._clean_head(key) if not racy(st, self._looked_ns) else None
            if entry[2] != head:
                with self._lock:  # the file is still as read, now clean at this commit (or no longer clean)
                    self._new[key] = [entry[0], entry[1], head]
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
            self._new[key] = [st, value, head]
            self._dirty = True

    def save(self, keep: set[str] | None = None) -> None:
        """Write the cache if anything changed; `keep` drops entries of files no longer looked at. A run that read
        nothing (`--no-cache`) writes what it found: the next run starts from the truth."""
        with self._lock:
            stale = self.enabled and keep is not None and self._stored.any_outside(keep)
            if not self._dirty and not stale:
                return
            base = self._stored if self.enabled else _Columns.load(self.file)  # not read back: merged, not dropped
            payload = base.merged(self._new, keep)
            self._dirty = False
        if payload is not None:
            self.file.store(payload)


class _Columns:
    """Stored entries by columns: (paths joined by NUL, stamps as `size,mtime,ctime,inode,mode` joined by NUL,
    the distinct commits, each entry's commit index as 2-byte integers, the distinct values, each entry's value
    index as 4-byte integers, both native as `memoryview.cast` reads them). Anything of another shape is a miss
    (an empty cache)."""

    def __init__(self, keys: list[str] | None = None, stamps: str = "", commits: tuple[object, ...] = (),
                 commit_of: memoryview | None = None, values: tuple[object, ...] = (),
                 value_of: memoryview | None = None) -> None:
        self.keys = keys or []
        self._stamps_text = stamps
        self._stamps: list[str] | None = None
        self.commits = commits
        self.commit_of = commit_of if commit_of is not None else memoryview(b"").cast("H")
        self.values = values
        self.value_of = value_of if value_of is not None else memoryview(b"").cast("I")
        self._index: dict[str, int] | None = None

    @classmethod
    def load(cls, file: CacheFile) -> _Columns:
        return file.load(cls._accept) or cls()

    @classmethod
    def _accept(cls, payload: object) -> _Columns:
        if not isinstance(payload, tuple) or len(payload) != 6:
            raise TypeError("another shape")
        keys_text, stamps, commits, commit_of, values, value_of = payload
        if not (isinstance(keys_text, str) and isinstance(stamps, str) and isinstance(commits, tuple)
                and isinstance(values, tuple) and isinstance(commit_of, bytes) and isinstance(value_of, bytes)):
            raise TypeError("another shape")
        keys = keys_text.split("\0") if keys_text else []
        by_commit, by_value = memoryview(commit_of).cast("H"), memoryview(value_of).cast("I")
        if (len(by_commit) != len(keys) or len(by_value) != len(keys) or max(by_commit, default=0) >= len(commits)
                or max(by_value, default=0) >= len(values) or (keys and stamps.count("\0") != len(keys) - 1)):
            raise ValueError("inconsistent columns")
        return cls(keys, stamps, commits, by_commit, values, by_value)

    def _index_of(self, key: str) -> int | None:
        if self._index is None:
            self._index = dict(zip(self.keys, range(len(self.keys)), strict=True))
        return self._index.get(key)

    def _stamp_texts(self) -> list[str]:
        if self._stamps is None:
            self._stamps = self._stamps_text.split("\0") if self.keys else []
        return self._stamps

    def entry(self, key: str) -> list[object] | None:
        """[stamp, value, commit] of `key`, None when not stored (or its stamp does not read)."""
        i = self._index_of(key)
        if i is None:
            return None
        try:
            st = tuple(int(part) for part in self._stamp_texts()[i].split(","))
        except ValueError:
            return None
        return [st, self.values[self.value_of[i]], self.commits[self.commit_of[i]]]

    def at_commit(self, keys: list[str], commit: str, changed: set[str]) -> dict[str, Any]:
        """The values of `keys` read at `commit` whose files `changed` does not name."""
        try:
            wanted = self.commits.index(commit)
        except ValueError:
            return {}
        if keys == self.keys and set(self.commit_of) == {wanted}:
            # the usual case: the same paths as stored, every entry read at this commit; no per-path lookup
            out = dict(zip(keys, map(self.values.__getitem__, self.value_of), strict=True))
            for key in changed:
                out.pop(key, None)
            return out
        self._index_of("")
        index, commit_of, value_of, values = self._index, self.commit_of, self.value_of, self.values
        assert index is not None
        out = {}
        for key in keys:
            i = index.get(key)
            if i is not None and commit_of[i] == wanted and key not in changed:
                out[key] = values[value_of[i]]
        return out

    def any_outside(self, keep: set[str]) -> bool:
        return not keep.issuperset(self.keys)

    def merged(self, new: dict[str, list[object]], keep: set[str] | None) -> tuple[object, ...] | None:
        """The payload of these entries with `new` over them, less the paths outside `keep` (when given); the
        values and commits no entry uses are left out. None when a new value cannot be stored (marshal)."""
        keys: list[str] = []
        stamps: list[str] = []
        commits: dict[object, int] = {}
        values: list[object] = []
        slot: dict[bytes, int] = {}  # a value's marshal bytes -> its index in `values`
        moved: dict[int, int] = {}  # a stored value's index -> its index in `values`
        commit_of: list[int] = []
        value_of: list[int] = []
        texts = self._stamp_texts()
        for i, key in enumerate(self.keys):
            if key in new or (keep is not None and key not in keep):
                continue
            keys.append(key)
            stamps.append(texts[i])
            commit_of.append(commits.setdefault(self.commits[self.commit_of[i]], len(commits)))
            old = self.value_of[i]
            if old not in moved:
                moved[old] = len(values)
                values.append(self.values[old])
            value_of.append(moved[old])
        if new:
            for i, value in enumerate(values):
                slot.setdefault(marshal.dumps(value), i)  # type: ignore[arg-type]
        for key, (st, value, commit) in new.items():
            if keep is not None and key not in keep:
                continue
            try:
                packed = marshal.dumps(value)  # type: ignore[arg-type]
            except ValueError:
                return None
            if packed not in slot:
                slot[packed] = len(values)
                values.append(value)
            keys.append(key)
            stamps.append(",".join(map(str, st)))  # type: ignore[call-overload]
            commit_of.append(commits.setdefault(commit, len(commits)))
            value_of.append(slot[packed])
        if len(commits) > 0xFFFF:
            return None  # more distinct commits than entries can name: not kept (as a store that failed)
        from array import array

        return ("\0".join(keys), "\0".join(stamps), tuple(commits), array("H", commit_of).tobytes(), tuple(values),
                array("I", value_of).tobytes())
