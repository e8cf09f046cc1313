"""`dun loop` processes on "separate machines" (a repository, a HOME and a host name each) sharing one fleet store
in a real redis-server: one hourly window for all of them, the registry `dun fleet status` reads, and a Redis killed
in the middle of a run, which loses no iteration and no state and is caught up when it comes back."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import git
from fake_agent import calls, wait_for_calls, write_scenario
from loop_support import make_repo, until, work
from redis_support import RedisServer

from dun.fleet.redisstore import RedisStore

FAST = {"store_retry_s": 0.2, "heartbeat_s": 0.2}


@pytest.fixture
def server(tmp_path: Path) -> Iterator[RedisServer]:
    running = RedisServer(tmp_path / "redis").start()
    yield running
    running.kill()


class Machine:
    """A repository of its own, a HOME of its own and a host name: what another machine would be."""

    def __init__(self, tmp_path: Path, name: str, store_url: str, boxes: tuple[str, ...],
                 fleet: dict[str, Any] | None = None, password: str | None = None) -> None:
        self.name, self.base = name, tmp_path / name
        self.repo = self.base / "repo"
        self.repo.mkdir(parents=True)
        git(self.repo, "init", "-q", "-b", "main")
        make_repo(self.repo, boxes=boxes, fleet={**FAST, **(fleet or {})})
        home = self.base / "home"
        self.env = {**os.environ, "HOME": str(home), "XDG_STATE_HOME": str(home / ".local/state"),
                    "XDG_CACHE_HOME": str(home / ".cache"), "XDG_CONFIG_HOME": str(home / ".config"),
                    "DUN_HOST": name, "DUN_FLEET_STORE": store_url}
        if password:
            self.env["DUN_FLEET_PASSWORD"] = password
        self.proc: subprocess.Popen[bytes] | None = None
        self.scenario = self.base / "scenario.json"

    def start(self, steps: list[dict[str, Any]], *args: str) -> None:
        self.scenario = write_scenario(self.base / "scenario", steps, record_env=["DUN_FLEET_STORE",
                                                                                   "DUN_FLEET_PASSWORD"])
        env = {**self.env, "DUN_FAKE_SCENARIO": str(self.scenario)}
        with (self.base / "stderr").open("wb") as err:
            self.proc = subprocess.Popen([sys.executable, "-m", "dun", "loop", *args], cwd=self.repo, env=env,
                                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err)

    def stderr(self) -> str:
        return (self.base / "stderr").read_text(errors="replace")

    def stop(self) -> int:
        assert self.proc is not None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(timeout=30)


def fleet_status(env: dict[str, str], cwd: Path) -> dict[str, Any]:
    proc = subprocess.run([sys.executable, "-m", "dun", "fleet", "status", "--json"], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)  # type: ignore[no-any-return]


def test_three_machines_share_one_window_and_show_in_one_registry(tmp_path: Path) -> None:
    server = RedisServer(tmp_path / "redis", password="s3cret-fleet-pw").start()  # the password from the environment
    boxes = tuple(f"box{i}" for i in range(1, 7))
    machines = [Machine(tmp_path, f"machine-{n}", server.url, boxes, password=server.password) for n in range(3)]
    try:
        for machine in machines:
            machine.start([work(box) for box in boxes], "--max-calls-per-hour", "4")
        for machine in machines:
            until(lambda m=machine: "(shared_call_limit)" in m.stderr(), f"{machine.name} to wait for the window",
                  timeout=60)
        assert sum(len(calls(m.scenario)) for m in machines) == 4  # one window for the three machines
        store = RedisStore(server.url.replace("//", f"//:{server.password}@"))
        assert store.limits("command").calls_in_window() == 4
        until(lambda: all(r["status"] == "waiting" for r in store.loops()) and len(store.loops()) == 3,
              "every loop to say it waits in the registry")
        status = fleet_status(machines[0].env, machines[0].repo)
        fleet = status["fleet"]
        assert fleet["store"] == server.url.replace("//", "//:***@")  # the password never shown
        assert sorted(loop["host"] for loop in fleet["loops"]) == ["machine-0", "machine-1", "machine-2"]
        assert {loop["wait_reason"] for loop in fleet["loops"]} == {"shared_call_limit"}
        assert not any(loop["stale"] for loop in fleet["loops"])
        assert status["shared_limits"] == [{"agent": "command", "calls_last_hour": 4, "spent_usd_24h": 0.04,
                                           "paused_until": None, "pause_reason": None}]
    finally:
        stopped = {m.stop() for m in machines}
        server.kill()
    assert stopped == {143}
    # the agent never saw the store's address or its password
    seen = [c["env"] for m in machines for c in calls(m.scenario)]
    assert len(seen) == 4 and all(env["DUN_FLEET_STORE"] is None and env["DUN_FLEET_PASSWORD"] is None
                                  for env in seen)
    for m in machines:  # nor is it written in any file of the loop's
        assert not any(server.password in p.read_text(errors="replace") for p in (m.repo / ".dun").rglob("*")
                       if p.is_file() and p.suffix in (".json", ".jsonl", ".md", ".err", ".out"))


def test_killing_redis_mid_run_loses_no_iteration_and_it_is_caught_up(tmp_path: Path, server: RedisServer) -> None:
    boxes = ("b1", "b2", "b3", "b4")
    machine = Machine(tmp_path, "machine-0", server.url, boxes)
    gate = tmp_path / "gate"
    steps = [work("b1"), work("b2"), work("b3"), work("b4", exit=True)]
    steps[1]["actions"] = [{"wait_for": str(gate)}, *steps[1]["actions"]]  # held until Redis is killed
    machine.start(steps)
    wait_for_calls(machine.scenario, 2, timeout=30)  # iteration 2's agent is running
    store = RedisStore(server.url)
    first = until(lambda: [r["heartbeat"] for r in store.loops() if r.get("in_progress") == 2], "iteration 2's record")
    until(lambda: any(r["heartbeat"] > first[0] for r in store.loops()), "a heartbeat while the agent works")
    server.kill()
    gate.touch()
    until(lambda: "(fleet_store)" in machine.stderr(), "the loop to wait for the lost store", timeout=30)
    assert "cannot be reached" in machine.stderr() and "waiting for it (fleet.on_store_lost: wait)" in \
        machine.stderr()
    assert len(calls(machine.scenario)) == 2  # no call is made while the store is lost
    server.start()  # empty: what it held is gone
    assert machine.proc is not None
    assert machine.proc.wait(timeout=60) == 0, machine.stderr()
    assert "is back: caught up with this loop's 2 call(s)" in machine.stderr()
    logs = [json.loads((machine.repo / f".dun/logs/iteration-{n}.json").read_text()) for n in range(1, 5)]
    assert [log["iteration"] for log in logs] == [1, 2, 3, 4] and not any(log.get("interrupted") for log in logs)
    state = json.loads((machine.repo / ".dun/state.json").read_text())
    assert (state["status"], state["iteration"]) == ("complete", 4)
    limits = store.limits("command")
    assert limits.calls_in_window() == 4  # the two made before the kill were put back, once
    assert limits.spent_usd() == 0.04
    (record,) = store.loops()
    assert (record["status"], record["iteration"], record["host"]) == ("complete", 4, "machine-0")
