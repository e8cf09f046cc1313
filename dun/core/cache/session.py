"""What one run of dun does with its caches: whether it reads them, and what it consulted.

A `Caches` is made once per command (`dun.engine.session.open_session`) and handed to every cache the run uses:
`--no-cache` or `DUN_NO_CACHE=1` (read here, once) make it read nothing and still store what the run found, so the
next plain run starts from the truth. `consulted` records every look (a file's stamp, or whether a path exists) a
cache key was built from: a run whose results all came from caches can be replayed while these and the work tree
are unchanged (dun/engine/replay.py).
"""

from __future__ import annotations

import threading

from dun.core.cache import env_disabled


class Consulted:
    """The looks a run's cache keys were built from: path -> stamp, None (missing) or a bool (exists)."""

    def __init__(self) -> None:
        self._looks: dict[str, object] = {}
        self._lock = threading.Lock()

    def record(self, path: str, look: object) -> None:
        with self._lock:
            # a stamp says whether the path exists (None: missing) and more: an exists-flag of the same path (a
            # path-exists trigger that is also an input, MISSION.md) must not replace it
            if isinstance(look, bool) and not isinstance(self._looks.get(path, True), bool):
                return
            self._looks[path] = look

    def looks(self) -> dict[str, object]:
        with self._lock:
            return dict(self._looks)


class Caches:
    """Whether this run reads its caches (`read`), the recorder of what they consulted, and the newest change
    among the work-tree files the per-file caches read (`reads`): what tells whether a result can be stored without
    a second look at the tree (dun/engine/reuse.py)."""

    def __init__(self, fresh: bool = False) -> None:
        self.read = not (fresh or env_disabled())
        self.consulted = Consulted()
        self.reads = ReadTimes()
        self.trees = Trees()

    def record(self, path: str, look: object) -> None:
        self.consulted.record(path, look)


class Trees:
    """The trees this session's looks at the work tree found, so that git builds each once (dun/core/snapshot.py):
    a commit's tree (it never changes), a changed work tree's tree by root and fingerprint (the latest few: the
    loop's look after an iteration and before the next one see the same content), each repository's index file.
    Kept whatever `read` says: nothing here outlives the session or comes from disk."""

    KEEP = 8

    def __init__(self) -> None:
        self.commits: dict[str, str] = {}  # commit -> its tree
        self.index: dict[str, str] = {}  # root -> its index file (`git rev-parse --git-path index`)
        self._dirty: dict[str, str] = {}  # root and fingerprint -> tree
        self._lock = threading.Lock()

    def dirty(self, key: str) -> str | None:
        with self._lock:
            return self._dirty.get(key)

    def keep_dirty(self, key: str, tree: str) -> None:
        with self._lock:
            while len(self._dirty) >= self.KEEP:
                del self._dirty[next(iter(self._dirty))]
            self._dirty[key] = tree


class ReadTimes:
    """The newest mtime or ctime of the files read through a stamp, apart for files `git status` named as changed
    (their content is hashed into the tree's fingerprint after git looked) and the others (git saw them clean)."""

    def __init__(self) -> None:
        self.changed_ns = 0
        self.clean_ns = 0
        self._lock = threading.Lock()

    def note(self, st: tuple[int, ...] | None, changed: bool) -> None:
        if st is None or len(st) != 5:
            return
        newest = max(st[1], st[2])
        with self._lock:
            if changed:
                self.changed_ns = max(self.changed_ns, newest)
            else:
                self.clean_ns = max(self.clean_ns, newest)
