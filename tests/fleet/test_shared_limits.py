"""The per-account limits shared by loops on one machine: real concurrent processes, one simulated clock."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from limits_worker import run_together

from dun.fleet.limits import DAY_S, LocalStore, SharedLimits, known_agents

WORKER = Path(__file__).with_name("limits_worker.py")
HOUR = 3600.0


def start(tmp_path: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, str(WORKER), str(tmp_path / "store"), str(tmp_path / "clock"), *args],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_three_processes_never_exceed_the_hourly_limit(tmp_path: Path) -> None:
    limit, attempts = 6, 100
    answers = run_together([start(tmp_path, "reserve", str(attempts), str(limit)) for _ in range(3)])
    granted = sorted(t for answer in answers for t in answer)
    for t in granted:  # every rolling hour ending at a grant holds at most `limit` grants
        assert sum(1 for u in granted if t - HOUR < u <= t) <= limit
    # 300 attempts one simulated minute apart: 6 grants at the start of each of 5 hours, whatever the interleaving.
    # A lost update (two processes granting from the same stale file) would show as more.
    assert len(granted) == 5 * limit
    assert len(set(granted)) == len(granted)


def test_a_pause_by_one_process_holds_the_others(tmp_path: Path) -> None:
    until = 1_000_000.0 + 5 * HOUR
    (paused,) = run_together([start(tmp_path, "pause", str(until))])
    assert paused == until
    answers = run_together([start(tmp_path, "query", "6") for _ in range(2)])
    for paused_until, wait in answers:
        assert paused_until == until
        assert 0 < wait <= 5 * HOUR  # a wait for the pause, and no call recorded
    assert SharedLimits("claude", tmp_path / "store").snapshot(now=until - 1)["calls_last_hour"] == 0


def test_window_rolls_instead_of_resetting_on_the_hour(tmp_path: Path) -> None:
    limits = SharedLimits("claude", tmp_path)
    assert [limits.reserve_call(2, now=t) for t in (100.0, 200.0)] == [0.0, 0.0]
    assert limits.reserve_call(2, now=3650.0) == pytest.approx(50.0)  # the 100.0 call leaves at 3700
    assert limits.reserve_call(2, now=3700.0) == 0.0


def test_a_slow_clock_cannot_reopen_a_full_window(tmp_path: Path) -> None:
    limits = SharedLimits("claude", tmp_path)
    assert limits.reserve_call(1, now=5000.0) == 0.0
    # another loop's clock is an hour behind: its reading counts as the latest time already seen
    assert limits.reserve_call(1, now=1000.0) == pytest.approx(HOUR)


def test_pause_keeps_the_later_end_and_expires(tmp_path: Path) -> None:
    limits = SharedLimits("claude", tmp_path)
    assert limits.pause_until(2000.0, "usage_limit", now=1000.0) == 2000.0
    assert limits.pause_until(1500.0, "rate_limit", now=1000.0) == 2000.0
    assert limits.paused_until(now=1999.0) == 2000.0 and limits.paused_until(now=2000.0) is None
    assert limits.snapshot(now=1999.0)["pause_reason"] == "usage_limit"
    # once over, a new pause may be shorter than the old one was
    assert limits.pause_until(2500.0, "rate_limit", now=2001.0) == 2500.0


def test_costs_sum_over_the_last_day(tmp_path: Path) -> None:
    limits = SharedLimits("claude", tmp_path)
    limits.record_cost(1.25, now=0.0)
    limits.record_cost(0.0, now=10.0)
    limits.record_cost(2.5, now=DAY_S - 1)
    assert limits.spent_usd(now=DAY_S - 1) == 3.75
    assert limits.spent_usd(now=DAY_S + 1) == 2.5
    assert limits.spent_usd(window_s=HOUR, now=DAY_S) == 2.5


def test_agents_are_separate_and_listed(tmp_path: Path) -> None:
    claude, codex = SharedLimits("claude", tmp_path), SharedLimits("codex", tmp_path)
    assert claude.reserve_call(1, now=10.0) == 0.0
    assert codex.reserve_call(1, now=10.0) == 0.0
    assert known_agents(tmp_path) == ["claude", "codex"]
    assert SharedLimits("../evil", tmp_path).path.parent == tmp_path


def test_a_damaged_store_is_replaced_not_fatal(tmp_path: Path) -> None:
    limits = SharedLimits("claude", tmp_path)
    tmp_path.joinpath("claude.json").write_text("{not json")
    assert limits.reserve_call(1, now=10.0) == 0.0
    assert json.loads(limits.path.read_text())["calls"] == [10.0]


def test_store_lives_in_the_user_state_dir(isolated_home: Path) -> None:
    limits = LocalStore().limits("claude")
    assert limits.path == isolated_home / ".local/state/dun/fleet/claude.json"
