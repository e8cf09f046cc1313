"""Whether the loop goes on, waits or stops: one pure policy shared by `dun loop` and `dun respond --decide`."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from dun.agents.limits import AgentError
from dun.answer.transcript import ParseResult
from dun.loop import circuit as breaker
from dun.loop.ratewindow import prune, wait_needed

LIMIT_KINDS = ("rate_limit", "usage_limit")


@dataclass
class Decision:
    action: str  # continue | wait | stop
    reason: str
    wait_s: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {"action": self.action, "reason": self.reason, "wait_s": round(self.wait_s, 1)}


@dataclass
class Outcome:
    """What one iteration produced, as the policy needs it."""

    parsed: ParseResult
    error: AgentError | None
    cost_usd: float
    progress: bool
    actionable_after: list[str]
    confirmation: bool = False  # the iteration ran with every check passing
    denials: int = 0
    interrupted: bool = False  # stopped by SIGINT/SIGTERM or `dun stop --now`: neither a failure nor no progress
    flags: list[str] = field(default_factory=list)  # filled by the policy: premature_exit_claim, ...


def before_iteration(state: dict[str, Any], cfg: dict[str, Any], stop_requested: bool,
                     now: float | None = None) -> Decision | None:
    """A stop or wait due before the next agent call, or None to go ahead."""
    now = time.time() if now is None else now
    loop = cfg["loop"]
    if stop_requested:
        return Decision("stop", "stop_requested")
    if state["circuit"]["state"] == breaker.OPEN:
        return Decision("stop", "circuit_open")
    if state["iteration"] >= loop["max_iterations"]:
        return Decision("stop", "max_iterations")
    if now - state["started_epoch"] >= loop["max_duration_h"] * 3600:
        return Decision("stop", "max_duration")
    cap, per = loop["max_budget_usd"], loop["budget_per_iteration_usd"]
    # rounded: 0.2 + 0.1 must not exceed a 0.3 cap
    if cap > 0 and (round(state["cost_usd_total"] + per, 6) > cap or round(state["cost_usd_total"], 6) >= cap):
        return Decision("stop", "budget")
    if state["errors_total"] >= loop["error_threshold"]:
        return Decision("stop", "error_threshold")
    if state.get("resume_at") and state["resume_at"] > now:
        return Decision("wait", "usage_limit", state["resume_at"] - now)
    wait = wait_needed(state["calls"], loop["max_calls_per_hour"], now)
    if wait > 0:
        return Decision("wait", "hourly_call_limit", wait)
    return None


def after_iteration(state: dict[str, Any], cfg: dict[str, Any], out: Outcome,
                    now: float | None = None) -> Decision:
    """Fold an iteration into `state` (in place) and decide what comes next."""
    now = time.time() if now is None else now
    loop = cfg["loop"]
    state["cost_usd_total"] = round(state["cost_usd_total"] + out.cost_usd, 6)
    state["calls"] = prune([*state["calls"], now], now)
    if out.interrupted:
        return Decision("stop", "interrupted")
    limited = out.error is not None and out.error.kind in LIMIT_KINDS
    if out.error is not None and not limited:
        state["errors_total"] += 1
    if limited:
        assert out.error is not None
        wait_s = loop["usage_limit_wait_min"] * 60
        reset = out.error.reset_at if out.error.reset_at and out.error.reset_at > now else now + wait_s
        state["resume_at"] = reset
    from dun.agents.limits import normalize_error

    state["circuit"] = breaker.record(state["circuit"], cfg["circuit"], out.progress,
                                      normalize_error(out.error.message) if out.error and not limited else None,
                                      out.denials, limited, now)
    block = out.parsed.block
    state["last_exit_signal"] = block.exit_signal if block else None
    if out.confirmation:
        state["confirmations"] += 1
    elif out.actionable_after:
        state["confirmations"] = 0
    if block and block.exit_signal and out.actionable_after:
        out.flags.append("premature_exit_claim")
    if block and block.status == "BLOCKED":
        task = block.task_completed or ""
        previous = state.get("blocked") or {}
        count = previous.get("count", 0) + 1 if previous.get("task") == task else 1
        state["blocked"] = {"task": task, "count": count}
        if count >= 2:
            return Decision("stop", "agent_blocked")
    else:
        state["blocked"] = None
    if not out.actionable_after and block is not None and block.exit_signal:
        return Decision("stop", "complete")
    if out.confirmation and not out.actionable_after and state["confirmations"] >= loop["confirm_iterations"]:
        return Decision("stop", "complete")
    if state["circuit"]["state"] == breaker.OPEN:
        return Decision("stop", "circuit_open")
    if limited:
        return Decision("wait", out.error.kind if out.error else "usage_limit", state["resume_at"] - now)
    return Decision("continue", "work_remains" if out.actionable_after else "confirm")


def nothing_actionable(state: dict[str, Any], cfg: dict[str, Any], first: bool) -> Decision | None:
    """Checks all pass before an iteration: complete, or None to run a confirmation iteration."""
    if first or state.get("last_exit_signal") or state["confirmations"] >= cfg["loop"]["confirm_iterations"]:
        return Decision("stop", "complete")
    return None
