"""Looks at what is not a file: git's refs and config, hashed (`git-refs:ROOT\\0PATTERN`, `git-config:ROOT\\0KEY`
keys of a look, dun/engine/inputs.py), so that `dun.core.cache.look` takes them afresh like any other."""

from __future__ import annotations


def git_look(key: str) -> str | None:
    """A hash of what git prints for a `git-refs:` or `git-config:` look (its exit code too)."""
    from pathlib import Path

    from dun.core.digest import sha256
    from dun.core.git import git

    kind, _, rest = key.partition(":")
    root, _, value = rest.partition("\0")
    args = ("for-each-ref", "--format=%(refname) %(objectname)", value) if kind == "git-refs" else (
        "config", "--get-all", value)
    try:
        proc = git(Path(root), *args, check=False)
    except OSError:
        return None
    return sha256(bytes([proc.returncode & 0xFF]) + proc.stdout).hexdigest()
