"""What one iteration leaves for the next: written by dun from the parsed status block and git facts,
never free text the agent can inflate."""

from __future__ import annotations

import datetime
import json
import shutil
from pathlib import Path
from typing import Any

from dun.answer.transcript import ParseResult
from dun.core.atomic import write_json_atomic
from dun.core.git import diff_stat, head, recent_commits
from dun.core.resources import data_dir
from dun.engine.model import CheckResult

SCHEMA_VERSION = 1
MAX_TEXT = 300


def dun_dir(root: Path) -> Path:
    return root / ".dun"


def ensure_runtime_dir(root: Path) -> Path:
    """`.dun/`, with a .gitignore for dun's runtime files when the repo has none, so they never show as work."""
    directory = dun_dir(root)
    directory.mkdir(exist_ok=True)
    ignore = directory / ".gitignore"
    if not ignore.exists():  # the same file `dun init` writes
        shutil.copyfile(data_dir("templates") / "dun.gitignore", ignore)
    return directory


def now() -> str:
    return datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")


def read_json(path: Path) -> dict[str, Any] | None:
    """A dun state file, or None when it is missing or unreadable (a torn or hand-edited file loses nothing)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def record_iterate(root: Path, results: list[CheckResult], with_tree: bool = False) -> None:
    """Remember where this iteration starts: the base of `dun respond`'s git facts and the next diff stat.
    `with_tree` adds the work-tree hash the loop's progress test compares against (it costs a git scan)."""
    from dun.core.git import worktree_tree

    ensure_runtime_dir(root)
    write_json_atomic(dun_dir(root) / "iterate.json", {
        "schema_version": SCHEMA_VERSION, "at": now(), "head": head(root), "actionable": [r.id for r in results],
        "tree": worktree_tree(root) if with_tree else None})


def _one_line(text: str | None) -> str | None:
    if text is None:
        return None
    flat = " ".join(text.split())
    return flat[:MAX_TEXT] + ("..." if len(flat) > MAX_TEXT else "")


def build_handoff(root: Path, parsed: ParseResult, iteration: int | None,
                  git: dict[str, Any] | None = None) -> dict[str, Any]:
    """`git` (base_head, head, commits, files_changed) when the caller has read it already (the loop has)."""
    if git is None:
        base = (read_json(dun_dir(root) / "iterate.json") or {}).get("head")
        current = head(root)
        git = {"base_head": base, "head": current, "commits": [], "files_changed": None}
        if base and current:
            git["commits"] = recent_commits(root, 20, since=base)
            git["files_changed"] = diff_stat(root, base)[1]
    status = parsed.block.to_dict() if parsed.block else None
    if status:
        status["task_completed"] = _one_line(status["task_completed"])
        status["next_recommendation"] = _one_line(status["next_recommendation"])
        status["extra"] = {k: _one_line(v) for k, v in list(status["extra"].items())[:10]}
    agent = {k: parsed.agent[k] for k in ("is_error", "api_error_status", "cost_usd", "session_id", "error")
             if k in parsed.agent}
    return {"schema_version": SCHEMA_VERSION, "written_at": now(), "iteration": iteration,
            "outcome": parsed.outcome, "status": status, "error": _one_line(parsed.error), "agent": agent,
            "git": git}


def write_handoff(root: Path, handoff: dict[str, Any]) -> Path:
    path = ensure_runtime_dir(root) / "handoff.json"
    write_json_atomic(path, handoff)
    return path


def read_handoff(root: Path) -> dict[str, Any] | None:
    return read_json(dun_dir(root) / "handoff.json")
