"""What decides HEAD's history besides HEAD's commit id, for the work tree's fingerprint (dun/core/fingerprint.py):
replace refs (`git replace`, `git replace --graft`: loose under `refs/replace/` or in `packed-refs`), the graft file
(`info/grafts`) and a shallow clone's boundary (`shallow`). git status says nothing when they change, HEAD stays the
same commit, yet `git log`, `git describe` and what is built on them (setuptools-scm's version, a changelog or
commit-message check) read another history.

Import-light (os only): the replay path computes the fingerprint before the rest of dun loads. A repository with
none of these costs three failed stats and a read of `packed-refs` when it has one.
"""

from __future__ import annotations

import os

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
