"""The work tree's fingerprint, from one `git status --porcelain=v2 --branch -z --untracked-files=all` (with
`--ignored=matching` in a Python project, `dun.core.spawn.status_args`).

Import-light on purpose (os, stat, and sha256 without OpenSSL): `dun check`'s replay path (dun/engine/replay.py)
compares it before the rest of dun loads.
"""

from __future__ import annotations

import os
import stat
import time

from dun.core.digest import file_sha256, sha256

TYPE_CHECKING = False  # not typing's: this module loads before the rest of dun
if TYPE_CHECKING:
    from dun.core.spawn import Spawned

_FIELDS = {b"1 ": 9, b"2 ": 10, b"u ": 11, b"? ": 2}  # space-separated fields of each kind of status record
# Ignored files a test runner reads on its own, whatever git ignores (git names them in a Python project): pytest
# collects an ignored test module or conftest.py under its paths; the code imports a generated `_version.py` or an
# extension built in place. Their content is part of the fingerprint; every other ignored entry (`.venv/`,
# `__pycache__/`, `.coverage`, build output) is not, nor what an ignored directory holds (git names the directory
# without walking it).
IGNORED_SOURCES = (b".py", b".so", b".pyd")


def entries(status: bytes) -> list[tuple[bytes, bytes]]:
    """(head, path) of every changed (`1`, `2`, `u`) and untracked (`?`) record; the head is the record's first
    four bytes: its kind, a space and, for changes, the XY field."""
    records = status.split(b"\0")
    out = []
    i = 0
    while i < len(records):
        record = records[i]
        i += 1
        count = _FIELDS.get(record[:2])
        if count is None:
            continue
        if record[:2] == b"2 ":
            i += 1  # a rename's original path follows as its own record
        out.append((record[:4], record.split(b" ", count - 1)[-1]))
    return out


def fingerprint(root: str, status: bytes, depth: int = 0, beyond: bytes | None = None) -> str:
    """A hash of HEAD, the branch, the index's view of every change, the content of every changed or untracked file
    and of every ignored Python source file (IGNORED_SOURCES), and of what git status does not look at
    (`beyond_status`; taken now unless given, as TreeLook takes it while git still runs): equal fingerprints mean
    the same commit and the same tracked-plus-untracked content."""
    status, ignored = split_ignored(status)
    digest = sha256(status)
    for _, name in entries(status):
        digest.update(b"\0" + name + b"\0" + content_hash(root, name, depth))
    for name in (n for n in ignored if n.endswith(IGNORED_SOURCES)):
        digest.update(b"\3" + name + b"\0" + content_hash(root, name, depth))
    digest.update(beyond_status(root, depth) if beyond is None else beyond)
    return digest.hexdigest()


def beyond_status(root: str, depth: int = 0) -> bytes:
    """The looks at what git status does not look at (dun/core/indexlook.py: skip-worktree and assume-unchanged
    files, what tracked links point at, the state of submodules and nested repositories, executable bits under
    core.fileMode=false, the content of files a clean filter applies to under DUN_GIT_FILTERS=1) and at what
    decides HEAD's history besides its commit id (`history_look`: replace refs, grafts, a shallow clone's boundary),
    as `fingerprint` hashes them. Independent of git status's output, so it can be taken while git walks the tree."""
    from dun.core.indexlook import LINK, NOT_LOOKED, filtered_files, index_extras, mode_changes, target_hash

    parts = []
    broot = os.fsencode(root)
    for kind, name in index_extras(root):
        path = os.path.join(broot, name)
        look = content_hash(root, name, depth) if kind == NOT_LOOKED else target_hash(path) if kind == LINK else (
            nested(path, depth))
        parts.append(b"\1" + kind + name + b"\0" + look)
    parts.append(b"\2" + mode_changes(root))
    parts.append(b"\4" + history_look(root))
    parts.append(b"\5" + filtered_files(root))
    return b"".join(parts)


class TreeLook:
    """The work tree's fingerprint from the `git status` started as dun started, computed once per root (by the
    replay path or the launch, whichever asks first) with when its looks began (dun/engine/reuse.py compares the
    files a check read with it). `prepare` takes the looks that do not depend on git's answer while git still
    walks the tree, so that only hashing git's answer is left once it exits."""

    def __init__(self, status: Spawned) -> None:
        self.status = status
        self._seen: dict[str, tuple[str, int] | None] = {}
        self._beyond: dict[str, tuple[bytes, int]] = {}

    def prepare(self, root: str) -> None:
        if root not in self._seen and root not in self._beyond:
            looked_ns = time.time_ns()
            self._beyond[root] = (beyond_status(root), looked_ns)

    def of(self, root: str) -> tuple[str, int] | None:
        if root not in self._seen:
            early = self._beyond.pop(root, None)
            code, out, _ = self.status.collect()
            # when the first look was taken: a file changed after it may have been missed (earlier is stricter)
            hashed_ns = early[1] if early is not None else time.time_ns()
            beyond = early[0] if early is not None else None
            self._seen[root] = (fingerprint(root, out, beyond=beyond), hashed_ns) if code == 0 else None
        return self._seen[root]


def split_ignored(status: bytes) -> tuple[bytes, list[bytes]]:
    """The status without its ignored (`!`) records, and the paths they name (a directory ends in `/`)."""
    if not status.startswith(b"! ") and b"\0! " not in status:
        return status, []
    records = status.split(b"\0")
    kept: list[bytes] = []
    ignored: list[bytes] = []
    i = 0
    while i < len(records):
        record = records[i]
        i += 1
        if record[:2] == b"! ":
            ignored.append(record[2:])
            continue
        kept.append(record)
        if record[:2] == b"2 " and i < len(records):  # a rename's original path: a path, whatever it reads
            kept.append(records[i])
            i += 1
    return b"\0".join(kept), ignored


def content_hash(root: str, name: bytes, depth: int = 0) -> bytes:
    path = os.path.join(os.fsencode(root), name)
    try:
        mode = os.lstat(path).st_mode
        if stat.S_ISLNK(mode):  # and what it points at: git sees only the link's text
            from dun.core.indexlook import target_hash

            return b"link:" + os.readlink(path) + b"\0" + target_hash(path)
        if stat.S_ISDIR(mode):  # a submodule or a nested repository: what changed inside it
            return nested(path, depth)
        if not stat.S_ISREG(mode):
            return b"special"  # a FIFO, which opening could block on
        with open(path, "rb") as fh:  # the content, streamed: a stat stamp could miss a same-size rewrite
            return file_sha256(fh)
    except OSError as exc:  # deleted, a directory (submodule) or unreadable: say which, never fail
        return f"unreadable:{exc.errno}".encode()


def nested(path: bytes | str, depth: int) -> bytes:
    """The fingerprint of the repository (submodule or nested repository) at `path`: its own status and content."""
    from dun.core.indexlook import MAX_DEPTH
    from dun.core.spawn import start_git, status_args

    where = os.fsdecode(path)
    if depth > MAX_DEPTH or not os.path.lexists(os.path.join(where, ".git")):
        return b"not a repository"
    try:
        code, out, _ = start_git(status_args(where), where).collect()
    except OSError:
        return b"git failed"
    return fingerprint(where, out, depth + 1).encode() if code == 0 else b"git failed"


# What decides HEAD's history besides HEAD's commit id: replace refs (`git replace`, `git replace --graft`: loose
# under `refs/replace/` or in `packed-refs`), the graft file (`info/grafts`) and a shallow clone's boundary
# (`shallow`). git status says nothing when they change and HEAD stays the same commit, yet `git log`, `git describe`
# and what is built on them (setuptools-scm's version, a changelog or commit-message check) read another history.
# Here, not in a module of its own: the replay path imports this one (a repository with none of them costs three
# failed opens and a read of `packed-refs`).
READ_MAX = 64 << 20  # a packed-refs beyond this is not read whole: its stamp stands for it


def history_look(root: str) -> bytes:
    """The bytes of everything above, for the repository whose work tree is `root`; b"" outside git."""
    common = common_dir(root)
    if common is None:
        return b""
    base = os.environ.get("GIT_REPLACE_REF_BASE", "refs/replace/").rstrip("/") + "/"
    out = [b"replace:"]
    loose = os.path.join(common, *base.split("/"))
    for dirpath, dirnames, filenames in os.walk(loose):  # usually missing: one failed stat
        dirnames.sort()
        for name in sorted(filenames):
            out += [os.fsencode(os.path.relpath(os.path.join(dirpath, name), loose)), _read(dirpath, name)]
    packed = _read(common, "packed-refs")
    if packed.startswith(b"stamp:"):
        out.append(packed)
    else:
        needle = b" " + base.encode()
        out += [line for line in packed.split(b"\n") if needle in line]
    return b"\0".join([*out, b"grafts:", _read(common, "info", "grafts"), b"shallow:", _read(common, "shallow")])


def common_dir(root: str) -> str | None:
    """The directory holding the refs of the repository whose work tree is `root` (a linked worktree's and a
    submodule's `.git` file leads to its own git directory, whose `commondir` leads to the shared one)."""
    if os.environ.get("GIT_COMMON_DIR"):
        return os.path.join(root, os.environ["GIT_COMMON_DIR"])
    dotgit = os.path.join(root, os.environ.get("GIT_DIR") or ".git")
    if os.path.isdir(dotgit):
        gitdir = dotgit
    else:
        text = _read(root, ".git").strip()
        if not text.startswith(b"gitdir:"):
            return None
        gitdir = os.path.join(root, os.fsdecode(text[len(b"gitdir:"):].strip()))
    common = _read(gitdir, "commondir").strip()
    return os.path.join(gitdir, os.fsdecode(common)) if common and not common.startswith(b"stamp:") else gitdir


def _read(*parts: str) -> bytes:
    """A small file's bytes (b"" when missing or unreadable); the stamp of one too large to read each run."""
    path = os.path.join(*parts)
    try:
        with open(path, "rb", buffering=0) as fh:
            st = os.fstat(fh.fileno())
            if st.st_size > READ_MAX:
                return f"stamp:{st.st_size}:{st.st_mtime_ns}:{st.st_ctime_ns}:{st.st_ino}".encode()
            return fh.read()
    except OSError:
        return b""
