"""The circuit breaker as pure functions: CLOSED -> HALF_OPEN -> OPEN on no progress, same errors and permission
denials; rate and usage limits change nothing; an OPEN circuit cools down to HALF_OPEN on a later start."""

from __future__ import annotations

import copy
from dataclasses import replace

import pytest

from dun.config.sections import Circuit
from dun.loop.circuit import CLOSED, HALF_OPEN, OPEN, new_circuit, on_start, record, trip
from dun.store.records import CircuitRecord
from dun.store.state import Breaker

CFG = Circuit(half_open_after=2, no_progress_limit=3, same_error_limit=5, permission_denial_limit=2, cooldown_min=30.0,
              discrepancy_limit=3, oscillation_limit=2)
NOW = 1_800_000_000.0


def run(circuit: Breaker, *steps: tuple[bool, str | None, int], cfg: Circuit | None = None,
        limited: bool = False) -> list[Breaker]:
    """Record (progress, error, denials) steps in order; every intermediate circuit."""
    seen = []
    for i, (progress, error, denials) in enumerate(steps):
        circuit = record(circuit, cfg or CFG, progress, error, denials, limited, NOW + i)
        seen.append(circuit)
    return seen


def test_a_new_circuit_is_closed_with_zero_counters() -> None:
    c = new_circuit()
    assert c.state == CLOSED
    assert (c.no_progress, c.same_error, c.permission_denials) == (0, 0, 0)
    assert (c.opened_at, c.reason, c.last_error) == (None, None, None)


def test_no_progress_goes_closed_half_open_open() -> None:
    seen = run(new_circuit(), (False, None, 0), (False, None, 0), (False, None, 0))
    assert [c.state for c in seen] == [CLOSED, HALF_OPEN, OPEN]
    assert [c.no_progress for c in seen] == [1, 2, 3]
    assert seen[-1].reason == "no_progress"
    assert seen[-1].opened_at == NOW + 2


def test_progress_closes_a_half_open_circuit_and_resets_the_count() -> None:
    half, closed = run(new_circuit(), (False, None, 0), (False, None, 0), (True, None, 0))[1:]
    assert half.state == HALF_OPEN
    assert (closed.state, closed.no_progress) == (CLOSED, 0)
    # and the count starts again: two more no-progress iterations are needed for HALF_OPEN
    again = run(closed, (False, None, 0), (False, None, 0))
    assert [c.state for c in again] == [CLOSED, HALF_OPEN]


def test_a_failed_call_is_no_progress_whatever_it_changed() -> None:
    seen = run(new_circuit(), (True, "boom", 0), (True, "bang", 0), (True, "crash", 0))
    assert [c.no_progress for c in seen] == [1, 2, 3]
    assert seen[-1].state == OPEN


def test_the_same_error_in_a_row_opens_it() -> None:
    cfg = replace(CFG, no_progress_limit=100, half_open_after=100, same_error_limit=3)
    seen = run(new_circuit(), *[(False, "network error <n>", 0)] * 3, cfg=cfg)
    assert [c.same_error for c in seen] == [1, 2, 3]
    assert seen[-1].last_error == "network error <n>"
    assert (seen[-1].state, seen[-1].reason) == (OPEN, "same_error")


def test_a_different_error_or_a_success_resets_the_same_error_count() -> None:
    cfg = replace(CFG, no_progress_limit=100, half_open_after=100, same_error_limit=3)
    seen = run(new_circuit(), (False, "a", 0), (False, "a", 0), (False, "b", 0), (False, "b", 0), cfg=cfg)
    assert [c.same_error for c in seen] == [1, 2, 1, 2]
    assert seen[-1].state == CLOSED
    after = run(seen[-1], (False, None, 0), (False, "b", 0), cfg=cfg)
    assert [(c.same_error, c.last_error) for c in after] == [(0, None), (1, "b")]
    assert after[-1].state == CLOSED


def test_permission_denials_in_a_row_open_it() -> None:
    seen = run(new_circuit(), (True, None, 1), (True, None, 3))
    assert [c.permission_denials for c in seen] == [1, 2]
    assert (seen[-1].state, seen[-1].reason) == (OPEN, "permission_denied")


def test_an_iteration_without_denials_resets_the_denial_count() -> None:
    seen = run(new_circuit(), (True, None, 1), (True, None, 0), (True, None, 1))
    assert [c.permission_denials for c in seen] == [1, 0, 1]
    assert seen[-1].state == CLOSED


def test_a_rate_or_usage_limit_changes_nothing() -> None:
    start = run(new_circuit(), (False, None, 0), (False, None, 0))[-1]
    assert start.state == HALF_OPEN
    after = run(start, *[(False, "rate limited", 0)] * 5, limited=True)
    assert all(c == start for c in after)


def test_record_does_not_change_its_input() -> None:
    c = new_circuit()
    before = copy.deepcopy(c)
    record(c, CFG, False, "x", 1, False, NOW)
    assert c == before


def test_a_circuit_from_an_older_state_file_gains_the_new_keys() -> None:
    old: CircuitRecord = {"state": CLOSED}
    c = record(Breaker.from_record(old), CFG, False, None, 0, False, NOW)
    assert (c.state, c.no_progress, c.trial) == (CLOSED, 1, False)
    assert set(c.to_record()) == set(new_circuit().to_record())


def test_trip_opens_with_a_reason_and_time() -> None:
    c = trip(new_circuit(), "same_error", NOW)
    assert (c.state, c.reason, c.opened_at) == (OPEN, "same_error", NOW)


def test_on_start_after_the_cooldown_an_open_circuit_is_half_open_with_fresh_counters() -> None:
    opened = run(new_circuit(), *[(False, "e", 0)] * 3)[-1]
    assert opened.state == OPEN
    later = on_start(opened, 30.0, opened.opened_at + 30 * 60)
    assert later.state == HALF_OPEN
    assert (later.no_progress, later.same_error, later.permission_denials) == (0, 0, 0)


def test_on_start_before_the_cooldown_it_stays_open() -> None:
    opened = trip(new_circuit(), "no_progress", NOW)
    assert on_start(opened, 30.0, NOW + 30 * 60 - 1).state == OPEN
    assert on_start(opened, 0.0, NOW).state == HALF_OPEN  # no cooldown at all


@pytest.mark.parametrize("state", [CLOSED, HALF_OPEN])
def test_on_start_leaves_a_circuit_that_is_not_open_alone(state: str) -> None:
    c = replace(new_circuit(), state=state, no_progress=1)
    assert on_start(c, 0.0, NOW) == c


def test_a_failed_trial_after_the_cooldown_does_not_close_the_circuit() -> None:
    opened = trip(replace(new_circuit(), no_progress=3), "no_progress", NOW)
    trial = on_start(opened, 30.0, NOW + 3600)
    assert trial.state == HALF_OPEN
    after = record(trial, CFG, False, None, 0, False, NOW + 3700)
    # the trial made no progress: the breaker must not report the healthy state
    assert after.state in (HALF_OPEN, OPEN)
