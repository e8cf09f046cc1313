"""`.dun/REPORT.md`, written at every stop, and the readers behind `dun status` and `dun logs`."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dun.core.kinds import StopReason
from dun.store.records import DiscrepancyRecord, IterationLog
from dun.store.state import LoopState
from dun.store.store import Store

if TYPE_CHECKING:
    from dun.config.sections import Settings

MAX_ROWS = 200  # the report stays readable after a long night: older rows are summarised

# What to run after each stop reason (REPORT.md, `dun status`, the loop's last line): a resumed run keeps its
# iteration count, spend, errors and circuit; `--fresh` starts a new run with a closed circuit.
RESUME: dict[str, str] = {
    StopReason.COMPLETE: "nothing to resume; `dun loop` starts a new run when the checks find new work",
    StopReason.STOP_REQUESTED: "`dun loop` resumes the run",
    StopReason.INTERRUPTED: "`dun loop` resumes the run",
    StopReason.CIRCUIT_OPEN: "read why it opened (the last iterations in `dun logs`), then `dun loop --reset-circuit` "
                             "resumes the run (`dun loop --fresh` starts a new one)",
    StopReason.MAX_ITERATIONS: "`dun loop --max-iterations N` with a higher N resumes the run; `dun loop --fresh` "
                               "starts a new one",
    StopReason.MAX_DURATION: "`dun loop --fresh` starts a new run (the duration counts from the run's start)",
    StopReason.BUDGET: "`dun loop --max-budget-usd X` with a higher cap resumes the run",
    StopReason.ERROR_THRESHOLD: "read the failed calls (`dun logs N --out`), fix the cause (`dun doctor`), then "
                                "`dun loop --fresh`",
    StopReason.AGENT_BLOCKED: "resolve what the agent is blocked on (its last status block, `dun logs`), then "
                              "`dun loop` resumes the run",
    StopReason.TASK_TAMPERED: "review the mission change (`dun logs N`), then `dun loop` resumes the run",
    StopReason.CHECKER_TAMPERED: "review the change to what decides 'done' (`dun logs N`), then `dun loop` resumes "
                                 "the run",
    StopReason.SHARED_BUDGET: "`dun loop` resumes once the agent's spend over the last 24 hours is below "
                              "fleet.budget_usd_per_day",
    StopReason.DISK_FULL: "free some space, then `dun loop` resumes the run",
    StopReason.UNCONFIRMED: "check that the agent runs (`dun doctor`, `dun logs N --out`), then `dun loop` resumes "
                            "the run and asks it again",
}


def discrepancies_of(log: IterationLog | dict[str, object]) -> list[DiscrepancyRecord]:
    """What verification found in an iteration, as its log has it (an older or damaged log may have nothing)."""
    verification = log.get("verification")
    found = verification.get("discrepancies") if isinstance(verification, dict) else None
    return list(found) if isinstance(found, list) else []


# Each stop reason in words, for a person reading the morning's report (dun report).
MEANING: dict[str, str] = {
    StopReason.COMPLETE: "the mission is done: every check passes and the agent agreed",
    StopReason.STOP_REQUESTED: "someone asked it to stop (`dun stop`)",
    StopReason.INTERRUPTED: "it was interrupted by a signal (Ctrl-C, a shutdown, a job's time limit)",
    StopReason.CIRCUIT_OPEN: "the circuit breaker opened: the agent kept failing to make progress",
    StopReason.MAX_ITERATIONS: "it used every iteration it was allowed (loop.max_iterations)",
    StopReason.MAX_DURATION: "it ran for as long as it was allowed (loop.max_duration_h)",
    StopReason.BUDGET: "it spent its budget (loop.max_budget_usd)",
    StopReason.ERROR_THRESHOLD: "too many agent calls failed (loop.error_threshold)",
    StopReason.AGENT_BLOCKED: "the agent said it is blocked, twice on the same task",
    StopReason.TASK_TAMPERED: "the mission's boxes were changed in a way dun does not accept (trust.on_task_tamper)",
    StopReason.CHECKER_TAMPERED: "what decides 'done' was changed (trust.on_checker_tamper)",
    StopReason.SHARED_BUDGET: "this agent's loops on this machine spent their daily budget (fleet.budget_usd_per_day)",
    StopReason.DISK_FULL: "the disk filled up",
    StopReason.UNCONFIRMED: "every check passes, but the agent never confirmed that it is done",
}


def resume_hint(reason: str | None) -> str | None:
    return RESUME.get(reason) if reason else None


def stop_words(state: Mapping[str, object] | None, reason: str | None) -> str:
    """Why the run stopped, in words: the reason's meaning, then its detail (a budget stop's spend, the circuit's
    cause) from the run's state when there is one."""
    if not reason:
        return "it has not stopped" if state and state.get("status") == "running" else "no stop recorded"
    words = MEANING.get(reason, reason)
    circuit = (state or {}).get("circuit")
    cause = circuit.get("reason") if isinstance(circuit, dict) and reason == StopReason.CIRCUIT_OPEN else None
    detail = (state or {}).get("stop_detail") or cause
    return f"{words} ({detail})" if detail else words


def cost_text(value: object, unknown: str = "-") -> str:
    return f"${value:.4f}" if isinstance(value, int | float) and not isinstance(value, bool) else unknown


def verdict(log: IterationLog | dict[str, Any]) -> str:
    if log.get("interrupted"):
        return "interrupted"
    parts: list[str] = []
    if log.get("error_kind"):
        parts.append(str(log["error_kind"]))
    if log.get("timed_out"):
        parts.append("timed out")
    parts += list(log.get("flags") or [])
    for d in discrepancies_of(log):
        parts.append(str(d.get("kind", "discrepancy")))
    if (log.get("progress") or {}).get("newly_passing"):
        parts.append("passing: " + ", ".join(log["progress"]["newly_passing"]))
    elif (log.get("progress") or {}).get("files_changed") or (log.get("progress") or {}).get("commits"):
        parts.append("progress")
    elif not parts:
        parts.append("no progress")
    return "; ".join(parts)


def _cell(value: object) -> str:
    return str(value if value is not None else "-").replace("|", "\\|").replace("\n", " ")[:80]


def protection_line(logs: list[IterationLog]) -> str:
    """How the run's agent and checks were confined; a run with any unconfined iteration says so and why."""
    weaker = next((log for log in logs if log.get("sandbox") == "off"), None)
    if weaker is not None:
        why = weaker.get("protection") or "the agent and the checks ran unconfined"
        return f"- protection: **no sandbox** ({why})"
    if logs:
        return "- protection: bubblewrap sandbox (the agent and the checks that judged it were confined)"
    return "- protection: -"


def write_report(store: Store, state: LoopState, settings: Settings) -> Path:
    logs = store.iteration_logs()
    run_logs = [log for log in logs if log.get("run_id") in (None, state.run_id)]
    cap = settings.loop.max_budget_usd
    first, last = (run_logs[0], run_logs[-1]) if run_logs else ({}, {})
    counted_before, counted_after = first.get("checks_before"), last.get("checks_after")
    before = counted_before.get("ids") if isinstance(counted_before, dict) else None
    after = counted_after.get("ids") if isinstance(counted_after, dict) else None
    lines = [
        "# dun loop report", "",
        f"- run: `{state.run_id}`",
        f"- status: **{state.status}**, stop reason: **{state.stop_reason}**"
        + (f" ({state.stop_detail})" if state.stop_detail else ""),
        *([f"- to go on: {resume_hint(state.stop_reason)}"] if resume_hint(state.stop_reason) else []),
        f"- started: {state.started_at}, ended: {state.ended_at}",
        f"- iterations: {state.iteration} ({len(run_logs)} logged), failed calls: {state.errors_total}",
        f"- cost: ${state.cost_usd_total:.4f}" + (f" of ${cap:g} budget" if cap > 0 else " (no budget cap)"),
        protection_line(run_logs),
        f"- circuit: {state.circuit.state}" + (f" ({state.circuit.reason})" if state.circuit.reason else ""),
        f"- checks actionable before: {len(before) if before is not None else '-'}"
        + (f" ({', '.join(before)})" if before else ""),
        f"- checks actionable after: {len(after) if after is not None else '-'}"
        + (f" ({', '.join(after)})" if after else ""),
        "", "## Iterations", "",
        "| # | exit | cost | duration | task claimed | status | verdict |",
        "|---|---|---|---|---|---|---|",
    ]
    shown = run_logs[-MAX_ROWS:]
    if len(run_logs) > len(shown):
        lines.append(f"| ... | | | | {len(run_logs) - len(shown)} earlier iterations in .dun/logs/ | | |")
    for log in shown:
        block = log.get("status_block") or {}
        cost = cost_text(log.get("cost_usd"))
        duration = f"{log['duration_s']:.0f}s" if isinstance(log.get("duration_s"), int | float) else "-"
        lines.append(f"| {log.get('iteration')} | {_cell(log.get('exit_code'))} | {cost} | {duration} | "
                     f"{_cell(block.get('task_completed'))} | {_cell(block.get('status') or log.get('parse_outcome'))}"
                     f" | {_cell(verdict(log))} |")
    discrepancies = [(log.get("iteration"), d) for log in run_logs
                     for d in discrepancies_of(log)]
    if discrepancies:
        lines += ["", "## Claims dun could not verify", ""]
        lines += [f"- iteration {n}: `{d.get('kind')}` {d.get('detail', '')}" for n, d in discrepancies]
    outside = [(log.get("iteration"), log.get("baseline_changes") or []) for log in run_logs
               if log.get("baseline_changes")]
    if outside:  # a person's edits while no agent ran: the new baseline, never held against the agent
        lines += ["", "## Changed while no agent ran (not the agent's; taken as the baseline)", ""]
        lines += [f"- before iteration {n}: {', '.join(paths)}" for n, paths in outside]
    lines += ["", "Logs: `.dun/logs/iteration-N.json` (`dun logs N`), agent output: `dun logs N --out`.", ""]
    return store.write_report("\n".join(lines))
