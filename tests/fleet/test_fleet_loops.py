"""Three `dun loop --worktree` processes of one repository with the scripted agent: together they stay within one
hourly call window, and a usage limit met by one of them holds the other two.

Runs once the loop uses dun.fleet (LoopOptions.worktree and the shared limits); skipped before that.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from fake_agent import calls, write_scenario
from loop_support import make_repo, until, work

from dun.fleet.limits import SharedLimits
from dun.loop.driver import LoopOptions

pytestmark = pytest.mark.skipif(not hasattr(LoopOptions, "worktree"),
                                reason="dun loop does not use dun.fleet yet (--worktree and the shared limits)")

BOXES = tuple(f"box{i}" for i in range(1, 10))


class Loops:
    def __init__(self, repo: Path, tmp_path: Path) -> None:
        self.repo, self.tmp_path = repo, tmp_path
        self.procs: dict[str, subprocess.Popen[bytes]] = {}

    def start(self, name: str, steps: list[dict[str, object]], *args: str) -> Path:
        """`dun loop --worktree NAME ARGS` playing its own scenario; returns the scenario (for its calls)."""
        sc = write_scenario(self.tmp_path / f"sc-{name}", steps)
        env = {**os.environ, "DUN_FAKE_SCENARIO": str(sc)}
        with (self.tmp_path / f"{name}.stderr").open("wb") as err:
            self.procs[name] = subprocess.Popen([sys.executable, "-m", "dun", "loop", "--worktree", name, *args],
                                                cwd=self.repo, env=env, stdin=subprocess.DEVNULL,
                                                stdout=subprocess.DEVNULL, stderr=err)
        return sc

    def stderr(self, name: str) -> str:
        return (self.tmp_path / f"{name}.stderr").read_text(errors="replace")

    def waiting(self, name: str, reason: str) -> bool:
        return any("waiting" in line and reason in line for line in self.stderr(name).splitlines())

    def stop_all(self) -> dict[str, int]:
        for proc in self.procs.values():
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        return {name: proc.wait(timeout=30) for name, proc in self.procs.items()}


@pytest.fixture
def loops(repo: Path, tmp_path: Path) -> Iterator[Loops]:
    make_repo(repo, boxes=BOXES)
    running = Loops(repo, tmp_path)
    yield running
    for proc in running.procs.values():
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)


def test_three_loops_share_one_hourly_window(loops: Loops) -> None:
    scenarios = [loops.start(name, [work(box) for box in BOXES], "--max-calls-per-hour", "6")
                 for name in ("w1", "w2", "w3")]
    for name in ("w1", "w2", "w3"):
        until(lambda name=name: loops.waiting(name, "call_limit") or loops.procs[name].poll() is not None,
              f"{name} to wait for the shared window")
    total = sum(len(calls(sc)) for sc in scenarios)
    assert total == 6, [len(calls(sc)) for sc in scenarios]
    assert all(loops.procs[name].poll() is None for name in ("w1", "w2", "w3")), "each loop waits, none gives up"
    assert SharedLimits("command").snapshot()["calls_last_hour"] == 6
    assert set(loops.stop_all().values()) == {143}
    assert sum(len(calls(sc)) for sc in scenarios) == 6


def test_a_usage_limit_in_one_loop_pauses_all_three(loops: Loops) -> None:
    reset = int(time.time()) + 7200
    limit = {"kind": "usage_limit", "message": f"Claude AI usage limit reached|{reset}", "api_error_status": None}
    first = loops.start("w1", [{"error": limit, "repeat": True}])
    until(lambda: SharedLimits("command").paused_until() == reset, "w1's pause in the shared store")
    others = [loops.start(name, [work(box) for box in BOXES]) for name in ("w2", "w3")]
    for name in ("w1", "w2", "w3"):
        until(lambda name=name: loops.waiting(name, "usage_limit"), f"{name} to wait for the usage limit")
    assert len(calls(first)) == 1 and [len(calls(sc)) for sc in others] == [0, 0]
    assert set(loops.stop_all().values()) == {143}
    status = json.loads(subprocess.run([sys.executable, "-m", "dun", "fleet", "status", "--json"], cwd=loops.repo,
                                       capture_output=True, text=True, timeout=60, check=True).stdout)
    assert [loop["name"] for loop in status["loops"]] == ["(main)", "w1", "w2", "w3"]
    assert status["shared_limits"][0]["paused_until"] == reset
