"""The rolling hourly call window: which calls count, how long until one more call fits, how many are left."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from dun.core.ratewindow import WINDOW_S, calls_left, prune, wait_needed

NOW = 1_800_000_000.0


def test_the_window_is_one_hour() -> None:
    assert WINDOW_S == 3600.0


def test_prune_keeps_only_the_last_hour_sorted() -> None:
    calls = [NOW - 10, NOW - 4000, NOW - 3599.5, NOW - 3600, NOW - 1]
    assert prune(calls, NOW) == [NOW - 3599.5, NOW - 10, NOW - 1]
    assert prune([], NOW) == []


def test_no_wait_while_calls_are_left() -> None:
    assert wait_needed([], 1, NOW) == 0.0
    assert wait_needed([NOW - 5], 2, NOW) == 0.0
    assert wait_needed([NOW - 5, NOW - 7200], 2, NOW) == 0.0  # the old call no longer counts


def test_a_full_window_waits_until_the_oldest_call_leaves_it() -> None:
    assert wait_needed([NOW - 100, NOW - 10], 2, NOW) == 3500.0
    assert wait_needed([NOW - 10, NOW - 100], 2, NOW) == 3500.0  # unordered input


def test_more_calls_than_the_limit_wait_for_enough_of_them_to_leave() -> None:
    # limit lowered from 4 to 2 with four recent calls: three must leave before a call fits, the third at
    # NOW-100+3600
    calls = [NOW - 300, NOW - 200, NOW - 100, NOW - 50]
    assert wait_needed(calls, 2, NOW) == 3500.0


def test_calls_left() -> None:
    assert calls_left([], 3, NOW) == 3
    assert calls_left([NOW - 1, NOW - 2], 3, NOW) == 1
    assert calls_left([NOW - 1, NOW - 2, NOW - 3, NOW - 4], 3, NOW) == 0  # never negative
    assert calls_left([NOW - 3600, NOW - 5000], 3, NOW) == 3


@settings(max_examples=300, deadline=None)
@given(ages=st.lists(st.floats(min_value=0, max_value=7200, allow_nan=False), max_size=12),
       limit=st.integers(min_value=1, max_value=6))
def test_after_the_wait_one_more_call_fits_and_not_before(ages: list[float], limit: int) -> None:
    calls = [NOW - age for age in ages]
    wait = wait_needed(calls, limit, NOW)
    assert wait >= 0
    assert len(prune(calls, NOW + wait)) < limit
    assert calls_left(calls, limit, NOW + wait) >= 1
    if wait > 0.01:
        assert len(prune(calls, NOW + wait - 0.01)) >= limit
    else:
        assert wait == 0.0 or len(prune(calls, NOW)) >= limit
