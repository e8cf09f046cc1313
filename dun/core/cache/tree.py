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


def changed_since(path: str, since_ns: int) -> bool:
    """Whether an entry beneath `path` (itself included) has a ctime later than `since_ns`. Links are not followed
    but for those in its first two levels that lead to a directory outside it (`npm link`, a `file:` or `link:`
    dependency, a workspace package elsewhere: `node_modules/NAME`, `node_modules/@scope/NAME`), whose trees are
    looked at the same way, each real directory once, at most MAX_LINKED of them (past it, changed)."""
    visited: set[str] = set()
    todo = [path]
    while todo:
        top = todo.pop()
        real = os.path.realpath(top)
        if real in visited:
            continue
        visited.add(real)
        if len(visited) > MAX_LINKED or _changed(top, since_ns):
            return True
        todo += [target for target in _linked_out(top) if os.path.realpath(target) not in visited]
    return False


def _changed(path: str, since_ns: int) -> bool:
    seconds, nanos = divmod(since_ns, 1_000_000_000)
    try:
        found = _find(path, "-newerct", f"@{seconds}.{nanos:09d}", "-print", "-quit")
    except subprocess.TimeoutExpired:
        return True  # a tree too large to look at in FIND_TIMEOUT_S: unknown, so nothing is reused
    return bool(found) if found is not None else _walk_changed(path, since_ns)


def _linked_out(path: str) -> list[str]:
    """The links in the first two levels beneath `path` that lead to a directory outside it."""
    try:
        found = _find(path, "-mindepth", "1", "-maxdepth", "2", "-type", "l", "-print0", prune=False)
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
    skip: list[str] = []
    for name in PRUNED if prune else ():
        skip += ["-name", name, "-o"]
    argv = ["find", "-P", path, *(["(", *skip[:-1], ")", "-prune", "-o"] if skip else []), *test]
    try:
        done = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, timeout=FIND_TIMEOUT_S,
                              env={**os.environ, "LC_ALL": "C"})
    except OSError:
        return None
    return done.stdout if done.returncode == 0 else None


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
