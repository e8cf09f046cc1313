"""The loop's policy as pure functions: what stops or delays the next call, how one iteration is folded into the
state, and the dual gate (checks pass AND the agent agrees)."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from dun.agents.limits import AgentError
from dun.answer.block import StatusBlock
from dun.answer.transcript import ParseResult
from dun.config.loader import defaults_only
from dun.config.sections import Settings
from dun.loop.circuit import CLOSED, HALF_OPEN, OPEN, trip
from dun.loop.policy import Decision, after_iteration, before_iteration, nothing_actionable
from dun.loop.policy import IterationOutcome as Outcome
from dun.store.state import Blocked, LoopState

NOW = 1_800_000_000.0


def cfg(**loop: Any) -> Settings:
    """The default settings with `loop.KEY` (or `SECTION__KEY`) changed."""
    flags = {}
    for key, value in loop.items():
        section, _, name = key.partition("__")
        flags[f"{section}.{name}" if name else f"loop.{key}"] = value
    return defaults_only().settings.with_flags(flags)


def state(**changes: Any) -> LoopState:
    return dataclasses.replace(LoopState(started_epoch=NOW - 60), **changes)


def parsed(status: str | None = "IN_PROGRESS", exit: bool = False, task: str | None = "x") -> ParseResult:
    if status is None:
        return ParseResult(outcome="no_status_block", shape="claude-json")
    return ParseResult(outcome="parsed", shape="claude-json",
                       block=StatusBlock(status=status, exit_signal=exit, task_completed=task))


def outcome(status: str | None = "IN_PROGRESS", exit: bool = False, task: str | None = "x",
            error: AgentError | None = None, cost: float = 0.0, progress: bool = True,
            after: list[str] | None = None, confirmation: bool = False, denials: int = 0) -> Outcome:
    return Outcome(parsed(status, exit, task), error, cost, progress, ["mission-boxes"] if after is None else after,
                   confirmation, denials)


# --- before_iteration ------------------------------------------------------------------------------------------


def test_a_fresh_state_goes_ahead() -> None:
    assert before_iteration(state(), cfg(), False, NOW) is None


def test_a_stop_request_wins_over_everything() -> None:
    s = state(circuit=trip(state().circuit, "no_progress", NOW), iteration=500, resume_at=NOW + 60)
    assert before_iteration(s, cfg(), True, NOW) == Decision("stop", "stop_requested")


def test_an_open_circuit_stops() -> None:
    s = state(circuit=trip(state().circuit, "no_progress", NOW))
    assert before_iteration(s, cfg(), False, NOW) == Decision("stop", "circuit_open")
    s.circuit.state = HALF_OPEN
    assert before_iteration(s, cfg(), False, NOW) is None


def test_max_iterations() -> None:
    assert before_iteration(state(iteration=2), cfg(max_iterations=3), False, NOW) is None
    assert before_iteration(state(iteration=3), cfg(max_iterations=3), False, NOW) == Decision("stop",
                                                                                                "max_iterations")


def test_max_duration() -> None:
    c = cfg(max_duration_h=1.0)
    assert before_iteration(state(started_epoch=NOW - 3599), c, False, NOW) is None
    assert before_iteration(state(started_epoch=NOW - 3600), c, False, NOW) == Decision("stop", "max_duration")


def test_budget_reserves_a_typical_iteration_not_the_per_iteration_cap() -> None:
    """The measured night: $5 cap, $5 per-iteration default, $0.11 spent: the run goes on."""
    c = cfg(max_budget_usd=5.0, budget_per_iteration_usd=5.0)
    assert before_iteration(state(cost_usd_total=0.11, costs=[0.11]), c, False, NOW) is None
    assert before_iteration(state(cost_usd_total=4.8, costs=[0.1, 0.3, 0.2]), c, False, NOW) is None  # 0.2 fits
    stopped = before_iteration(state(cost_usd_total=4.85, costs=[0.1, 0.3, 0.2]), c, False, NOW)
    assert stopped == Decision("stop", "budget")
    assert stopped is not None and stopped.detail == (
        "$4.8500 spent of the $5 budget; the $0.1500 left is less than the $0.2000 reserved for a typical "
        "iteration (the median of this run's last 3 iteration(s))")
    assert before_iteration(state(cost_usd_total=12.0), c, False, NOW) == Decision("stop", "budget")


def test_each_call_is_capped_by_what_is_left() -> None:
    from dun.loop.policy import call_cap

    assert call_cap(state(cost_usd_total=4.0), cfg(max_budget_usd=5.0, budget_per_iteration_usd=2.0)) == 1.0
    assert call_cap(state(cost_usd_total=1.0), cfg(max_budget_usd=5.0, budget_per_iteration_usd=2.0)) == 2.0
    assert call_cap(state(cost_usd_total=1.0), cfg(max_budget_usd=5.0, budget_per_iteration_usd=0.0)) == 4.0
    assert call_cap(state(cost_usd_total=9.0), cfg(max_budget_usd=0.0, budget_per_iteration_usd=2.0)) == 2.0


def test_the_reserve_learns_only_from_real_costs() -> None:
    s = state(iteration=1)
    after_iteration(s, cfg(), outcome(cost=0.25), NOW)
    out = outcome(cost=5.0)
    out.cost_estimated = True  # a killed call charged its cap: not what an iteration typically costs
    after_iteration(s, cfg(), out, NOW)
    assert s.costs == [0.25] and s.cost_usd_total == 5.25


def test_budget_without_a_per_iteration_cap_stops_once_the_cap_is_spent() -> None:
    c = cfg(max_budget_usd=1.0, budget_per_iteration_usd=0.0)
    assert before_iteration(state(cost_usd_total=0.99), c, False, NOW) is None
    assert before_iteration(state(cost_usd_total=1.0), c, False, NOW) == Decision("stop", "budget")


def test_no_budget_cap() -> None:
    assert before_iteration(state(cost_usd_total=1e6), cfg(max_budget_usd=0.0), False, NOW) is None


def test_budget_exactly_reached_by_the_next_iteration_goes_ahead() -> None:
    c = cfg(max_budget_usd=0.3, budget_per_iteration_usd=0.1)
    assert before_iteration(state(cost_usd_total=0.2), c, False, NOW) is None


def test_error_threshold() -> None:
    c = cfg(error_threshold=3)
    assert before_iteration(state(errors_total=2), c, False, NOW) is None
    assert before_iteration(state(errors_total=3), c, False, NOW) == Decision("stop", "error_threshold")


def test_a_pending_usage_limit_waits_until_resume_at() -> None:
    decision = before_iteration(state(resume_at=NOW + 90), cfg(), False, NOW)
    assert decision is not None
    assert (decision.action, decision.reason, decision.wait_s) == ("wait", "usage_limit", 90)
    assert before_iteration(state(resume_at=NOW - 1), cfg(), False, NOW) is None


def test_a_full_hourly_window_waits_for_the_oldest_call_to_leave() -> None:
    decision = before_iteration(state(calls=[NOW - 600, NOW - 60]), cfg(max_calls_per_hour=2), False, NOW)
    assert decision is not None
    assert (decision.action, decision.reason, decision.wait_s) == ("wait", "hourly_call_limit", 3000)
    assert before_iteration(state(calls=[NOW - 4000, NOW - 60]), cfg(max_calls_per_hour=2), False, NOW) is None


def test_stops_come_before_waits() -> None:
    s = state(iteration=3, resume_at=NOW + 600, calls=[NOW - 1] * 5)
    assert before_iteration(s, cfg(max_iterations=3, max_calls_per_hour=2), False, NOW) == Decision(
        "stop", "max_iterations")


# --- after_iteration -------------------------------------------------------------------------------------------


def test_an_iteration_adds_its_cost_and_its_call_time() -> None:
    s = state(cost_usd_total=0.5, calls=[NOW - 4000, NOW - 30])
    decision = after_iteration(s, cfg(), outcome(cost=0.25), NOW)
    assert decision == Decision("continue", "work_remains")
    assert s.cost_usd_total == 0.75
    assert s.calls == [NOW - 30, NOW]  # the call an hour ago left the window
    assert s.errors_total == 0
    assert s.circuit.state == CLOSED


def test_costs_add_up_without_float_drift() -> None:
    s = state()
    for _ in range(10):
        after_iteration(s, cfg(), outcome(cost=0.1), NOW)
    assert s.cost_usd_total == 1.0


def test_checks_pass_and_the_agent_agrees_complete() -> None:
    s = state()
    assert after_iteration(s, cfg(), outcome("COMPLETE", exit=True, after=[]), NOW) == Decision("stop", "complete")
    assert s.last_exit_signal is True


def test_a_premature_exit_claim_is_flagged_and_the_loop_goes_on() -> None:
    s, out = state(), outcome("COMPLETE", exit=True, after=["mission-boxes"])
    assert after_iteration(s, cfg(), out, NOW) == Decision("continue", "work_remains")
    assert out.flags == ["premature_exit_claim"]


def test_checks_pass_but_the_agent_disagrees_asks_for_confirmation() -> None:
    s, out = state(), outcome("COMPLETE", exit=False, after=[])
    assert after_iteration(s, cfg(), out, NOW) == Decision("continue", "confirm")
    assert s.last_exit_signal is False
    assert out.flags == []


def test_confirmation_iterations_end_complete_after_confirm_iterations() -> None:
    s, c = state(), cfg(confirm_iterations=2)
    first = after_iteration(s, c, outcome("COMPLETE", after=[], confirmation=True, progress=False), NOW)
    assert first.action == "continue" and s.confirmations == 1
    second = after_iteration(s, c, outcome("COMPLETE", after=[], confirmation=True, progress=False), NOW)
    assert second == Decision("stop", "complete") and s.confirmations == 2


def test_a_confirmation_where_the_agent_agrees_completes_at_once() -> None:
    s = state()
    decision = after_iteration(s, cfg(confirm_iterations=5), outcome("COMPLETE", exit=True, after=[],
                                                                     confirmation=True), NOW)
    assert decision == Decision("stop", "complete")


def test_answered_confirmations_do_not_move_the_breaker_towards_open() -> None:
    s, c = state(iteration=3), cfg(confirm_iterations=4)
    for _ in range(3):
        after_iteration(s, c, outcome("COMPLETE", after=[], confirmation=True, progress=False), NOW)
    assert s.circuit.state == CLOSED and s.circuit.no_progress == 0


def test_a_confirmation_call_that_failed_confirms_nothing() -> None:
    s, c = state(iteration=3), cfg(confirm_iterations=2)
    crash = AgentError("other", "exit 1", None)
    first = after_iteration(s, c, outcome(None, error=crash, after=[], confirmation=True, progress=False), NOW)
    assert first == Decision("continue", "confirm") and (s.confirmations, s.unconfirmed) == (0, 1)
    second = after_iteration(s, c, outcome(None, error=crash, after=[], confirmation=True, progress=False), NOW)
    assert second == Decision("stop", "unconfirmed") and s.confirmations == 0
    assert "2 confirmation call(s) in a row gave no answer" in str(second.detail)
    assert nothing_actionable(s, c) is None  # nor does a later start take the failed calls as agreement


def test_an_answer_without_a_status_block_is_no_confirmation() -> None:
    s, c = state(iteration=2), cfg(confirm_iterations=2)
    after_iteration(s, c, outcome(None, after=[], confirmation=True, progress=False), NOW)
    assert (s.confirmations, s.unconfirmed) == (0, 1)
    after_iteration(s, c, outcome("COMPLETE", after=[], confirmation=True, progress=False), NOW)
    assert (s.confirmations, s.unconfirmed) == (1, 0)  # one answer in between: not in a row any more


def test_a_failed_call_cannot_signal_exit_even_with_a_block_in_its_output() -> None:
    s = state(iteration=1)
    out = outcome("COMPLETE", exit=True, after=[], error=AgentError("other", "exit 1", None))
    assert after_iteration(s, cfg(), out, NOW).action == "continue" and s.last_exit_signal is None


def test_failing_checks_in_a_normal_iteration_reset_the_confirmations() -> None:
    s = state(confirmations=1)
    after_iteration(s, cfg(), outcome(after=["mission-boxes"]), NOW)
    assert s.confirmations == 0


def test_a_confirmation_that_leaves_checks_failing_is_not_complete() -> None:
    s, c = state(confirmations=1), cfg(confirm_iterations=2)
    decision = after_iteration(s, c, outcome("IN_PROGRESS", after=["mission-boxes"], confirmation=True), NOW)
    assert decision.reason != "complete"
    assert decision.action == "continue"


def test_a_failed_call_counts_as_an_error_and_as_no_progress() -> None:
    s = state()
    error = AgentError("other", "exited with code 1", None)
    after_iteration(s, cfg(), outcome(None, error=error, progress=True), NOW)
    assert s.errors_total == 1
    assert s.circuit.no_progress == 1
    assert s.circuit.same_error == 1
    assert s.last_exit_signal is None


@pytest.mark.parametrize("kind", ["rate_limit", "usage_limit"])
def test_a_limit_with_a_reset_time_waits_until_then_and_is_no_failure(kind: str) -> None:
    s = state(circuit=dataclasses.replace(state().circuit, no_progress=1))
    error = AgentError(kind, "You've hit your limit · resets 9pm (Europe/London)", NOW + 7200)
    decision = after_iteration(s, cfg(), outcome(None, error=error, progress=False), NOW)
    assert (decision.action, decision.reason, decision.wait_s) == ("wait", kind, 7200)
    assert s.resume_at == NOW + 7200
    assert s.errors_total == 0
    assert s.circuit.no_progress == 1  # unchanged: waiting is not failing
    assert s.circuit.same_error == 0
    assert s.calls == [NOW]  # the call still counts against the hourly window


def test_a_limit_without_a_usable_reset_time_waits_usage_limit_wait_min() -> None:
    for reset in (None, NOW - 10):
        s = state()
        error = AgentError("rate_limit", "429 Too Many Requests", reset)
        decision = after_iteration(s, cfg(usage_limit_wait_min=2.0), outcome(None, error=error), NOW)
        assert (decision.action, decision.wait_s) == ("wait", 120)
        assert s.resume_at == NOW + 120


def test_blocked_twice_on_the_same_task_stops() -> None:
    s = state()
    assert after_iteration(s, cfg(), outcome("BLOCKED", task="lint"), NOW).action == "continue"
    assert s.blocked == Blocked("lint", 1)
    assert after_iteration(s, cfg(), outcome("BLOCKED", task="lint"), NOW) == Decision("stop", "agent_blocked")


def test_blocked_on_different_tasks_or_not_in_a_row_goes_on() -> None:
    s = state()
    after_iteration(s, cfg(), outcome("BLOCKED", task="lint"), NOW)
    assert after_iteration(s, cfg(), outcome("BLOCKED", task="docs"), NOW).action == "continue"
    assert s.blocked == Blocked("docs", 1)
    after_iteration(s, cfg(), outcome("IN_PROGRESS", task="docs"), NOW)
    assert s.blocked is None
    assert after_iteration(s, cfg(), outcome("BLOCKED", task="docs"), NOW).action == "continue"


def test_no_progress_opens_the_circuit_and_stops() -> None:
    s = state()
    decisions = [after_iteration(s, cfg(), outcome(progress=False), NOW + i) for i in range(3)]
    assert [d.action for d in decisions] == ["continue", "continue", "stop"]
    assert decisions[-1].reason == "circuit_open"
    assert (s.circuit.state, s.circuit.reason) == (OPEN, "no_progress")


def test_the_same_error_with_different_numbers_opens_the_circuit() -> None:
    s, c = state(), cfg(circuit__same_error_limit=3, circuit__no_progress_limit=50, circuit__half_open_after=50,
                        error_threshold=50)
    messages = ["connection reset after 1203 ms (attempt 3 of 5), request req_011CVabc123456",
                "connection reset after 877 ms (attempt 4 of 5), request req_011CVxyz987654",
                "connection reset after 15 ms (attempt 1 of 5), request req_011CVqqq000111"]
    decisions = [after_iteration(s, c, outcome(None, error=AgentError("network", m, None)), NOW) for m in messages]
    assert decisions[-1] == Decision("stop", "circuit_open")
    assert (s.circuit.reason, s.circuit.same_error) == ("same_error", 3)


def test_permission_denials_twice_open_the_circuit() -> None:
    s = state()
    assert after_iteration(s, cfg(), outcome(denials=1), NOW).action == "continue"
    assert after_iteration(s, cfg(), outcome(denials=2), NOW) == Decision("stop", "circuit_open")
    assert s.circuit.reason == "permission_denied"


def test_decision_to_dict() -> None:
    assert Decision("wait", "usage_limit", 12.345).to_dict() == {"action": "wait", "reason": "usage_limit",
                                                                  "wait_s": 12.3}


# --- nothing_actionable ----------------------------------------------------------------------------------------


def test_nothing_actionable_before_the_first_iteration_is_complete() -> None:
    assert nothing_actionable(state(iteration=0), cfg()) == Decision("stop", "complete")


def test_nothing_actionable_after_the_agent_agreed_is_complete() -> None:
    assert nothing_actionable(state(last_exit_signal=True, iteration=1), cfg()) == Decision("stop", "complete")


def test_nothing_actionable_while_the_agent_disagrees_asks_for_a_confirmation() -> None:
    assert nothing_actionable(state(last_exit_signal=False, iteration=1), cfg()) is None
    assert nothing_actionable(state(last_exit_signal=None, confirmations=1, iteration=1),
                              cfg(confirm_iterations=2)) is None


def test_nothing_actionable_after_enough_confirmations_is_complete() -> None:
    s = state(last_exit_signal=False, confirmations=2, iteration=2)
    assert nothing_actionable(s, cfg(confirm_iterations=2)) == Decision("stop", "complete")
    assert nothing_actionable(state(last_exit_signal=False, iteration=1), cfg(confirm_iterations=0)) == Decision(
        "stop", "complete")
