"""A tree look: whether anything beneath a directory changed since a moment, for the installed dependencies a check
reads (the project's site-packages, `node_modules`), where a file rewritten in place (opened, truncated, written:
same inode, no listing moves) is seen by nothing cheaper.

A look is `("tree", T)`: "as of T". Taking it costs nothing but the clock; comparing it with a stored one walks the
tree for any entry whose ctime is later than the stored T (a write, a truncation, a chmod, an entry added, removed
or renamed beneath a directory: each sets a ctime, which nothing can set back but the clock), stopping at the first.
When none is, the stored look holds and is returned as it was, so the moment stays the one before the check ran:
a write while it ran is seen by the look after it. T is taken a clock tick before the look (a timestamp lags the
clock by up to a tick), so a write just before it only costs one run more.

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
PRUNED = ("__pycache__", ".cache", ".vite")
LIMIT = 500_000  # entries the Python walk looks at; a larger tree is taken as changed


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
    """Whether an entry beneath `path` (itself included, links not followed) has a ctime later than `since_ns`."""
    seconds, nanos = divmod(since_ns, 1_000_000_000)
    prune: list[str] = []
    for name in PRUNED:
        prune += ["-name", name, "-o"]
    argv = ["find", "-P", path, "(", *prune[:-1], ")", "-prune", "-o", "-newerct", f"@{seconds}.{nanos:09d}",
            "-print", "-quit"]
    try:
        done = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, timeout=120,
                              env={**os.environ, "LC_ALL": "C"})
    except (OSError, subprocess.SubprocessError):
        done = None
    if done is not None and done.returncode == 0:
        return bool(done.stdout)
    return _walk_changed(path, since_ns)  # no find, one without -newerct, or a part it could not read


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
