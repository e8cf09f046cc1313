"""What one iteration leaves for the next: written by dun from the parsed status block and git facts,
never free text the agent can inflate."""

from __future__ import annotations

from typing import TYPE_CHECKING

from dun.core.git import diff_stat, head, recent_commits, worktree_tree
from dun.core.timefmt import now_iso
from dun.engine.model import CheckResult
from dun.store.records import HANDOFF_SCHEMA_VERSION as SCHEMA_VERSION
from dun.store.records import Handoff
from dun.store.store import Store

if TYPE_CHECKING:  # `dun iterate` records where it starts and parses nothing: the parser's modules cost it 10 ms
    from dun.answer.transcript import ParseResult

MAX_TEXT = 300


def record_iterate(store: Store, results: list[CheckResult], with_tree: bool = False,
                   look: tuple[str | None, str | None] | None = None) -> None:
    """Remember where this iteration starts: the base of `dun respond`'s git facts and the next diff stat.
    `with_tree` adds the work-tree hash (it costs a git scan); `look` is HEAD and that hash when the caller has
    them already (the loop)."""
    commit, tree = look or (head(store.root), worktree_tree(store.root) if with_tree else None)
    store.write_iterate({"schema_version": SCHEMA_VERSION, "at": now_iso(), "head": commit,
                         "actionable": [r.id for r in results], "tree": tree})


def _one_line(text: str | None) -> str | None:
    if text is None:
        return None
    flat = " ".join(text.split())
    return flat[:MAX_TEXT] + ("..." if len(flat) > MAX_TEXT else "")


def build_handoff(store: Store, parsed: ParseResult, iteration: int | None,
                  git: dict[str, object] | None = None) -> Handoff:
    """`git` (base_head, head, commits, files_changed) when the caller has read it already (the loop has)."""
    root = store.root
    if git is None:
        base = (store.read_iterate() or {}).get("head")
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
    keys = ("is_error", "api_error_status", "cost_usd", "session_id", "error")
    agent: dict[str, object] = {k: parsed.agent[k] for k in keys if k in parsed.agent}
    return {"schema_version": SCHEMA_VERSION, "written_at": now_iso(), "iteration": iteration,
            "outcome": parsed.outcome, "status": status, "error": _one_line(parsed.error), "agent": agent,
            "git": git}
