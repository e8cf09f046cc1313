"""Database rows from dun's JSON files: pure functions, so recording live and rebuilding from the files give the
same rows. Keys follow what `dun/store/records.py` (iteration logs and state) and
`dun/guard/hook.py` (guard.jsonl) write; anything missing becomes NULL, never an error."""

from __future__ import annotations

import datetime
import json
from collections.abc import Mapping
from typing import Any

LIMIT_KINDS = ("rate_limit", "usage_limit")


def epoch(stamp: object) -> float | None:
    """ISO 8601 (with Z or an offset) or a number, as seconds since the epoch; None when unreadable."""
    if isinstance(stamp, int | float) and not isinstance(stamp, bool):
        return float(stamp)
    if not isinstance(stamp, str) or not stamp:
        return None
    try:
        parsed = datetime.datetime.fromisoformat(stamp)
    except ValueError:
        return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=datetime.UTC)
    return parsed.timestamp()


def iso(ts: float) -> str:
    return datetime.datetime.fromtimestamp(ts, datetime.UTC).isoformat(timespec="seconds")


def dumps(value: object) -> str | None:
    """JSON with sorted keys (the same value always gives the same text), or NULL for nothing."""
    return None if value in (None, [], {}) else json.dumps(value, sort_keys=True, ensure_ascii=False)


def _int(value: object) -> int | None:
    if isinstance(value, bool):
        return int(value)
    return value if isinstance(value, int) else None


def _num(value: object) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _tokens(usage: object) -> tuple[int | None, int | None]:
    if not isinstance(usage, dict):
        return None, None
    counts = {k: v for k, v in usage.items() if isinstance(v, int) and not isinstance(v, bool)}
    return (sum(v for k, v in counts.items() if "input" in k) or None,
            sum(v for k, v in counts.items() if "output" in k) or None)


def claimed_check(task: object) -> str | None:
    """The check id part of TASK_COMPLETED (`CHECK` or `CHECK@FILE:LINE`)."""
    if not isinstance(task, str) or not task.strip():
        return None
    return task.partition("@")[0].strip() or None


def signature(error: object) -> str | None:
    if not isinstance(error, str) or not error.strip():
        return None
    from dun.agents.limits import normalize_error

    return normalize_error(error)


def discrepancies(log: dict[str, Any]) -> list[dict[str, Any]]:
    found = (log.get("verification") or {}).get("discrepancies") or []
    return [d for d in found if isinstance(d, dict)]


def accepted_ticks(log: dict[str, Any]) -> list[str]:
    """Boxes ticked in the iteration whose tick dun accepted (an unverified tick is undone, not done)."""
    tasks = (log.get("verification") or {}).get("tasks") or {}
    rejected = {str((d.get("task") or {}).get("text")) for d in discrepancies(log)
                if d.get("kind") == "unverified_completion" and d.get("task")}
    return [t for t in tasks.get("ticked") or [] if isinstance(t, str) and t not in rejected]


def _map(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def iteration_row(log: dict[str, Any]) -> dict[str, Any]:
    block, progress, verification = _map(log.get("status_block")), _map(log.get("progress")), \
        _map(log.get("verification"))
    decision, before, after = _map(log.get("decision")), _map(log.get("checks_before")), _map(log.get("checks_after"))
    tokens_in, tokens_out = _tokens(log.get("usage"))
    commits = progress.get("commits")
    return {
        "run_id": str(log.get("run_id") or ""), "iteration": int(log.get("iteration") or 0),
        "started_at": log.get("started_at"), "started_ts": epoch(log.get("started_at")),
        "ended_at": log.get("ended_at"), "ended_ts": epoch(log.get("ended_at")),
        "duration_s": _num(log.get("duration_s")), "agent": log.get("agent"),
        "session_id": log.get("session_id"), "exit_code": _int(log.get("exit_code")),
        "timed_out": _int(log.get("timed_out")), "interrupted": _int(bool(log.get("interrupted"))),
        "confirmation": _int(bool(log.get("confirmation"))), "cost_usd": _num(log.get("cost_usd")),
        "cost_estimated": _int(log.get("cost_estimated")), "tokens_in": tokens_in, "tokens_out": tokens_out,
        "error_kind": log.get("error_kind"), "error": log.get("error"), "error_signature": signature(log.get("error")),
        "reset_at": _num(log.get("reset_at")),
        "status": block.get("status"), "task_claimed": block.get("task_completed"),
        "claimed_check": claimed_check(block.get("task_completed")), "exit_signal": _int(block.get("exit_signal")),
        "parse_outcome": log.get("parse_outcome"), "status_block": dumps(block or None),
        "actionable_before": _int(before.get("actionable")), "actionable_after": _int(after.get("actionable")),
        "files_changed": _int(progress.get("files_changed")),
        "commits": len(commits) if isinstance(commits, list) else None,
        "newly_passing": dumps(progress.get("newly_passing")), "boxes_ticked": dumps(accepted_ticks(log)),
        "restored": dumps(verification.get("restored")), "reverted": dumps(verification.get("reverted")),
        "permission_denials": _int(log.get("permission_denials")), "flags": dumps(log.get("flags")),
        "circuit_state": _map(log.get("circuit")).get("state"),
        "decision_action": decision.get("action"), "decision_reason": decision.get("reason"),
        "wait_s": _num(decision.get("wait_s")),
    }


def check_rows(log: dict[str, Any]) -> list[tuple[str, int, int]]:
    """(check id, failing before, failing after) for every check actionable before or after the iteration."""
    before = set((log.get("checks_before") or {}).get("ids") or [])
    ended = log.get("checks_after") is not None
    after = set((log.get("checks_after") or {}).get("ids") or [])
    if not ended:  # an unfinished iteration says nothing about the after state
        return []
    return [(c, int(c in before), int(c in after)) for c in sorted(before | after) if isinstance(c, str)]


def discrepancy_rows(log: dict[str, object]) -> list[tuple[int, str, str | None, str | None, str | None]]:
    out = []
    for seq, d in enumerate(discrepancies(log)):
        task = _map(d.get("task"))
        out.append((seq, str(d.get("kind") or "discrepancy"), d.get("detail"), d.get("check"), task.get("text")))
    return out


def run_row(state: Mapping[str, object], archived: bool) -> dict[str, object]:
    circuit = _map(state.get("circuit"))
    budget = state.get("budget_usd")
    left = _num(state.get("budget_left_usd"))
    cost = _num(state.get("cost_usd_total")) or 0.0
    if budget is None and left is not None:  # the state keeps what is left; the cap is spent + left
        budget = round(cost + left, 6)
    return {
        "run_id": str(state.get("run_id") or ""), "status": state.get("status"),
        "stop_reason": state.get("stop_reason"),
        "started_at": state.get("started_at"), "started_ts": _num(state.get("started_epoch")) or epoch(
            state.get("started_at")), "ended_at": state.get("ended_at"), "ended_ts": epoch(state.get("ended_at")),
        "iterations": _int(state.get("iteration")) or 0, "cost_usd": cost, "budget_usd": _num(budget),
        "errors_total": _int(state.get("errors_total")) or 0, "circuit_state": circuit.get("state"),
        "archived": int(archived),
    }


def guard_row(run_id: str, seq: int, entry: Mapping[str, object]) -> dict[str, object]:
    return {"run_id": run_id, "seq": seq, "time": entry.get("time"), "ts": epoch(entry.get("time")),
            "iteration": None, "session_id": entry.get("session_id"), "tool": entry.get("tool"),
            "command": entry.get("command"), "path": entry.get("path"),
            "decision": entry.get("decision"), "rule": entry.get("rule"), "reason": entry.get("reason")}
