"""`dun watch` with a fleet store: the other machines' loops from the registry in a real redis-server, stale
heartbeats marked, an unreachable store said; this machine's own loops are left to the local source."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from redis_support import RedisServer

from dun.fleet.redisstore import RedisStore
from dun.fleet.remote import FleetLoops, snapshot


@pytest.fixture
def server(tmp_path: Path) -> Iterator[RedisServer]:
    running = RedisServer(tmp_path / "redis").start()
    yield running
    running.kill()


def record(**values: object) -> dict[str, object]:
    base = {"loop_id": "h-1", "host": "node-a", "repository": "acme/widgets", "worktree": "/work/repo",
            "status": "running", "iteration": 3, "in_progress": 4, "call_started": time.time() - 90,
            "cost_usd": 1.25, "heartbeat": time.time(), "agent": "claude", "run_id": "r1"}
    return {**base, **values}


def test_records_become_snapshots() -> None:
    now = time.time()
    working = snapshot(record(), now, 300)
    assert (working.label, working.status, working.host, working.phase, working.in_progress) == \
        ("acme/widgets", "running", "node-a", "agent", 4)
    waiting = snapshot(record(status="waiting", in_progress=None, wait_reason="shared_call_limit",
                              resume_at=now + 600, worktree="/srv/widgets/.dun/worktrees/auth"), now, 300)
    assert (waiting.label, waiting.phase, waiting.wait_reason) == ("acme/widgets/auth", "waiting", "shared_call_limit")
    stale = snapshot(record(heartbeat=now - 1200), now, 300)
    assert (stale.status, stale.stop_reason, stale.phase) == ("stale", "no heartbeat for 20 min, last seen running",
                                                              None)
    shell = record(heartbeat=now - 1200, driver="shell", quiet_until=now + 600)  # its agent runs, no dun process
    assert snapshot(shell, now, 300).status == "running"
    assert snapshot({**shell, "quiet_until": now - 301}, now, 300).status == "stale"
    done = snapshot(record(status="stopped", stop_reason="budget", heartbeat=now - 1200), now, 300)
    assert (done.status, done.stop_reason) == ("stopped", "budget")  # a stopped loop beats no more: never stale


def test_dun_watch_shows_the_other_machines_loops(server: RedisServer, tmp_path: Path) -> None:
    store = RedisStore(server.url)
    store.beat(record())
    store.beat(record(loop_id="h-2", host="node-b", status="waiting", in_progress=None,
                      wait_reason="shared_call_limit", resume_at=time.time() + 600))
    store.beat(record(loop_id="h-3", host="node-c", heartbeat=time.time() - 3600))
    store.beat(record(loop_id="h-4", host="this-machine", repository="acme/mine"))
    env = {**os.environ, "COLUMNS": "200", "DUN_HOST": "this-machine"}
    out = subprocess.run([sys.executable, "-m", "dun", "watch", "--once", "--store", server.url], cwd=tmp_path,
                         env=env, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    text = out.stdout
    assert "node-a" in text and re.search(r"agent claude working \d+m", text)  # since 90 s before the watch
    assert "node-b" in text and "waiting (shared_call_limit): resumes in" in text
    assert "node-c" in text and "stale: no heartbeat for 60 min, last seen running" in text
    assert "acme/mine" not in text  # this machine's loops come from its own files, not twice
    server.kill()
    gone = FleetLoops(RedisStore(server.url, timeout_s=1), 300, None)()
    assert [(s.status, s.label) for s in gone] == [("unreachable", f"fleet store {server.url}")]
