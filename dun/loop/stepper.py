"""`dun respond --decide`: the loop's policy, one step at a time, for `scripts/dun-loop.sh`.

Each step prints one line and exits with a code the script acts on; no limit or rule lives in the script:

    --before             go N | wait SECONDS REASON | stop REASON
    --all-pass           confirm N | stop complete          (after `dun iterate` printed ALL_PASS)
    --file F (after)     continue COOLDOWN | wait SECONDS REASON | stop REASON
"""

from __future__ import annotations

import math
import sys
from pathlib import Path
from typing import Any

from dun.answer.handoff import read_json
from dun.answer.transcript import ParseResult
from dun.core.errors import UsageError
from dun.engine.session import open_session
from dun.loop import lifecycle as runs
from dun.loop.policy import Decision, before_iteration, nothing_actionable
from dun.store.state import load_state, logs_dir

EXIT_GO, EXIT_WAIT, EXIT_COMPLETE, EXIT_STOPPED = 0, 10, 20, 21
SHELL_AGENT = "shell"


def _emit(line: str, code: int) -> int:
    sys.stdout.write(line + "\n")
    return code


def _stop(root: Path, state: dict[str, Any], cfg: dict[str, Any], reason: str) -> int:
    runs.finish(root, state, cfg, reason)
    return _emit(f"stop {reason}", EXIT_COMPLETE if reason == "complete" else EXIT_STOPPED)


def _decision(root: Path, state: dict[str, Any], cfg: dict[str, Any], decision: Decision) -> int:
    if decision.action == "stop":
        return _stop(root, state, cfg, decision.reason)
    if decision.action == "wait":
        # rounded up to a tenth: a wait never ends early, and a short one never becomes 0
        return _emit(f"wait {math.ceil(decision.wait_s * 10) / 10:.1f} {decision.reason}", EXIT_WAIT)
    return _emit(f"continue {cfg['loop']['cooldown_s']:g}", EXIT_GO)


def decide_before(path: str | None) -> int:
    session = open_session(path)
    cfg = runs.effective_config(session, {})
    root = session.root
    state = load_state(root)
    if state is None or state.get("status") != "running" or state.get("in_progress"):
        state = runs.begin(session, cfg)
    decision = before_iteration(state, cfg, (root / ".dun" / "STOP").exists())
    if decision is not None:
        return _decision(root, state, cfg, decision)
    start = runs.Start([], None, None)
    n, _ = runs.open_iteration(root, state, cfg, SHELL_AGENT, ["(scripts/dun-loop.sh)"], start,
                               f"iteration-{state['iteration'] + 1}.prompt.md")
    return _emit(f"go {n}", EXIT_GO)


def _running(path: str | None) -> tuple[Any, dict[str, Any], dict[str, Any], int]:
    session = open_session(path)
    cfg = runs.effective_config(session, {})
    state = load_state(session.root)
    if state is None or not state.get("in_progress"):
        raise UsageError("no iteration in progress: run `dun respond --decide --before` first")
    return session, state, cfg, int(state["in_progress"])


def decide_all_pass(path: str | None) -> int:
    """`dun iterate` found nothing actionable: complete, or a confirmation iteration."""
    session, state, cfg, n = _running(path)
    first = not any(log.get("exit_code") is not None for log in _run_logs(session.root, state))
    if nothing_actionable(state, cfg, first) is not None:
        for suffix in (".json", ".prompt.md"):  # no agent ran: this iteration never happened
            (logs_dir(session.root) / f"iteration-{n}{suffix}").unlink(missing_ok=True)
        state.update(iteration=n - 1, in_progress=None)
        return _stop(session.root, state, cfg, "complete")
    log = read_json(logs_dir(session.root) / f"iteration-{n}.json") or {}
    log["confirmation"] = True
    from dun.core.atomic import write_json_atomic

    write_json_atomic(logs_dir(session.root) / f"iteration-{n}.json", log)
    return _emit(f"confirm {n}", EXIT_GO)


def _run_logs(root: Path, state: dict[str, Any]) -> list[dict[str, Any]]:
    from dun.loop.report import iteration_logs

    return [log for log in iteration_logs(root) if log.get("run_id") == state.get("run_id")]


def decide_after(path: str | None, parsed: ParseResult, out_path: Path, exit_code: int | None) -> int:
    session, state, cfg, n = _running(path)
    log = read_json(logs_dir(session.root) / f"iteration-{n}.json") or {"schema_version": 1, "iteration": n}
    base = read_json(session.root / ".dun" / "iterate.json") or {}
    start = runs.Start(list(base.get("actionable") or []), base.get("head"), base.get("tree"),
                       bool(log.get("confirmation")))
    log["checks_before"] = {"actionable": len(start.actionable), "ids": start.actionable}
    timed_out = exit_code == runs.EXIT_TIMEOUT
    decision, _, _ = runs.conclude(session, cfg, state, n, parsed, start, log, exit_code, timed_out,
                                   _cost(session, cfg, parsed), out_path)
    return _decision(session.root, state, cfg, decision)


def _cost(session: Any, cfg: dict[str, Any], parsed: ParseResult) -> float | None:
    from dun.engine.manager import agent_adapters

    adapter = agent_adapters(session.pm).get(cfg["agent"]["name"])
    return adapter.cost(parsed.agent, cfg["agent"]) if adapter else None
