"""A check's declared inputs (`inputs:` of a manifest's check) turned into looks that compare across runs.

A look is (key, value): for a file the key is its absolute path and the value its stamp (None when missing); an
environment variable is `env:NAME` with its value; a directory read whole (`trees:`) is `tree:PATH`, whether anything
beneath it changed since (dun/core/cache/tree.py); git refs and config keys are `git-refs:ROOT\\0PATTERN` and
`git-config:ROOT\\0KEY` with a hash of what git prints for them. `dun.core.cache.look` takes any of these afresh,
so the result cache and the replay compare them alike.

`files` globs are walked on disk (ignored paths included, links to directories followed) from their literal
directory; a literal path names that file, or for a directory its listing (`dir/**` names everything beneath).
`~` and `$VAR` are expanded. A walk that meets more than `WALK_LIMIT` entries cannot be kept cheaply: the inputs are
then unknown and nothing is reused.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Any

from dun.core.cache import look, stamp

_GLOB = re.compile(r"[*?\[]")
Look = tuple[str, object]


def declared_looks(root: str, declared: Mapping[str, Any]) -> list[Look] | None:
    """Every look the declaration names, in a stable order; None when some input cannot be known."""
    out: list[Look] = []
    if not declared:
        return out
    # loaded only for a check that declares inputs: most runs have none (0.4 ms of each run's imports)
    from dun.core.cache.gitlook import git_look
    from dun.core.cache.tree import PREFIX
    from dun.core.toolfiles import toolchain_files

    for pattern in declared.get("files") or []:
        found = _file_looks(root, str(pattern))
        if found is None:
            return None
        out += found
    for tree in declared.get("trees") or []:
        path = os.path.expandvars(os.path.expanduser(str(tree)))
        key = PREFIX + os.path.normpath(os.path.join(root, path))
        out.append((key, look(key, None)))
    for name in declared.get("env") or []:
        out.append((f"env:{name}", os.environ.get(str(name))))
    for program in declared.get("programs") or []:
        out += [(p, stamp(p)) for p in [*program_paths(str(program)), *toolchain_files(str(program), root)]]
    for kind in ("git-refs", "git-config"):
        for value in declared.get(kind) or []:
            key = f"{kind}:{root}\0{value}"
            out.append((key, git_look(key)))
    return out


def program_paths(program: str) -> list[str]:
    """Every place on PATH `program` could be found: installing, upgrading or removing it changes one of them."""
    if os.sep in program:
        return [program]
    return [os.path.join(d, program) for d in os.environ.get("PATH", "").split(os.pathsep) if d]


def _file_looks(root: str, pattern: str) -> list[Look] | None:
    pattern = os.path.expandvars(os.path.expanduser(pattern))
    full = pattern if os.path.isabs(pattern) else os.path.join(root, pattern)
    match = _GLOB.search(full)
    if match is None:
        path = full.rstrip("/") or "/"
        return [(path, stamp(path))]
    base = full[: full.rfind("/", 0, match.start()) + 1].rstrip("/") or "/"
    rest = full[len(base):].lstrip("/")
    out: list[Look] = [(base, stamp(base))]  # its listing: a first matching file appearing changes it
    walked: list[str] = []
    from dun.core.walk import WALK_LIMIT, TooMany, walk

    # links to directories are followed (what they hold is read through them, often from outside the work tree)
    try:
        for dirpath, _, filenames in walk(base, WALK_LIMIT):
            rel = os.path.relpath(dirpath, base)
            prefix = "" if rel == "." else rel.replace(os.sep, "/") + "/"
            if prefix:
                out.append((dirpath, stamp(dirpath)))
            walked += [prefix + name for name in filenames]
    except TooMany:
        return None
    from dun.core.globs import match_files

    out += [(os.path.join(base, p), stamp(os.path.join(base, p))) for p in match_files(walked, ["/" + rest])]
    return out
