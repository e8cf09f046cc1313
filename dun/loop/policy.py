"""Whether the loop goes on, waits or stops: the whole decision, in pure functions over the state.

Both drivers (`dun loop` and `dun respond --decide` for scripts/dun-loop.sh) reach every decision here, through
the iteration engine: limits, waits, the dual gate, the circuit breaker and the trust stops.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from dun.agents.limits import AgentError, normalize_error
from dun.answer.transcript import ParseResult
from dun.core.kinds import LIMIT_KINDS, Action, ContinueReason, DiscrepancyKind, StopReason, WaitReason
from dun.core.ratewindow import prune, wait_needed
from dun.loop import circuit as breaker
from dun.store.state import Blocked, LoopState
from dun.trust.claims import Discrepancy

if TYPE_CHECKING:
    from dun.config.sections import Settings


@dataclass
class Decision:
    action: str  # Action
    reason: str  # StopReason, WaitReason or ContinueReason
    wait_s: float = 0.0
    detail: str | None = field(default=None, compare=False)  # a stop's why, in words (state.json's stop_detail)

    def to_dict(self) -> dict[str, object]:
        out = {"action": str(self.action), "reason": str(self.reason), "wait_s": round(self.wait_s, 1)}
        return {**out, "detail": self.detail} if self.detail else out


def stop(reason: str, detail: str | None = None) -> Decision:
    return Decision(Action.STOP, reason, detail=detail)


MAX_COSTS = 20  # the iteration costs a run remembers for its reserve


def reserve(state: LoopState) -> tuple[float, str]:
    """What the next iteration is expected to cost, and how that was worked out: the median of this run's
    iterations (their real costs, not the caps charged for calls that reported none); nothing before the first."""
    costs = sorted(state.costs)
    if not costs:
        return 0.0, "no iteration priced yet"
    mid = len(costs) // 2
    median = costs[mid] if len(costs) % 2 else (costs[mid - 1] + costs[mid]) / 2
    return round(median, 6), f"the median of this run's last {len(costs)} iteration(s)"


def budget_stop(state: LoopState, cap: float) -> Decision | None:
    """The budget rule: stop when the cap is spent, or when what is left cannot pay for a typical iteration.
    `loop.budget_per_iteration_usd` caps each call (bounded by what is left) but reserves nothing by itself."""
    spent = round(state.cost_usd_total, 6)
    if cap <= 0:
        return None
    if spent >= cap:
        return stop(StopReason.BUDGET, f"${spent:.4f} spent of the ${cap:g} budget")
    expected, why = reserve(state)
    left = round(cap - spent, 6)
    if expected > left:
        return stop(StopReason.BUDGET, f"${spent:.4f} spent of the ${cap:g} budget; the ${left:.4f} left is less "
                                       f"than the ${expected:.4f} reserved for a typical iteration ({why})")
    return None


def call_cap(state: LoopState, settings: Settings) -> float | None:
    """The most one agent call may spend: `loop.budget_per_iteration_usd`, never more than the budget left."""
    per = settings.loop.budget_per_iteration_usd or None
    cap = settings.loop.max_budget_usd
    if cap <= 0:
        return per
    left = max(round(cap - state.cost_usd_total, 6), 0.0)
    return left if per is None else min(per, left)


@dataclass
class IterationOutcome:
    """What one iteration produced, as the policy needs it."""

    parsed: ParseResult
    error: AgentError | None
    cost_usd: float
    progress: bool
    actionable_after: list[str]
    confirmation: bool = False  # the iteration ran with every check passing
    denials: int = 0
    interrupted: bool = False  # stopped by a signal or `dun stop --now`: neither a failure nor no progress
    discrepancies: list[Discrepancy] = field(default_factory=list)  # what trust verification found
    trust_stop: str | None = None  # a trust policy of `stop` that fired (task_tampered, checker_tampered)
    flags: list[str] = field(default_factory=list)  # filled by the policy: premature_exit_claim, ...
    cost_estimated: bool = False  # the cost is the cap charged for a call that reported none


def before_iteration(state: LoopState, settings: Settings, stop_requested: bool,
                     now: float | None = None) -> Decision | None:
    """A stop or wait due before the next agent call, or None to go ahead."""
    now = time.time() if now is None else now
    loop = settings.loop
    if stop_requested:
        return stop(StopReason.STOP_REQUESTED)
    if state.circuit.state == breaker.OPEN:
        return stop(StopReason.CIRCUIT_OPEN)
    if state.iteration >= loop.max_iterations:
        return stop(StopReason.MAX_ITERATIONS)
    if now - state.started_epoch >= loop.max_duration_h * 3600:
        return stop(StopReason.MAX_DURATION)
    over = budget_stop(state, loop.max_budget_usd)
    if over is not None:
        return over
    if state.errors_total >= loop.error_threshold:
        return stop(StopReason.ERROR_THRESHOLD)
    resume_at = state.resume_at
    if resume_at and resume_at > now:
        return Decision(Action.WAIT, WaitReason.USAGE_LIMIT, resume_at - now)
    wait = wait_needed(state.calls, loop.max_calls_per_hour, now)
    if wait > 0:
        return Decision(Action.WAIT, WaitReason.HOURLY_CALL_LIMIT, wait)
    return None


def nothing_actionable(state: LoopState, settings: Settings) -> Decision | None:
    """Checks all pass before an iteration: complete, or None to run a confirmation iteration.

    Complete at once when no agent has run in this run yet (a resumed run is not new: an interrupted iteration
    counts), when the last agent signalled EXIT_SIGNAL, or after enough confirmations."""
    first = state.iteration == 0
    if first or state.last_exit_signal or state.confirmations >= settings.loop.confirm_iterations:
        return stop(StopReason.COMPLETE)
    return None


def after_iteration(state: LoopState, settings: Settings, out: IterationOutcome,
                    now: float | None = None) -> Decision:
    """Fold an iteration into `state` (in place) and decide what comes next."""
    now = time.time() if now is None else now
    loop = settings.loop
    state.cost_usd_total = round(state.cost_usd_total + out.cost_usd, 6)
    if out.cost_usd > 0 and not out.cost_estimated:
        state.costs = [*state.costs, round(out.cost_usd, 6)][-MAX_COSTS:]
    state.calls = prune([*state.calls, now], now)
    if out.interrupted:
        return stop(StopReason.INTERRUPTED)
    limited = out.error is not None and out.error.kind in LIMIT_KINDS
    if out.error is not None and not limited:
        state.errors_total += 1
    if out.error is not None and limited:
        wait_s = loop.usage_limit_wait_min * 60
        state.resume_at = out.error.reset_at if out.error.reset_at and out.error.reset_at > now else now + wait_s
    error_text = normalize_error(out.error.message) if out.error and not limited else None
    # a confirmation that answered did what it was asked (look, change nothing): not a step without progress
    answered_confirmation = out.confirmation and out.error is None and out.parsed.block is not None
    state.circuit = breaker.record(state.circuit, settings.circuit, out.progress or answered_confirmation,
                                   error_text, out.denials, limited, now)
    oscillation = any(d.kind == DiscrepancyKind.OSCILLATION for d in out.discrepancies)
    state.circuit = breaker.record_trust(state.circuit, settings.circuit, len(out.discrepancies), oscillation,
                                         now)
    # only an answer counts: a failed call's text (a crash, a timeout, an API error) agrees to nothing
    block = out.parsed.block if out.error is None else None
    state.last_exit_signal = block.exit_signal if block else None
    if out.confirmation and not limited:
        if block is not None:
            state.confirmations += 1
            state.unconfirmed = 0
        else:
            state.unconfirmed = state.unconfirmed + 1
    elif out.actionable_after:
        state.confirmations = 0
        state.unconfirmed = 0
    if block and block.exit_signal and out.actionable_after:
        out.flags.append("premature_exit_claim")
    if out.trust_stop:
        return stop(out.trust_stop)
    if block and block.status == "BLOCKED":
        task = block.task_completed or ""
        previous = state.blocked
        count = previous.count + 1 if previous and previous.task == task else 1
        state.blocked = Blocked(task, count)
        if count >= 2:
            return stop(StopReason.AGENT_BLOCKED)
    else:
        state.blocked = None
    if not out.actionable_after and block is not None and block.exit_signal:
        return stop(StopReason.COMPLETE)
    if out.confirmation and not out.actionable_after and state.confirmations >= loop.confirm_iterations:
        return stop(StopReason.COMPLETE)
    if out.confirmation and not out.actionable_after and state.unconfirmed >= max(loop.confirm_iterations, 1):
        return stop(StopReason.UNCONFIRMED, f"every check passes, but {state.unconfirmed} confirmation call(s) "
                                            "in a row gave no answer (a failed call, or no status block)")
    if state.circuit.state == breaker.OPEN:
        return stop(StopReason.CIRCUIT_OPEN)
    if out.error is not None and limited:
        return Decision(Action.WAIT, out.error.kind, (state.resume_at or now) - now)
    return Decision(Action.CONTINUE, ContinueReason.WORK_REMAINS if out.actionable_after else ContinueReason.CONFIRM)
