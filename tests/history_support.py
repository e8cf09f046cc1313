"""Helpers for the history tests: iteration logs shaped as `dun/loop/conclude.py` writes them, run directories
on disk, scripted runs with either driver, and a dump of every history row."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

from conftest import git
from fake_agent import FAKE_COMMAND, write_scenario
from loop_support import make_repo

ROOT = Path(__file__).resolve().parent.parent
DUN = [sys.executable, "-m", "dun"]
SCRIPT = ROOT / "scripts" / "dun-loop.sh"
T0 = 1_790_000_000.0  # a fixed start: hand-built histories are the same on every run of the tests
NO_CIRCUIT = {"no_progress_limit": 50, "half_open_after": 40, "discrepancy_limit": 50, "same_error_limit": 50,
              "oscillation_limit": 50}


def iso(ts: float) -> str:
    import datetime

    return datetime.datetime.fromtimestamp(ts, datetime.UTC).isoformat(timespec="seconds")


def make_log(run_id: str, n: int, start: float | None = None, cost: float | None = 0.01, status: str | None =
             "IN_PROGRESS", task: str | None = "looked around", before: tuple[str, ...] = ("mission-boxes",),
             after: tuple[str, ...] = ("mission-boxes",), error: str | None = None, error_kind: str | None = None,
             found: tuple[dict[str, Any], ...] = (), ticked: tuple[str, ...] = (), restored: tuple[str, ...] = (),
             reverted: tuple[str, ...] = (), decision: tuple[str, str] = ("continue", "work_remains"),
             wait_s: float = 0.0, duration: float = 30.0) -> dict[str, Any]:
    """An iteration log with the keys `open_iteration` and `conclude` write."""
    start = T0 + 600 * n if start is None else start
    block = None if status is None else {"task_completed": task, "status": status, "files_modified": 0,
                                         "exit_signal": False, "next_recommendation": "go on", "extra": {}}
    return {
        "schema_version": 1, "iteration": n, "run_id": run_id, "started_at": iso(start), "agent": "command",
        "argv": ["fake"], "confirmation": False, "prompt_file": f"iteration-{n}.prompt.md",
        "out_file": f"iteration-{n}.out", "checks_before": {"actionable": len(before), "ids": list(before)},
        "duration_s": duration,
        "verification": {"discrepancies": list(found), "notes": [], "restored": list(restored),
                         "reverted": list(reverted), "tasks": {"added": [], "unticked": [], "ticked": list(ticked),
                                                               "unverified": []}},
        "ended_at": iso(start + duration), "exit_code": 1 if error else 0, "timed_out": False, "cost_usd": cost,
        "cost_estimated": False, "session_id": None, "error_kind": error_kind if error else None, "error": error,
        "reset_at": None, "status_block": block, "parse_error": None,
        "parse_outcome": "parsed" if block else "no_block", "answer_shape": "claude-json",
        "checks_after": {"actionable": len(after), "ids": list(after)},
        "progress": {"head_before": "a" * 40, "head_after": "a" * 40, "commits": [], "files_changed": 0,
                     "tree_hash": None, "newly_passing": sorted(set(before) - set(after))},
        "permission_denials": 0, "flags": [], "circuit": {"state": "CLOSED"},
        "decision": {"action": decision[0], "reason": decision[1], "wait_s": wait_s},
    }


def write_run(root: Path, run_id: str, logs: list[dict[str, Any]], archived: bool = False,
              **state: Any) -> Path:
    """A run directory: `.dun/` (the current run) or `.dun/archive/<run_id>/`, with its state and logs."""
    base = root / ".dun" / "archive" / run_id if archived else root / ".dun"
    (base / "logs").mkdir(parents=True, exist_ok=True)
    for log in logs:
        (base / "logs" / f"iteration-{log['iteration']}.json").write_text(json.dumps(log), encoding="utf-8")
    start = min((T0 + 600 * log["iteration"] for log in logs), default=T0)
    full = {"schema_version": 1, "run_id": run_id, "status": "stopped", "stop_reason": "max_iterations",
            "iteration": len(logs), "started_at": iso(start), "started_epoch": start, "ended_at": iso(start + 3600),
            "cost_usd_total": sum(log["cost_usd"] or 0 for log in logs), "budget_left_usd": None,
            "errors_total": 0, "circuit": {"state": "CLOSED"}, **state}
    (base / "state.json").write_text(json.dumps(full), encoding="utf-8")
    return base


def guard_line(time: str, rule: str = "git.push_force", decision: str = "deny") -> str:
    return json.dumps({"time": time, "tool": "Bash", "session_id": "s", "cwd": "/x", "command": "git push -f",
                       "decision": decision, "rule": rule, "reason": "no"}) + "\n"


def dump(root: Path) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every history table (not the sync bookkeeping), sorted: two equal dumps are the same history."""
    from dun.history.schema import DATA_TABLES

    conn = sqlite3.connect(root / ".dun" / "history.db")
    try:
        return {t: sorted((tuple(r) for r in conn.execute(f"SELECT * FROM {t}")), key=repr) for t in DATA_TABLES}
    finally:
        conn.close()


def new_repo(path: Path, boxes: tuple[str, ...] = ("alpha", "beta", "gamma"), **config: Any) -> Path:
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", "main")
    return make_repo(path, boxes, **config)


def dun(repo: Path, *args: str, timeout: float = 60.0, env: dict[str, str] | None = None,
        ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*DUN, *args], cwd=repo, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, **(env or {})})


def drive(repo: Path, steps: list[dict[str, Any]], driver: str, *args: str) -> subprocess.CompletedProcess[str]:
    """One scripted run: `dun loop` or `scripts/dun-loop.sh` with the fake agent playing `steps`; a second run in
    the same repository goes on with the next step (the fake agent's call count is kept)."""
    scenario = repo.parent / f"fake-{driver}" / "scenario.json"
    if not scenario.exists():
        write_scenario(scenario.parent, steps)
    env = {**os.environ, "DUN_FAKE_SCENARIO": str(scenario),
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    argv = [*DUN, "loop", *args] if driver == "loop" else [str(SCRIPT), "--", *FAKE_COMMAND]
    return subprocess.run(argv, cwd=repo, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120,
                          env=env)


def review_items(repo: Path) -> list[dict[str, Any]]:
    proc = dun(repo, "review", "--json", "--all")
    assert proc.returncode in (0, 1), proc.stderr
    return list(json.loads(proc.stdout)["items"])
