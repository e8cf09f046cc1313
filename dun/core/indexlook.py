"""What `git status` does not look at, so that the work tree's fingerprint (dun/core/fingerprint.py) looks at it:
tracked files git is told not to look at (skip-worktree, assume-unchanged: git status never reports their edits),
tracked symbolic links (git sees the link's text, not the file it points at, often outside the work tree), and
submodules and nested repositories (git status says only that one is modified, not what changed in it, and nothing
at all under `submodule.*.ignore`), and executable bits under `core.fileMode=false` (`mode_changes`).

The index is listed (`git ls-files -s -v`) only when it changed since the last listing: the list is kept with the
index's stamp in the repository's cache directory, so a run costs one stat and a small read (most repositories
have nothing to list).

Import-light (os, marshal): the replay path computes the fingerprint before the rest of dun loads.
"""

from __future__ import annotations

import os
import stat
import time

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

    cache = CacheFile(os.path.join(cache_dir_path(root), "index.marshal"), "index", code=(__file__,))
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


def mode_changes(root: str) -> bytes:
    """Under `core.fileMode=false` git status misses a `chmod +x` (or -x) of a tracked file, which changes what a
    check that runs it does: the tracked files whose executable bit differs from the index's, as `git diff-files`
    sees them with the bit looked at (no walk of untracked directories: a stat per tracked file), each with the mode
    it has. Empty when git looks at the bit itself, or when the filesystem keeps no executable bits (probed as git
    does at `git init`: nothing can change then; dun never pins core.fileMode, which on such a filesystem would
    report every file modified). On a filesystem that reports every file executable the list is long but the same
    from run to run: it changes only with a mode."""
    from dun.core.gitsafe import file_mode_off, git_dirs

    dirs = git_dirs(root, dict(os.environ)) if file_mode_off(root) else None
    if dirs is None or not _keeps_exec_bits(dirs[0]):
        return b""
    from dun.core.spawn import start_git

    try:
        code, out, _ = start_git(("-c", "core.fileMode=true", "diff-files", "--raw", "-z"), root).collect()
    except OSError:
        return b"git failed"
    if code != 0:
        return b"git failed"
    fields = out.split(b"\0")
    changed = [b"%s\0%s" % (path, head[8:14]) for head, path in zip(fields[::2], fields[1::2], strict=False)
               if head[1:7] != head[8:14]]
    return b"\0".join(changed)


def filtered_files(root: str) -> bytes:
    """Under DUN_GIT_FILTERS=1 dun's git runs the clean filters the repository's config defines, and git status
    compares what a filter makes of a file, not the file: an LFS-like filter that drops the content hides every edit.
    The tracked files a filter driver applies to (`git ls-files ':(attr:filter=NAME)'`), each with its content (its
    stamp past HASHED_TARGET_MAX). Empty without the opt-in (filters are off: git sees the bytes) or without a
    driver in the config, at the cost of one environment look."""
    if os.environ.get("DUN_GIT_FILTERS") != "1":
        return b""
    from dun.core.gitsafe import filter_drivers

    drivers = sorted(filter_drivers(root, dict(os.environ)))
    if not drivers:
        return b""
    from dun.core.spawn import start_git

    try:
        code, out, _ = start_git(("ls-files", "-z", "--", *(f":(attr:filter={d})" for d in drivers)), root).collect()
    except OSError:
        return b"git failed"
    if code != 0:
        return b"git failed"
    broot = os.fsencode(root)
    return b"".join(name + b"\0" + _pointed_at(os.path.join(broot, name)) + b"\0"
                    for name in out.split(b"\0") if name)


def _keeps_exec_bits(gitdir: str) -> bool:
    """Whether the filesystem holding `gitdir` keeps an executable bit set and cleared (git's own probe at `git init`,
    on a file of its own made there); True when it cannot be told (the look then costs, but misses nothing)."""
    probe = os.path.join(gitdir, f"dun-mode-probe-{os.getpid()}")
    try:
        fd = os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0), 0o600)
    except OSError:
        return True
    try:
        os.fchmod(fd, 0o700)
        on = bool(os.fstat(fd).st_mode & stat.S_IXUSR)
        os.fchmod(fd, 0o600)
        return on and not os.fstat(fd).st_mode & stat.S_IXUSR
    except OSError:
        return True
    finally:
        os.close(fd)
        try:  # noqa: SIM105 (contextlib is not imported on the replay path)
            os.unlink(probe)
        except OSError:
            pass


def changed_paths(root: str) -> set[str]:
    """Tracked files whose content git status does not vouch for (NOT_LOOKED, LINK): a per-file cache must stat
    them rather than trust git."""
    return {name.decode("utf-8", "surrogateescape") for kind, name in index_extras(root) if kind != SUBMODULE}


def target_hash(path: bytes) -> bytes:
    """Where a link leads, every link on the way resolved (an ignored link to a directory on the way can move it
    outside the repository or back, and a check refuses to read what leads outside), and what it points at: a regular
    file's content (its stamp past HASHED_TARGET_MAX), the stamps of everything beneath a directory (`tree_hash`),
    else its type."""
    return os.path.realpath(path) + b"\0" + _pointed_at(path)


def _pointed_at(path: bytes) -> bytes:
    from dun.core.digest import file_sha256

    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)  # follows the link; a FIFO does not block
    except OSError as exc:
        return f"unreadable:{exc.errno}".encode()
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            return tree_hash(path)
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


def tree_hash(path: bytes) -> bytes:
    """A hash of the stamp of every file and directory beneath `path` (links to directories followed, each real
    directory once): what a check reads through a link to a directory, often outside the work tree, where git sees
    only the link. Past WALK_LIMIT entries, or with an entry modified within the racy window, a value no other look
    has: unknown, so nothing is reused (or stored) while it lasts."""
    from dun.core.cache import racy
    from dun.core.digest import sha256
    from dun.core.walk import WALK_LIMIT, TooMany, walk

    digest = sha256(b"tree")
    now = time.time_ns()
    try:
        for dirpath, _, filenames in walk(path, WALK_LIMIT):
            prefix = dirpath[len(path):] + b"/"  # relative to `path`: the same tree seen elsewhere hashes the same
            for name in (b".", *filenames):
                st = file_stamp(os.path.join(dirpath, name))
                if racy(st, now):
                    return b"unknown:racy:%d" % time.time_ns()
                digest.update(b"%s%s\0%r\0" % (prefix, name, st))
    except TooMany:
        return b"unknown:too many entries:%d" % time.time_ns()
    return digest.hexdigest().encode()


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
