"""What `git status` does not look at, so that the work tree's fingerprint (dun/core/fingerprint.py) looks at it:
tracked files git is told not to look at (skip-worktree, assume-unchanged: git status never reports their edits),
tracked symbolic links (git sees the link's text, not the file it points at, often outside the work tree), and
submodules and nested repositories (git status says only that one is modified, not what changed in it, and nothing
at all under `submodule.*.ignore`).

The index is listed (`git ls-files -s -v`) only when it changed since the last listing: the list is kept with the
index's stamp in the repository's cache directory, so a run costs one stat and a small read (most repositories
have nothing to list).

Import-light (os, marshal): the replay path computes the fingerprint before the rest of dun loads.
"""

from __future__ import annotations

import os
import stat

from dun.core.cache import env_disabled
from dun.core.cache import stamp as file_stamp

LS_ARGS = ("ls-files", "-z", "-s", "-v")
NOT_LOOKED = b"w"  # skip-worktree or assume-unchanged: git status does not look at the file
LINK = b"l"
SUBMODULE = b"m"
MAX_DEPTH = 4  # nested repositories inside nested repositories
HASHED_TARGET_MAX = 1 << 20


def index_extras(root: str) -> list[tuple[bytes, bytes]]:
    """(kind, path) of every index entry git status does not fully look at: NOT_LOOKED, LINK or SUBMODULE."""
    index = _index_path(root)
    st = file_stamp(index) if index is not None else None
    if index is not None and st is None and not os.path.lexists(index):
        return []  # no index yet (`git init`, nothing added): nothing is tracked, no git to start
    from dun.core.cache.file import CacheFile
    from dun.core.cachedir import cache_dir_path

    cache = CacheFile(os.path.join(cache_dir_path(root), "index.marshal"), "index")
    if st is not None and not env_disabled():
        stored = cache.load(_accept)
        if stored is not None and stored[0] == list(st):
            return stored[1]
    from dun.core.spawn import start_git

    try:
        code, out, _ = start_git(LS_ARGS, root).collect()
    except OSError:
        return []
    extras = parse(out) if code == 0 else []
    if st is not None and code == 0:
        cache.store([list(st), extras])
    return extras


def parse(listing: bytes) -> list[tuple[bytes, bytes]]:
    """The entries of `git ls-files -z -s -v` output that need a look of their own: a tag other than H, or a
    link's or submodule's mode (looked for only when the output holds one at all: 50,000 records take ms)."""
    records = listing.split(b"\0")
    odd = [r for r in records if r[:2] != b"H "]
    if b" 120000 " in listing or b" 160000 " in listing:
        odd += [r for r in records if r[:9] in (b"H 120000 ", b"H 160000 ")]
    out = []
    for record in odd:
        tag, mode, name = record[:1], record[2:8], record.partition(b"\t")[2]
        if not name:
            continue
        if mode == b"160000":
            out.append((SUBMODULE, name))
        elif mode == b"120000":
            out.append((LINK, name))
        elif tag in (b"S", b"s", b"h"):
            out.append((NOT_LOOKED, name))
    return out


def changed_paths(root: str) -> set[str]:
    """Tracked files whose content git status does not vouch for (NOT_LOOKED, LINK): a per-file cache must stat
    them rather than trust git."""
    return {name.decode("utf-8", "surrogateescape") for kind, name in index_extras(root) if kind != SUBMODULE}


def target_hash(path: bytes) -> bytes:
    """What a tracked link points at: a regular file's content (its stamp past HASHED_TARGET_MAX), a directory's
    stamp (its listing), else its type."""
    from dun.core.digest import file_sha256

    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)  # follows the link; a FIFO does not block
    except OSError as exc:
        return f"unreadable:{exc.errno}".encode()
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            return repr((st.st_mtime_ns, st.st_ctime_ns, st.st_ino)).encode()
        if not stat.S_ISREG(st.st_mode):
            return b"special"
        if st.st_size > HASHED_TARGET_MAX:  # a link to a large file (a data set) is not read every run: its stamp
            return repr((st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)).encode()
        with os.fdopen(os.dup(fd), "rb") as fh:
            return file_sha256(fh)
    except OSError as exc:
        return f"unreadable:{exc.errno}".encode()
    finally:
        os.close(fd)


def _index_path(root: str) -> str | None:
    """The index git reads for the work tree at `root`; None when it cannot be told without asking git."""
    if os.environ.get("GIT_INDEX_FILE"):
        return os.path.abspath(os.environ["GIT_INDEX_FILE"])
    if os.environ.get("GIT_DIR"):
        return os.path.join(os.path.abspath(os.environ["GIT_DIR"]), "index")
    dotgit = os.path.join(root, ".git")
    if os.path.isdir(dotgit):
        return os.path.join(dotgit, "index")
    try:
        with open(dotgit, "rb") as fh:  # a linked worktree or a submodule: "gitdir: PATH"
            line = fh.read(4096).split(b"\n", 1)[0]
    except OSError:
        return None
    if not line.startswith(b"gitdir: "):
        return None
    return os.path.join(root, os.fsdecode(line[8:].strip()), "index")


def _accept(payload: object) -> tuple[list[int], list[tuple[bytes, bytes]]]:
    if not isinstance(payload, list) or len(payload) != 2 or not isinstance(payload[1], list):
        raise TypeError("another shape")
    st, extras = payload
    for kind, name in extras:
        if not isinstance(kind, bytes) or not isinstance(name, bytes):
            raise TypeError("another shape")
    return st, [(kind, name) for kind, name in extras]
