"""dun's one cache module: every cache (results, replay, catalog, config, globs, per-file reads, coverage) is built
on what this package holds, so each rule is written once.

- `env_disabled`: the only reader of `DUN_NO_CACHE`; a session reads it once (`Caches`).
- `stamp`: what tells a file unchanged, as git's index keeps it: size, mtime and ctime in nanoseconds, inode, mode.
- `racy`: git's racy-clean rule: a file modified within `RACY_WINDOW_NS` of a look may change again unseen (a
  same-size rewrite inside the clock's granularity), so nothing read from it is kept.
- `CacheFile` (dun/core/cache/file.py): a versioned file that reads only a regular file under a size cap, without
  blocking or following a link, and takes anything unexpected for a miss.
- `Caches` (dun/core/cache/session.py): whether this run reads caches, and the `Consulted` recorder of every look
  a cache key was built from, owned by the session.

Import-light on purpose (os only): `dun check`'s replay path (dun/engine/replay.py) needs it before the rest of dun.
"""

from __future__ import annotations

import os
from stat import S_ISREG

# One version for every cache file's layout: a change of any layout bumps it, and every older file is a miss.
VERSION = 7
RACY_WINDOW_NS = 3_000_000_000
CONTENT_MAX = 1 << 20  # a racy file larger than this is not read for its content: nothing made on it is kept
# The coarsest step of a file timestamp on Linux's own filesystems (one kernel tick at HZ=100): a file written
# after a moment T carries a time later than T less this.
CLOCK_TICK_NS = 10_000_000

TYPE_CHECKING = False  # not typing's: this module loads before everything else
if TYPE_CHECKING:
    from collections.abc import Iterable

    Stamp = tuple[int, int, int, int, int]


def env_disabled() -> bool:
    """`DUN_NO_CACHE` set to anything but empty or 0: run everything fresh (and store what was found)."""
    return os.environ.get("DUN_NO_CACHE", "") not in ("", "0")


def stamp(path: str | bytes | os.PathLike[str]) -> Stamp | None:
    """(size, mtime_ns, ctime_ns, inode, mode) of the file at `path` (links followed: what a reader gets); None when
    it is missing or unreadable. ctime catches what mtime misses: a same-size rewrite with the mtime set back."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_mode


def look(key: str, stored: object) -> object:
    """The look at `key` as it is now, comparable with `stored`: for a path, whether it exists (for a stored bool)
    else its stamp; an environment variable's value (`env:NAME`); a hash of git's refs or config
    (`git-refs:ROOT\0PATTERN`, `git-config:ROOT\0KEY`, dun/engine/inputs.py); whether anything beneath a directory
    changed since the stored look (`tree:PATH`, dun/core/cache/tree.py)."""
    if key.startswith("env:"):
        return os.environ.get(key[4:])
    if key.startswith(("git-refs:", "git-config:")):
        from dun.core.cache.gitlook import git_look

        return git_look(key)
    if key.startswith("tree:"):
        from dun.core.cache.tree import tree_look

        return tree_look(key[5:], stored)
    if isinstance(stored, tuple) and stored[:1] == ("content",):
        return content_look(key)
    return os.path.exists(key) if isinstance(stored, bool) else stamp(key)


def content_look(path: str) -> object:
    """("content", size, SHA-256) of a regular file of at most CONTENT_MAX bytes, read without blocking or following
    a last link; its stamp otherwise. What a file written within the racy window is looked at by (`settle`): its
    stamp cannot tell a same-size rewrite in the same clock tick, its content can."""
    from dun.core.digest import file_sha256

    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except (OSError, ValueError):
        return None
    try:
        st = os.fstat(fd)
        if not S_ISREG(st.st_mode) or st.st_size > CONTENT_MAX:
            return stamp(path)
        with os.fdopen(os.dup(fd), "rb") as fh:
            return ("content", st.st_size, file_sha256(fh).hex())
    except OSError:
        return stamp(path)
    finally:
        os.close(fd)


def settle(looks: Iterable[tuple[str, object]], reference_ns: int | None = None) -> list[tuple[str, object]]:
    """The looks, each file's stamp within the racy window replaced by its content look (`content_look`), so that a
    result made on a file just written (by the check an `after:` chain runs first) is kept, and compared by content
    until its stamp settles. Keys that are not paths (`env:`, `tree:`, ...) are left as they are."""
    import time

    now = time.time_ns() if reference_ns is None else reference_ns
    return [(key, content_look(key) if racy(st, now) and key.startswith("/") else st) for key, st in looks]


def racy(st: object, reference_ns: int | None = None) -> bool:
    """Whether a file with stamp `st` was modified within the racy window before `reference_ns` (now by default),
    or after it: what was read from it cannot be told from a rewrite that keeps the stamp. As git's rule, on the
    mtime (ctime cannot be set back, so files dated back on purpose stay usable). A look that is not a stamp (a
    missing file, an exists-flag) is never racy."""
    if not isinstance(st, tuple) or len(st) != 5:
        return False
    import time

    limit = (time.time_ns() if reference_ns is None else reference_ns) - RACY_WINDOW_NS
    return bool(st[1] >= limit)


def any_racy(looks: Iterable[tuple[str, object]], reference_ns: int | None = None) -> bool:
    """`racy` for any look of an iterable of (path, look) pairs."""
    import time

    now = time.time_ns() if reference_ns is None else reference_ns
    return any(racy(st, now) for _, st in looks)
