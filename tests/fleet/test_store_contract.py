"""One interface, two implementations: the same behaviour asked of this machine's file and of Redis (a real
redis-server on a free port)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from redis_support import RedisServer

from dun.fleet.limits import LocalStore
from dun.fleet.redisstore import RedisStore
from dun.fleet.store import DAY_S, FORGET_AFTER_S, FleetStore

HOUR = 3600.0


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    running = RedisServer(tmp_path_factory.mktemp("redis")).start()
    yield running
    running.kill()


@pytest.fixture(params=["local", "redis"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[FleetStore]:
    if request.param == "local":
        yield LocalStore(tmp_path / "fleet")
        return
    server: RedisServer = request.getfixturevalue("server")
    server.flush()
    opened = RedisStore(server.url)
    yield opened
    opened.close()


def test_window_rolls_instead_of_resetting_on_the_hour(store: FleetStore) -> None:
    limits = store.limits("claude")
    assert [limits.reserve(2, 0, f"m{i}", now=t).why for i, t in enumerate((100.0, 200.0))] == ["granted"] * 2
    answer = limits.reserve(2, 0, "m3", now=3650.0)
    assert (answer.why, answer.wait_s) == ("window", pytest.approx(50.0))  # the 100.0 call leaves at 3700
    assert limits.reserve(2, 0, "m4", now=3700.0).granted
    assert limits.calls_in_window(now=3700.0) == 2


def test_a_slow_clock_cannot_reopen_a_full_window(store: FleetStore) -> None:
    limits = store.limits("claude")
    assert limits.reserve(1, 0, "a", now=5000.0).granted
    # another machine's clock is an hour behind: its reading counts as the latest time already seen
    assert limits.reserve(1, 0, "b", now=1000.0).wait_s == pytest.approx(HOUR)


def test_pause_keeps_the_later_end_holds_every_call_and_expires(store: FleetStore) -> None:
    limits = store.limits("claude")
    assert limits.pause_until(2000.0, "usage_limit", now=1000.0) == 2000.0
    assert limits.pause_until(1500.0, "rate_limit", now=1000.0) == 2000.0
    answer = limits.reserve(5, 0, "m", now=1200.0)
    assert (answer.why, answer.wait_s) == ("pause", pytest.approx(800.0))
    assert limits.snapshot(now=1999.0)["pause_reason"] == "usage_limit"
    assert limits.paused_until(now=2000.0) is None and limits.snapshot(now=2000.0)["calls_last_hour"] == 0
    assert limits.pause_until(2500.0, "rate_limit", now=2001.0) == 2500.0  # once over, a shorter one may follow


def test_costs_sum_over_the_last_day_and_a_spent_budget_grants_nothing(store: FleetStore) -> None:
    limits = store.limits("claude")
    limits.record_cost(1.25, "c1", now=0.0)
    limits.record_cost(0.0, "c0", now=10.0)
    limits.record_cost(2.5, "c2", now=DAY_S - 1)
    assert limits.spent_usd(now=DAY_S - 1) == 3.75
    assert limits.spent_usd(window_s=HOUR, now=DAY_S - 1) == 2.5
    assert limits.reserve(10, 3.75, "m1", now=DAY_S - 1).why == "budget"
    assert limits.calls_in_window(now=DAY_S - 1) == 0  # nothing recorded for a refusal
    assert limits.reserve(10, 3.75, "m2", now=DAY_S + 1).granted  # the 1.25 is a day old


def test_restore_puts_back_what_was_lost_once(store: FleetStore) -> None:
    limits = store.limits("claude")
    assert limits.reserve(5, 0, "m1", now=100.0).granted
    limits.restore([(100.0, "m1"), (150.0, "m2")], [(120.0, 0.5, "c1")])
    limits.restore([(100.0, "m1"), (150.0, "m2")], [(120.0, 0.5, "c1")])
    assert limits.calls_in_window(now=200.0) == 2
    assert limits.spent_usd(now=200.0) == 0.5


def test_agents_and_the_registry(store: FleetStore) -> None:
    store.limits("codex").reserve(1, 0, "m", now=10.0)
    store.limits("claude").record_cost(0.1, "c", now=10.0)
    assert store.agents() == ["claude", "codex"]
    now = time.time()
    store.beat({"loop_id": "h1-abc", "status": "running", "heartbeat": now})
    store.beat({"loop_id": "h1-abc", "status": "waiting", "heartbeat": now})
    store.beat({"loop_id": "h2-def", "status": "stopped", "heartbeat": now})
    store.beat({"loop_id": "h3-old", "status": "running", "heartbeat": now - FORGET_AFTER_S - 1})
    assert [(r["loop_id"], r["status"]) for r in store.loops()] == [("h1-abc", "waiting"), ("h2-def", "stopped")]
    assert len(store.loops()) == 2  # the week-old record is gone
    assert store.epoch() == store.epoch()
