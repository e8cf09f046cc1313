"""A tree look: whether anything beneath a directory changed since a moment, for the installed dependencies a check
reads (the project's site-packages, `node_modules`), where a file rewritten in place (opened, truncated, written:
same inode, no listing moves) is seen by nothing cheaper.

A look is `("tree", T)`: "as of T". Taking it costs nothing but the clock; comparing it with a stored one walks the
tree for any entry whose ctime is later than the stored T (a write, a truncation, a chmod, an entry added, removed
or renamed beneath a directory: each sets a ctime, which nothing can set back but the clock), stopping at the first.
When none is, the stored look holds and is returned as it was, so the moment stays the one before the check ran:
a write while it ran is seen by the look after it. T is taken a clock tick before the look (a timestamp lags the
clock by up to a tick), so a write just before it only costs one run more.

Links are not followed, but for those in a tree's first two levels that lead to a directory outside it: `npm link`,
`file:` and `link:` dependencies and workspace packages are links at `node_modules/NAME` or `node_modules/@scope/NAME`,
and what they lead to is read as installed code (each real directory once, at most MAX_LINKED).

The walk is GNU or BSD find's (`-newerct`: about 2 us of CPU an entry, 50 ms for a 24,000-entry site-packages),
else a Python one bounded by LIMIT entries (past it, changed). Tool caches written while checks run (PRUNED) are
left out: what they hold is made from the rest, and a run that fills one must not make every next run miss.
"""

from __future__ import annotations

import os
import subprocess
import time

from dun.core.cache import CLOCK_TICK_NS

TYPE_CHECKING = False  # not typing's: this module loads on dun check's replayed path
if TYPE_CHECKING:
    from collections.abc import Iterable

PREFIX = "tree:"
PRUNED = ("__pycache__", ".cache", ".vite", ".git")  # .git: a sibling checkout's own git metadata
LIMIT = 500_000  # entries the Python walk looks at; a larger tree is taken as changed
FIND_TIMEOUT_S = 10  # a walk this long (millions of entries) is no cheaper than running the check: unknown
MAX_LINKED = 100  # directories outside a tree that links in it lead to, looked at with it


def tree_look(path: str, stored: object) -> object:
    """The look at the directory `path` now, comparable with `stored`: `stored` itself when nothing beneath it
    changed since its moment, else a new look (None when `path` is not a directory)."""
    now = time.time_ns() - CLOCK_TICK_NS
    if not os.path.isdir(path):
        return None
    if (isinstance(stored, tuple) and len(stored) == 2 and stored[0] == "tree" and isinstance(stored[1], int)
            and not changed_since(path, stored[1])):
        return stored
    return ("tree", now)


class Walks:
    """The tree looks of one run compared with stored ones. `begin` starts every tree's walk at once (find processes,
    running beside `git status` and whatever dun does meanwhile); `look` answers as `dun.core.cache.look` does, each
    tree walked once however many stored looks name it (each JavaScript check's inputs name node_modules, each as of
    its own moment): a tree unchanged since the earliest of them is unchanged since each later one; only a tree
    changed since an earlier moment is walked again for a later one."""

    def __init__(self) -> None:
        self._begun: dict[str, tuple[int, Begun]] = {}
        self._unchanged: dict[str, int] = {}  # path -> the earliest moment it is known unchanged since
        self._changed: dict[str, int] = {}  # path -> the latest moment it is known changed since

    def begin(self, looks: Iterable[tuple[str, object]]) -> None:
        earliest: dict[str, int] = {}
        for key, stored in looks:
            since = _moment(key, stored)
            if since is not None:
                path = key[len(PREFIX):]
                earliest[path] = min(since, earliest.get(path, since))
        for path, since in earliest.items():
            if path not in self._begun and os.path.isdir(path):
                self._begun[path] = (since, begin(path, since))

    def look(self, key: str, stored: object) -> object:
        since = _moment(key, stored)
        if since is None:
            from dun.core.cache import look

            return look(key, stored)
        path = key[len(PREFIX):]
        now = time.time_ns() - CLOCK_TICK_NS
        if not os.path.isdir(path):
            return None
        if path in self._begun:
            walked, first = self._begun.pop(path)
            (self._changed if changed_since(path, walked, first) else self._unchanged)[path] = walked
        if since >= self._unchanged.get(path, since + 1):
            return stored
        if path not in self._changed or since > self._changed[path]:  # else changed since an earlier moment
            if not changed_since(path, since):
                self._unchanged[path] = since
                return stored
            self._changed[path] = since
        return ("tree", now)

    def close(self) -> None:
        """Stop the walks begun and not looked at (a miss decided without them)."""
        for _, (walk, links) in self._begun.values():
            _find_stop(walk)
            _find_stop(links)
        self._begun.clear()


def _moment(key: str, stored: object) -> int | None:
    """The moment of a stored tree look at `key`; None for any other look."""
    if (key.startswith(PREFIX) and isinstance(stored, tuple) and len(stored) == 2 and stored[0] == "tree"
            and isinstance(stored[1], int)):
        return stored[1]
    return None


def changed_since(path: str, since_ns: int, begun: Begun | None = None) -> bool:
    """Whether an entry beneath `path` (itself included) has a ctime later than `since_ns`. Links are not followed
    but for those in its first two levels that lead to a directory outside it (`npm link`, a `file:` or `link:`
    dependency, a workspace package elsewhere: `node_modules/NAME`, `node_modules/@scope/NAME`), whose trees are
    looked at the same way, each real directory once, at most MAX_LINKED of them (past it, changed). `begun`: the
    finds of `begin` for `path` itself, started earlier."""
    visited: set[str] = set()
    todo = [path]
    while todo:
        top = todo.pop()
        real = os.path.realpath(top)
        if real in visited:
            continue
        visited.add(real)
        first = begun if top is path else None
        if len(visited) > MAX_LINKED or _changed(top, since_ns, first):
            if first is not None:
                _find_stop(first[1])
            return True
        todo += [target for target in _linked_out(top, first) if os.path.realpath(target) not in visited]
    return False


Begun = tuple["subprocess.Popen[bytes] | None", "subprocess.Popen[bytes] | None"]  # the walk's find, the links'


def begin(path: str, since_ns: int) -> Begun:
    """The finds `changed_since(path, since_ns)` runs first, started now, to run beside whatever dun does next."""
    return _find_start(path, *_newer(since_ns)), _find_start(path, *_LINKS, prune=False)


def _newer(since_ns: int) -> tuple[str, ...]:
    seconds, nanos = divmod(since_ns, 1_000_000_000)
    return "-newerct", f"@{seconds}.{nanos:09d}", "-print", "-quit"


_LINKS = ("-mindepth", "1", "-maxdepth", "2", "-type", "l", "-print0")


def _changed(path: str, since_ns: int, begun: Begun | None = None) -> bool:
    try:
        found = _find_end(begun[0]) if begun is not None else _find(path, *_newer(since_ns))
    except subprocess.TimeoutExpired:
        return True  # a tree too large to look at in FIND_TIMEOUT_S: unknown, so nothing is reused
    return bool(found) if found is not None else _walk_changed(path, since_ns)


def _linked_out(path: str, begun: Begun | None = None) -> list[str]:
    """The links in the first two levels beneath `path` that lead to a directory outside it."""
    try:
        found = _find_end(begun[1]) if begun is not None else _find(path, *_LINKS, prune=False)
    except subprocess.TimeoutExpired:
        found = None
    if found is None:  # no find: the Python walk's two levels
        found = b"\0".join(os.path.join(os.fsencode(path), os.fsencode(name))
                           for name in _two_levels(path) if os.path.islink(os.path.join(path, name)))
    inside = os.path.realpath(path).rstrip("/") + "/"
    out = []
    for link in filter(None, found.split(b"\0")):
        target = os.path.realpath(link)
        if os.path.isdir(target) and not (os.fsdecode(target).rstrip("/") + "/").startswith(inside):
            out.append(os.fsdecode(target))
    return out


def _two_levels(path: str) -> list[str]:
    out: list[str] = []
    try:
        with os.scandir(path) as top:
            for entry in top:
                out.append(entry.name)
                if entry.is_dir(follow_symlinks=False) and entry.name not in PRUNED:
                    with os.scandir(entry.path) as below:
                        out += [os.path.join(entry.name, e.name) for e in below]
    except OSError:
        pass
    return out


def _find(path: str, *test: str, prune: bool = True) -> bytes | None:
    """What find prints for `test` beneath `path`, tool caches pruned; None when find cannot tell (none installed,
    one without -newerct, a part it could not read). Raises subprocess.TimeoutExpired past FIND_TIMEOUT_S."""
    return _find_end(_find_start(path, *test, prune=prune))


def _find_start(path: str, *test: str, prune: bool = True) -> subprocess.Popen[bytes] | None:
    """`_find` begun: its process, to be collected by `_find_end`; None when no find could be started."""
    skip: list[str] = []
    for name in PRUNED if prune else ():
        skip += ["-name", name, "-o"]
    argv = ["find", "-P", path, *(["(", *skip[:-1], ")", "-prune", "-o"] if skip else []), *test]
    try:
        return subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                env={**os.environ, "LC_ALL": "C"})
    except OSError:
        return None


def _find_end(proc: subprocess.Popen[bytes] | None) -> bytes | None:
    if proc is None:
        return None
    try:
        out, _ = proc.communicate(timeout=FIND_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise
    return out if proc.returncode == 0 else None


def _find_stop(proc: subprocess.Popen[bytes] | None) -> None:
    if proc is not None:
        proc.kill()
        proc.communicate()


def _walk_changed(path: str, since_ns: int) -> bool:
    from dun.core.walk import TooMany, walk

    try:
        for dirpath, dirnames, filenames in walk(path, LIMIT, follow=False):
            dirnames[:] = [d for d in dirnames if d not in PRUNED]
            for name in (".", *filenames):  # a directory is looked at as it is entered
                try:
                    if os.lstat(os.path.join(dirpath, name)).st_ctime_ns > since_ns:
                        return True
                except OSError:
                    return True  # gone while walked
    except TooMany:
        return True
    return False
