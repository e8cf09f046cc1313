"""`dun hints FILE...`: the files that most often change with each FILE, from the co-change index (dun/hints/)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from dun.core.errors import UsageError
from dun.core.kinds import ExitCode
from dun.engine.session import open_session
from dun.hints.graph import CHECK_PREFIX, Hint
from dun.hints.index import update
from dun.hints.render import as_dict, as_text


def repo_path(root: Path, base: Path, name: str) -> str:
    """FILE as the index names it: relative to the repository's root, FILE itself relative to `base` (the
    directory of -C, else the current one). A file deleted since is still a name; one outside the root is not."""
    if name.startswith(CHECK_PREFIX):
        return name
    full = Path(os.path.normpath(base / name))
    for candidate in (full, full.resolve()):
        try:
            rel = candidate.relative_to(root)
        except ValueError:
            continue
        if str(rel) != ".":
            return rel.as_posix()
    raise UsageError(f"{name}: not a file of the repository at {root}")


def run_hints(files: list[str], path: str | None, limit: int, as_json: bool, rebuild: bool) -> int:
    if not files:
        raise UsageError("name a file: dun hints FILE... (or check:ID for a check)")
    session = open_session(path, agents=False)
    if not session.repo.is_git:
        raise UsageError(f"{session.root}: not a git repository; hints are learned from its history")
    base = Path(path).resolve() if path else Path.cwd()
    seeds = [repo_path(session.root, base, f) for f in files]
    index = update(session.store, session.settings.hints, rebuild=rebuild)
    found: dict[str, list[Hint]] = {seed: index.graph.hints([seed], limit) for seed in seeds}
    sys.stdout.write(json.dumps(as_dict(index, found), indent=2) + "\n" if as_json else as_text(found))
    return ExitCode.OK if any(found.values()) else ExitCode.WORK_REMAINS
