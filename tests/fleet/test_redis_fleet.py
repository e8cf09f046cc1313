"""Loops on several machines share one window and one budget through Redis: real processes, each with a state
home of its own (as on separate machines), one real redis-server, one simulated clock."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from limits_worker import run_together
from redis_support import RedisServer

from dun.fleet.redisstore import RedisStore

WORKER = Path(__file__).with_name("limits_worker.py")
HOUR = 3600.0
BASE = 1_000_000.0  # limits_worker.py's simulated clock starts here


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    running = RedisServer(tmp_path_factory.mktemp("redis")).start()
    yield running
    running.kill()


def machine(tmp_path: Path, n: int, server: RedisServer, *args: str) -> subprocess.Popen[str]:
    home = tmp_path / f"machine-{n}"
    env = {**os.environ, "HOME": str(home), "XDG_STATE_HOME": str(home / ".local/state"),
           "XDG_CACHE_HOME": str(home / ".cache")}
    return subprocess.Popen([sys.executable, str(WORKER), server.url, str(tmp_path / "clock"), *args], env=env,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_four_machines_never_exceed_the_window_in_any_hour(tmp_path: Path, server: RedisServer) -> None:
    server.flush()
    limit, attempts = 5, 60
    answers = run_together([machine(tmp_path, n, server, "reserve", str(attempts), str(limit)) for n in range(4)])
    granted = sorted(t for answer in answers for t in answer)
    for t in granted:  # every rolling hour ending at a grant holds at most `limit` grants
        assert sum(1 for u in granted if t - HOUR < u <= t) <= limit
    # 240 attempts one simulated minute apart, 4 hours: 5 grants at the start of each, whatever the interleaving;
    # a lost update (two machines granting from the same count) would show as more
    assert len(granted) == 4 * limit
    assert RedisStore(server.url).limits("claude").calls_in_window(now=granted[-1]) == limit


def test_three_machines_share_one_budget_exactly(tmp_path: Path, server: RedisServer) -> None:
    server.flush()
    budget, cost = 2.0, 0.25
    answers = run_together([machine(tmp_path, n, server, "spend", "50", str(budget), str(cost)) for n in range(3)])
    recorded = sum(sum(a) for a in answers)
    store_spent = RedisStore(server.url).limits("claude").spent_usd(now=BASE + 6 * HOUR)  # the simulated clock
    assert store_spent == recorded  # no cost lost between machines
    # a call is granted only while the fleet's spend is under the budget: at most the calls already granted and
    # not yet priced (one per other machine) go past it
    assert budget <= recorded <= budget + 2 * cost
