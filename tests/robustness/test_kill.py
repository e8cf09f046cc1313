"""Signals and crashes: `dun loop` killed -9 at random moments, SIGHUP, and recorded process ids that went stale.

Every test drives the real CLI in a temp git repository with the scripted fake agent, whose calls start processes in
sessions of their own (which leave the agent's process group), and asserts on what survives.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fake_agent import alive, calls, write_scenario
from loop_support import idle, make_repo, until, work
from robust_support import DUN, dead, dun, kill_all, logs, pids_in, session_child, start, state

from dun.core.reaper import process_start_time
from dun.store.records import state_problem

KILLS = 50
SEED = 1515
ENDLESS = {"max_iterations": 1000, "iteration_timeout_s": 30}
NO_BREAKER = {"no_progress_limit": 1000, "half_open_after": 1000, "same_error_limit": 1000}


@pytest.fixture
def leftovers(tmp_path: Path) -> Iterator[list[int]]:
    """Pids to kill at teardown, whatever the test's outcome."""
    pids: list[int] = []
    yield pids
    sc = tmp_path / "sc" / "scenario.json"
    kill_all([*pids, *pids_in(tmp_path / "session.pids"), *(c["pid"] for c in calls(sc))])


def scenario(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, steps: list[dict[str, Any]]) -> Path:
    path = write_scenario(tmp_path / "sc", steps)
    monkeypatch.setenv("DUN_FAKE_SCENARIO", str(path))
    return path


def agent_pids(sc: Path, session_file: Path) -> list[int]:
    """Every process the agents started: the agents themselves and their session children."""
    return [c["pid"] for c in calls(sc)] + pids_in(session_file)


def test_kill_9_at_50_random_moments_loses_nothing_and_leaves_no_agent(repo: Path, tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch,
                                                                      leftovers: list[int]) -> None:
    make_repo(repo, loop=ENDLESS, circuit=NO_BREAKER)
    sessions = tmp_path / "session.pids"
    sc = scenario(tmp_path, monkeypatch, [idle(actions=[session_child(sessions), {"sleep": 0.4}], repeat=True)])
    rnd = random.Random(SEED)
    # how long a start takes to reach its agent on this machine (seconds at load 8): the random moments span it and
    # 1.2 s beyond, so the kills land in every phase, an agent call included, however loaded the machine is
    began = time.monotonic()
    first = start(repo, tmp_path / "loop", "loop")
    leftovers.append(first.pid)
    until(lambda: calls(sc), "the first start's agent call")
    reach = time.monotonic() - began
    first.kill()
    assert first.wait(timeout=10) == -signal.SIGKILL
    orphans_at_kill = 0
    for kill in range(KILLS):
        before = agent_pids(sc, sessions)
        calls_before = len(calls(sc))
        loop = start(repo, tmp_path / "loop", "loop")
        leftovers.append(loop.pid)
        time.sleep(rnd.uniform(0.05, reach + 1.2))  # a random moment, not a synchronisation
        loop.kill()
        assert loop.wait(timeout=10) == -signal.SIGKILL
        orphans_at_kill += any(alive(pid) for pid in agent_pids(sc, sessions))
        s = state(repo)
        assert state_problem(s) is None, (kill, s)
        if len(calls(sc)) > calls_before:  # this start reached an agent call: nothing from before survived it
            survivors = [pid for pid in before if not dead(pid)]
            assert not survivors, f"kill {kill} (seed {SEED}): still running after the next start: {survivors}"
    assert orphans_at_kill > KILLS // 4  # the kills did land while agents ran
    dun(repo, "stop")
    final = dun(repo, "loop")
    assert final.returncode == 1, final.stderr
    assert [pid for pid in agent_pids(sc, sessions) if not dead(pid)] == []
    s = state(repo)
    assert (s["status"], s["stop_reason"], s["in_progress"]) == ("stopped", "stop_requested", None)
    assert logs(repo) == list(range(1, s["iteration"] + 1))  # numbering continuous, no log lost
    for n in logs(repo):
        record = json.loads((repo / ".dun" / "logs" / f"iteration-{n}.json").read_text(encoding="utf-8"))
        assert record.get("ended_at") and record.get("decision"), record  # concluded or closed as interrupted
    assert len(s["calls"]) == s["iteration"]  # every opened iteration counts against the hourly limit
    assert not list((repo / ".dun").glob("archive/*"))  # one run throughout: nothing restarted it


def test_sighup_stops_the_loop_and_its_agents_whole_tree(repo: Path, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch, leftovers: list[int]) -> None:
    make_repo(repo)
    sessions = tmp_path / "session.pids"
    sc = scenario(tmp_path, monkeypatch, [{"actions": [session_child(sessions)], "hang": True, "spawn_child": True,
                                           "child_sleep": 60, "status": None}])
    loop = start(repo, tmp_path / "loop", "loop")
    leftovers.append(loop.pid)
    until(lambda: pids_in(sessions) and calls(sc), "the agent and its session child")
    loop.send_signal(signal.SIGHUP)
    assert loop.wait(timeout=20) == 143
    assert all(dead(pid) for pid in agent_pids(sc, sessions))
    assert dead(calls(sc)[0]["child_pid"])
    s = state(repo)
    assert (s["status"], s["stop_reason"]) == ("stopped", "interrupted")
    assert (repo / ".dun" / "REPORT.md").is_file()


def test_a_loop_started_under_nohup_outlives_the_hangup(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        leftovers: list[int]) -> None:
    """`nohup dun loop &` then logging out: the hangup dun was told to ignore does not stop the night's run."""
    make_repo(repo, boxes=("alpha", "beta"))
    first = work("alpha")
    first["actions"] = [{"sleep": 1.0}, *first["actions"]]
    sc = scenario(tmp_path, monkeypatch, [first, work("beta", exit=True)])
    with (tmp_path / "nohup.out").open("wb") as out:
        loop = subprocess.Popen(["nohup", *DUN, "loop"], cwd=repo, stdin=subprocess.DEVNULL, stdout=out,
                                stderr=subprocess.STDOUT)
    leftovers.append(loop.pid)
    until(lambda: calls(sc), "the first agent call")
    loop.send_signal(signal.SIGHUP)
    assert loop.wait(timeout=120) == 0, (tmp_path / "nohup.out").read_text()
    assert state(repo)["stop_reason"] == "complete"
    assert len(calls(sc)) == 2


def other_session(tmp_path: Path, name: str) -> subprocess.Popen[bytes]:
    """An unrelated process in a session of its own: what a reused id could point at."""
    return subprocess.Popen(["sleep", "120"], start_new_session=True, stdin=subprocess.DEVNULL)


def test_a_stale_process_id_is_never_killed_a_provably_same_one_is(repo: Path, tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    make_repo(repo, boxes=("alpha",))
    scenario(tmp_path, monkeypatch, [idle()])
    stranger, ours, group = (other_session(tmp_path, n) for n in ("stranger", "ours", "group"))
    try:
        started = {p.pid: process_start_time(p.pid) for p in (stranger, ours, group)}
        assert None not in started.values()
        (repo / ".dun" / "STOP").write_text("after-iteration\n")  # resume, clean up, stop: no agent call
        (repo / ".dun" / "state.json").write_text(json.dumps({
            "schema_version": 1, "run_id": "stalepids001", "status": "running", "iteration": 1, "in_progress": 1,
            "agent_pgid": group.pid, "agent_started": started[group.pid] + 1,  # the id was reused since
            "agent_tree": [[stranger.pid, started[stranger.pid] - 1], [ours.pid, started[ours.pid]]],
            "agent_token": "0123456789abcdef01234567", "call_started": time.time()}))
        done = dun(repo, "loop")
        assert done.returncode == 1, done.stderr
        assert dead(ours.pid), "the recorded process with its start time is the agent's: killed"
        assert alive(stranger.pid) and alive(group.pid), "a reused id belongs to someone else: never killed"
        assert state(repo)["stop_reason"] == "stop_requested"
    finally:
        for proc in (stranger, ours, group):
            with contextlib.suppress(OSError):
                os.kill(proc.pid, signal.SIGKILL)
            proc.wait()
