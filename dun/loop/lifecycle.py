"""The run lifecycle shared by `dun loop` and `dun respond --decide` (the shell driver): starting or resuming a
run, concluding an iteration from its answer, and stopping. One policy, one log format, one report."""

from __future__ import annotations

import copy
import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dun.agents.limits import AgentError, classify
from dun.agents.runner import group_alive, output_tail
from dun.answer.handoff import build_handoff, now, read_json, write_handoff
from dun.answer.transcript import ParseResult
from dun.core.atomic import write_json_atomic
from dun.core.git import changed_paths, diff_stat, head, recent_commits, worktree_tree
from dun.engine.model import Report
from dun.engine.session import Session
from dun.loop import circuit as breaker
from dun.loop.policy import Decision, Outcome, after_iteration
from dun.loop.ratewindow import calls_left
from dun.loop.report import write_report
from dun.store.state import archive_run, load_state, logs_dir, new_state, save_state

EXIT_TIMEOUT = 124  # what `timeout` returns: the shell driver's agent ran out of time


@dataclass
class Start:
    """Where an iteration began: what `conclude` compares against."""

    actionable: list[str]
    head: str | None
    tree: str | None
    confirmation: bool = False


def effective_config(session: Session, overrides: dict[str, Any]) -> dict[str, Any]:
    """The config values with command-line overrides (`loop.max_iterations`, `agent.name`, ...) on top."""
    cfg = copy.deepcopy(session.config.values)
    for dotted, value in overrides.items():
        if value is not None:
            section, key = dotted.split(".")
            cfg[section][key] = value
    return cfg


def save(root: Path, state: dict[str, Any], cfg: dict[str, Any]) -> None:
    loop = cfg["loop"]
    state["calls_left_hour"] = calls_left(state["calls"], loop["max_calls_per_hour"], time.time())
    cap = loop["max_budget_usd"]
    state["budget_left_usd"] = round(cap - state["cost_usd_total"], 4) if cap > 0 else None
    save_state(root, state)


def begin(session: Session, cfg: dict[str, Any], fresh: bool = False, reset_circuit: bool = False,
          say: Any = None) -> dict[str, Any]:
    """Start a new run or resume the one in progress; returns the state, saved. A new run records the mission's
    boxes and the checker's fingerprint it will be held to."""
    root = session.root
    previous = load_state(root)
    state, new_run = starting_state(previous, cfg, fresh, reset_circuit)
    if new_run and previous is not None:
        target = archive_run(root, previous)  # a run's logs are never overwritten by the next run's
        if say:
            say(f"previous run {previous.get('run_id')} archived in {target}")
    if new_run:
        from dun.trust.verify import start_run

        start_run(session, cfg, head(root))
    else:
        resume_interrupted(root, state, say)
    state.update(status="running", stop_reason=None, ended_at=None, pid=os.getpid())
    save(root, state, cfg)
    return state


def starting_state(previous: dict[str, Any] | None, cfg: dict[str, Any], fresh: bool = False,
                   reset_circuit: bool = False) -> tuple[dict[str, Any], bool]:
    """The state a loop starts from, and whether it is a new run (pure: `--dry-run` uses it too)."""
    new_run = previous is None or fresh or previous.get("status") == "complete"
    if new_run:
        state = new_state()
        if previous is not None:  # what outlives a run: the call window, a pending wait, the breaker
            state.update(calls=previous["calls"], resume_at=previous["resume_at"], circuit=previous["circuit"])
    else:
        state = copy.deepcopy(previous) if previous is not None else new_state()
    if reset_circuit:
        state["circuit"] = breaker.new_circuit()
    state["circuit"] = breaker.on_start(state["circuit"], cfg["circuit"]["cooldown_min"], time.time())
    return state, new_run


def resume_interrupted(root: Path, state: dict[str, Any], say: Any = None) -> None:
    """After a crash or kill -9: the unfinished iteration is logged as interrupted and its agent killed."""
    pgid = state.get("agent_pgid")
    if pgid and group_alive(pgid):
        os.killpg(pgid, signal.SIGKILL)
        if say:
            say(f"killed the agent left running by the previous loop (process group {pgid})")
    n = state.get("in_progress")
    if n:
        path = logs_dir(root) / f"iteration-{n}.json"
        log = read_json(path) or {"schema_version": 1, "iteration": n, "run_id": state.get("run_id")}
        if not log.get("ended_at"):
            log.update(ended_at=now(), decision={"action": "stop", "reason": "interrupted"}, interrupted=True)
            write_json_atomic(path, log)
        state["iteration"] = max(state["iteration"], n)
        if state.get("call_started"):  # the lost call still counts against the hourly limit
            state["calls"] = sorted([*state["calls"], state["call_started"]])
        if say:
            say(f"resuming after iteration {n}, which was interrupted")
    state.update(in_progress=None, agent_pgid=None, call_started=None)


def conclude(session: Session, cfg: dict[str, Any], state: dict[str, Any], n: int, parsed: ParseResult,
             start: Start, log: dict[str, Any], exit_code: int | None, timed_out: bool, cost: float | None,
             out_path: Path, start_error: str | None = None, interrupted: bool = False,
             ) -> tuple[Decision, Report, str | None]:
    """Everything after the agent answered: handoff, checks, git, breaker, counters, the log. Saves the state.
    Returns the decision, and the checks and work-tree hash afterwards (the next iteration can reuse them)."""
    root = session.root
    error: AgentError | None
    if interrupted:
        error = None  # we stopped it: not the agent's failure
    elif start_error:
        error = AgentError("other", start_error, None)
    elif timed_out:
        error = AgentError("other", f"timed out after {cfg['loop']['iteration_timeout_s']:g}s", None)
    else:
        error = classify(parsed.agent, exit_code, output_tail(out_path))
    after = session.report()
    after_ids = [r.id for r in after.actionable()]
    head_after = head(root)
    tree_after = worktree_tree(root) if start.tree else None
    if start.tree and tree_after:
        files_changed = len(changed_paths(root, start.tree, tree_after))
    else:  # no tree hash recorded at the start: compare with the starting commit instead
        files_changed = diff_stat(root, start.head)[1] if start.head else 0
    newly_passing = sorted(set(start.actionable) - set(after_ids))
    commits = recent_commits(root, 50, since=start.head) if start.head and head_after else []
    from dun.trust.verify import verify_iteration

    verification = verify_iteration(session, cfg, state, parsed.block, after, files_changed, len(commits),
                                    start.tree, tree_after, newly_passing)
    if verification["restored"] or verification["reverted"]:  # dun repaired the tree: judge the repaired state
        after = session.report()
        after_ids = [r.id for r in after.actionable()]
        newly_passing = sorted(set(start.actionable) - set(after_ids))
        head_after = head(root)
        tree_after = worktree_tree(root) if start.tree else None
    progress = bool(start.head != head_after or files_changed or newly_passing)
    estimated = False
    budget = cfg["loop"]["budget_per_iteration_usd"]
    if cost is None and timed_out and budget:
        cost, estimated = budget, True  # a killed call reports nothing: assume it spent its cap
    denials = len(parsed.agent.get("permission_denials") or [])
    outcome = Outcome(parsed, error, cost or 0.0, progress, after_ids, start.confirmation, denials, interrupted)
    decision = after_iteration(state, cfg, outcome)
    found = verification["discrepancies"]
    state["circuit"] = breaker.record_trust(state["circuit"], cfg["circuit"], len(found),
                                            any(d["kind"] == "oscillation" for d in found))
    if interrupted:
        pass  # the stop already decided
    elif verification["stop"]:
        decision = Decision("stop", verification["stop"])
    elif decision.action != "stop" and state["circuit"]["state"] == breaker.OPEN:
        decision = Decision("stop", "circuit_open")
    handoff = build_handoff(root, parsed, n, {"base_head": start.head, "head": head_after, "commits": commits[:20],
                                              "files_changed": files_changed})
    handoff["discrepancies"] = [d["detail"] for d in found]
    write_handoff(root, handoff)
    log["verification"] = {k: v for k, v in verification.items() if k != "stop"}
    if interrupted:
        log["interrupted"] = True
    log.update({
        "ended_at": now(), "exit_code": exit_code, "timed_out": timed_out, "cost_usd": cost,
        "cost_estimated": estimated, "session_id": parsed.agent.get("session_id"),
        "error_kind": error.kind if error else None, "error": error.message if error else None,
        "reset_at": error.reset_at if error else None,
        "status_block": parsed.block.to_dict() if parsed.block else None,
        "parse_error": parsed.error if parsed.outcome != "parsed" else None,
        "parse_outcome": parsed.outcome, "answer_shape": parsed.shape,
        "checks_after": {"actionable": len(after_ids), "ids": after_ids},
        "progress": {"head_before": start.head, "head_after": head_after, "commits": commits,
                     "files_changed": files_changed, "tree_hash": tree_after, "newly_passing": newly_passing},
        "permission_denials": denials, "flags": outcome.flags, "circuit": state["circuit"],
        "decision": decision.to_dict(),
    })
    write_json_atomic(logs_dir(root) / f"iteration-{n}.json", log)
    state.update(iteration=max(state["iteration"], n), in_progress=None, agent_pgid=None, call_started=None)
    save(root, state, cfg)
    return decision, after, tree_after


def open_iteration(root: Path, state: dict[str, Any], cfg: dict[str, Any], agent: str, argv: list[str],
                   start: Start, prompt_file: str) -> tuple[int, dict[str, Any]]:
    """Number the next iteration, write its first log record and mark it in progress (for resume)."""
    n = state["iteration"] + 1
    log: dict[str, Any] = {"schema_version": 1, "iteration": n, "run_id": state["run_id"], "started_at": now(),
                           "agent": agent, "argv": argv, "confirmation": start.confirmation,
                           "prompt_file": prompt_file, "out_file": f"iteration-{n}.out",
                           "checks_before": {"actionable": len(start.actionable), "ids": start.actionable}}
    write_json_atomic(logs_dir(root) / f"iteration-{n}.json", log)
    state.update(iteration=n, in_progress=n, call_started=time.time())
    save(root, state, cfg)
    return n, log


def finish(root: Path, state: dict[str, Any], cfg: dict[str, Any], reason: str) -> Path:
    """Record the stop reason, consume a STOP request, write the report."""
    state.update(status="complete" if reason == "complete" else "stopped", stop_reason=reason, ended_at=now())
    stop_file = root / ".dun" / "STOP"
    if reason == "stop_requested" and stop_file.exists():
        stop_file.unlink()  # consumed: the next start runs
    save(root, state, cfg)
    return write_report(root, state, cfg)
