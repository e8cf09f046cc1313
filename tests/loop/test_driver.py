"""`dun loop` end to end: real git repositories, the scripted fake agent, `dun loop` as a subprocess.

Every test drives the real CLI and asserts on what a user sees: the exit code, `.dun/state.json`, the iteration logs,
`.dun/REPORT.md`, git, and the processes left (or not) behind.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from conftest import git, write
from fake_agent import FAKE_COMMAND, alive, block, calls, child_pid, sidecar, write_scenario
from loop_support import gone, idle, make_repo, until, work

ROOT = Path(__file__).resolve().parents[2]
DUN = [sys.executable, "-m", "dun"]


# --------------------------------------------------------------------------------------------------------------------
# helpers


def scenario(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, steps: list[dict[str, Any]]) -> Path:
    path = write_scenario(tmp_path / "sc", steps)  # outside the repo: not a change git would see
    monkeypatch.setenv("DUN_FAKE_SCENARIO", str(path))
    return path


def dun(repo: Path, *args: str, timeout: float = 30.0) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*DUN, *args], cwd=repo, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=timeout)


def state(repo: Path) -> dict[str, Any]:
    return json.loads((repo / ".dun" / "state.json").read_text(encoding="utf-8"))


def read_state(repo: Path) -> dict[str, Any] | None:
    try:
        return state(repo)
    except (FileNotFoundError, ValueError):
        return None


def log(repo: Path, n: int) -> dict[str, Any]:
    return json.loads((repo / ".dun" / "logs" / f"iteration-{n}.json").read_text(encoding="utf-8"))


def logs(repo: Path) -> list[int]:
    return sorted(int(p.stem.split("-")[1]) for p in (repo / ".dun" / "logs").glob("iteration-*.json"))


def report(repo: Path) -> str:
    return (repo / ".dun" / "REPORT.md").read_text(encoding="utf-8")


def report_row(repo: Path, n: int) -> str:
    """The row of iteration `n` in REPORT.md's table."""
    return next(line for line in report(repo).splitlines() if line.startswith(f"| {n} |"))


def prompt(repo: Path, n: int) -> str:
    return (repo / ".dun" / "logs" / f"iteration-{n}.prompt.md").read_text(encoding="utf-8")


class Background:
    """A `dun loop` running in the background, its output in files."""

    def __init__(self, repo: Path, tmp_path: Path, *args: str) -> None:
        self.repo = repo
        out = tmp_path / f"loop-{time.monotonic_ns()}"
        self.stdout_path, self.stderr_path = out.with_suffix(".stdout"), out.with_suffix(".stderr")
        with self.stdout_path.open("wb") as so, self.stderr_path.open("wb") as se:
            self.proc = subprocess.Popen([*DUN, "loop", *args], cwd=repo, stdin=subprocess.DEVNULL, stdout=so,
                                         stderr=se)

    @property
    def pid(self) -> int:
        return self.proc.pid

    def stderr(self) -> str:
        return self.stderr_path.read_text(encoding="utf-8", errors="replace")

    def wait(self, timeout: float = 15.0) -> int:
        return self.proc.wait(timeout=timeout)

    def signal(self, sig: int) -> None:
        self.proc.send_signal(sig)


@pytest.fixture
def background(tmp_path: Path) -> Iterator[Callable[..., Background]]:
    """Start background loops; at the end kill whatever they (and the fake agents they ran) left running."""
    started: list[Background] = []

    def start(repo: Path, *args: str) -> Background:
        loop = Background(repo, tmp_path, *args)
        started.append(loop)
        return loop

    yield start
    for loop in started:
        if loop.proc.poll() is None:
            loop.proc.kill()
        loop.proc.wait(timeout=10)
    sc = tmp_path / "sc" / "scenario.json"
    for call in calls(sc):  # only groups whose members still run: a dead group's id may have been reused
        if alive(call["pid"]) or (call.get("child_pid") and alive(call["child_pid"])):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(call["pgid"], signal.SIGKILL)
    pid = child_pid(sc)
    if pid is not None and alive(pid):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def hanging(**extra: Any) -> dict[str, Any]:
    """A step that hangs (an hour) after starting a grandchild that ignores SIGTERM."""
    return {"hang": True, "spawn_child": True, "child_sleep": 60, "status": block(), **extra}


def wait_for_agent(sc: Path, count: int = 1) -> dict[str, Any]:
    """The `count`-th call once it is recorded (and its child, when it spawns one, is up)."""
    recorded = until(lambda: len(calls(sc)) >= count and calls(sc), f"agent call {count}")
    return recorded[count - 1]


# --------------------------------------------------------------------------------------------------------------------
# stop reasons


def test_complete_honest_mission_three_iterations(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    make_repo(repo)
    sc = scenario(tmp_path, monkeypatch, [work("alpha", 0.1), work("beta", 0.25), work("gamma", 0.05, exit=True)])
    done = dun(repo, "loop")
    assert done.returncode == 0, done.stderr
    s = state(repo)
    assert (s["status"], s["stop_reason"], s["iteration"]) == ("complete", "complete", 3)
    assert s["cost_usd_total"] == pytest.approx(0.4)
    assert s["in_progress"] is None and s["agent_pgid"] is None
    assert s["ended_at"] and s["errors_total"] == 0
    assert len(calls(sc)) == 3
    assert git(repo, "log", "--format=%s", "-3").split("\n")[:3] == ["Do gamma", "Do beta", "Do alpha"]
    assert "- [ ]" not in (repo / "MISSION.md").read_text()
    assert logs(repo) == [1, 2, 3]
    assert [log(repo, n)["decision"]["action"] for n in (1, 2, 3)] == ["continue", "continue", "stop"]
    assert log(repo, 3)["decision"]["reason"] == "complete"
    assert [log(repo, n)["cost_usd"] for n in (1, 2, 3)] == [0.1, 0.25, 0.05]
    assert log(repo, 3)["progress"]["newly_passing"] == ["mission-boxes"]
    # the command adapter feeds the prompt on stdin: what the agent got is what was logged
    assert calls(sc)[0]["prompt"] == prompt(repo, 1)
    assert "alpha" in prompt(repo, 1)
    text = report(repo)
    assert "stop reason: **complete**" in text
    assert "$0.4000" in text
    assert "iterations: 3" in text
    assert "stopped: complete after 3 iteration(s)" in done.stderr


def test_max_iterations(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    make_repo(repo, loop={"max_iterations": 10})
    sc = scenario(tmp_path, monkeypatch, [work("alpha"), work("beta"), work("gamma", exit=True)])
    done = dun(repo, "loop", "--max-iterations", "2")  # the flag overrides the config
    assert done.returncode == 1, done.stderr
    s = state(repo)
    assert (s["status"], s["stop_reason"], s["iteration"]) == ("stopped", "max_iterations", 2)
    assert len(calls(sc)) == 2
    assert "stop reason: **max_iterations**" in report(repo)
    assert "- [ ] gamma" in (repo / "MISSION.md").read_text()


def test_max_duration(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    make_repo(repo, loop={"max_duration_h": 0.001})  # 3.6 s
    sc = scenario(tmp_path, monkeypatch, [work("alpha", hang=3.7), work("beta"), work("gamma", exit=True)])
    done = dun(repo, "loop")
    assert done.returncode == 1, done.stderr
    s = state(repo)
    assert (s["stop_reason"], s["iteration"]) == ("max_duration", 1)
    assert len(calls(sc)) == 1


def test_max_duration_is_kept_while_waiting_for_a_limit(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                       background: Callable[..., Background]) -> None:
    make_repo(repo, loop={"max_duration_h": 1.0})
    now = time.time()
    write(repo, ".dun/state.json", json.dumps({  # a run 2 s short of its hour, waiting 10 min for a usage limit
        "schema_version": 1, "run_id": "waitingrun01", "status": "stopped", "stop_reason": "interrupted",
        "iteration": 1, "started_epoch": now - 3598, "resume_at": now + 600, "calls": [now - 60]}))
    sc = scenario(tmp_path, monkeypatch, [work("alpha")])
    loop = background(repo)
    code = loop.wait(timeout=60)  # observed: subprocess.TimeoutExpired, the loop sleeps on towards resume_at (600 s)
    assert code == 1
    assert state(repo)["stop_reason"] == "max_duration"
    assert not sidecar(sc, ".calls.jsonl").exists()


def test_budget_stops_before_the_cap_would_be_crossed(repo: Path, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    make_repo(repo, boxes=("a1", "a2", "a3", "a4", "a5"), loop={"max_budget_usd": 1.0, "budget_per_iteration_usd": 0.3})
    sc = scenario(tmp_path, monkeypatch, [work(f"a{i}", 0.3) for i in range(1, 6)])
    done = dun(repo, "loop")
    assert done.returncode == 1, done.stderr
    s = state(repo)
    assert (s["stop_reason"], s["iteration"]) == ("budget", 3)  # 0.9 spent: one more could reach 1.2
    assert s["cost_usd_total"] == pytest.approx(0.9)
    assert s["budget_left_usd"] == pytest.approx(0.1)
    assert len(calls(sc)) == 3
    assert all("--max-budget-usd" not in c["argv"] for c in calls(sc))  # the command adapter has no such flag
    text = report(repo)
    assert "stop reason: **budget**" in text
    assert "cost: $0.9000 of $1 budget" in text


def test_budget_that_the_next_iteration_exactly_reaches_still_runs_it(repo: Path, tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    make_repo(repo, boxes=("a1", "a2", "a3", "a4"), loop={"max_budget_usd": 0.3, "budget_per_iteration_usd": 0.1})
    scenario(tmp_path, monkeypatch, [work(f"a{i}", 0.1) for i in range(1, 5)])
    done = dun(repo, "loop")
    assert done.returncode == 1, done.stderr
    assert (state(repo)["stop_reason"], state(repo)["iteration"]) == ("budget", 3)


def test_circuit_opens_after_iterations_without_progress(repo: Path, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    make_repo(repo, circuit={"half_open_after": 2, "no_progress_limit": 3})
    sc = scenario(tmp_path, monkeypatch, [{"status": None, "text": "I looked at it.", "repeat": True}])
    done = dun(repo, "loop")
    assert done.returncode == 1, done.stderr
    s = state(repo)
    assert (s["stop_reason"], s["iteration"]) == ("circuit_open", 3)
    assert (s["circuit"]["state"], s["circuit"]["reason"]) == ("OPEN", "no_progress")
    assert s["circuit"]["opened_at"] is not None
    assert [log(repo, n)["circuit"]["state"] for n in (1, 2, 3)] == ["CLOSED", "HALF_OPEN", "OPEN"]
    assert [log(repo, n)["parse_outcome"] for n in (1, 2, 3)] == ["no_status_block"] * 3
    assert "circuit: OPEN (no_progress)" in report(repo)
    # a restart does not call the agent again while the circuit is open
    again = dun(repo, "loop")
    assert again.returncode == 1
    assert state(repo)["stop_reason"] == "circuit_open"
    assert len(calls(sc)) == 3


def test_stop_requested_before_the_loop(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    make_repo(repo, boxes=("alpha",))
    sc = scenario(tmp_path, monkeypatch, [work("alpha", exit=True)])
    stop = dun(repo, "stop")
    assert stop.returncode == 0
    assert "no loop is running" in stop.stdout
    assert (repo / ".dun" / "STOP").exists()
    done = dun(repo, "loop")
    assert done.returncode == 1, done.stderr
    assert state(repo)["stop_reason"] == "stop_requested"
    assert not sidecar(sc, ".calls.jsonl").exists()
    assert not (repo / ".dun" / "STOP").exists()  # consumed
    assert git(repo, "status", "--porcelain") == ""
    # consumed means the next loop runs
    assert dun(repo, "loop").returncode == 0
    assert len(calls(sc)) == 1


def test_error_threshold_with_a_crashing_agent(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    make_repo(repo, loop={"error_threshold": 3},
              circuit={"half_open_after": 20, "no_progress_limit": 20, "same_error_limit": 20})
    sc = scenario(tmp_path, monkeypatch, [{"error": {"kind": "crash", "exit": 1, "stderr": "fake_agent: crashed\n"},
                                           "repeat": True}])
    done = dun(repo, "loop")
    assert done.returncode == 1, done.stderr
    s = state(repo)
    assert (s["stop_reason"], s["errors_total"], s["iteration"]) == ("error_threshold", 3, 3)
    assert s["circuit"]["state"] != "OPEN"
    assert len(calls(sc)) == 3
    first = log(repo, 1)
    assert (first["exit_code"], first["error_kind"]) == (1, "other")
    assert "crashed" in first["error"]
    assert "failed calls: 3" in report(repo)


def test_agent_blocked_twice_on_the_same_task(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    make_repo(repo)
    blocked = {"status": block(task="deploy", status="BLOCKED", files=0, next="needs credentials"), "repeat": True}
    sc = scenario(tmp_path, monkeypatch, [blocked])
    done = dun(repo, "loop")
    assert done.returncode == 1, done.stderr
    s = state(repo)
    assert (s["stop_reason"], s["iteration"]) == ("agent_blocked", 2)
    assert s["blocked"] == {"task": "deploy", "count": 2}
    assert len(calls(sc)) == 2
    assert "stop reason: **agent_blocked**" in report(repo)


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_a_signal_interrupts_the_loop_and_kills_the_agent_group(repo: Path, tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch,
                                                                background: Callable[..., Background],
                                                                sig: int, code: int) -> None:
    make_repo(repo)
    sc = scenario(tmp_path, monkeypatch, [hanging()])
    loop = background(repo)
    agent = wait_for_agent(sc)
    child = child_pid(sc)
    assert child is not None and alive(child) and alive(agent["pid"])
    until(lambda: (read_state(repo) or {}).get("agent_pgid") == agent["pgid"], "the agent's group in state.json")
    loop.signal(sig)
    assert loop.wait() == code
    assert gone(agent["pid"]) and gone(child)
    s = state(repo)
    assert (s["status"], s["stop_reason"]) == ("stopped", "interrupted")
    assert s["in_progress"] is None and s["agent_pgid"] is None
    assert log(repo, 1)["ended_at"]
    assert "stop reason: **interrupted**" in report(repo)


def interrupt_a_hanging_iteration(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                  background: Callable[..., Background]) -> None:
    make_repo(repo)
    sc = scenario(tmp_path, monkeypatch, [{"hang": True, "status": block()}])
    loop = background(repo)
    wait_for_agent(sc)
    until(lambda: (read_state(repo) or {}).get("agent_pgid"), "the agent's group in state.json")
    loop.signal(signal.SIGINT)  # the user pressed Ctrl-C: the call did not fail, it was stopped
    assert loop.wait() == 130


def test_the_interrupted_iterations_log_and_report_say_interrupted(repo: Path, tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch,
                                                                  background: Callable[..., Background]) -> None:
    interrupt_a_hanging_iteration(repo, tmp_path, monkeypatch, background)
    assert log(repo, 1)["decision"]["action"] == "stop"
    assert log(repo, 1)["decision"]["reason"] == "interrupted"
    assert "interrupted" in dun(repo, "logs").stdout.splitlines()[0]
    assert "interrupted" in report_row(repo, 1)


def test_an_interrupted_iteration_is_not_a_failed_call(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                       background: Callable[..., Background]) -> None:
    interrupt_a_hanging_iteration(repo, tmp_path, monkeypatch, background)
    s = state(repo)
    assert s["errors_total"] == 0
    assert s["circuit"]["no_progress"] == 0
    assert log(repo, 1)["error_kind"] is None


# --------------------------------------------------------------------------------------------------------------------
# the dual gate


@pytest.mark.parametrize("agrees", [False, True])
def test_checks_pass_but_the_agent_disagrees_runs_confirmations(repo: Path, tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch, agrees: bool) -> None:
    make_repo(repo, boxes=("alpha",), loop={"confirm_iterations": 2})
    confirm = {"status": block(task="reviewed", status="COMPLETE", files=0, exit=agrees), "repeat": True}
    sc = scenario(tmp_path, monkeypatch, [work("alpha", exit=False), confirm])
    done = dun(repo, "loop")
    assert done.returncode == 0, done.stderr
    s = state(repo)
    expected = 2 if agrees else 3  # one confirmation that agrees, or loop.confirm_iterations of them
    assert (s["stop_reason"], s["iteration"]) == ("complete", expected)
    assert len(calls(sc)) == expected
    assert log(repo, 1)["decision"] == {"action": "continue", "reason": "confirm", "wait_s": 0.0}
    for n in range(2, expected + 1):
        assert log(repo, n)["confirmation"] is True
        assert "Every check passes" in prompt(repo, n)
        assert calls(sc)[n - 1]["prompt"] == prompt(repo, n)
    assert log(repo, 1)["confirmation"] is False
    assert "Every check passes" not in prompt(repo, 1)


def test_a_premature_exit_claim_goes_on_and_the_next_prompt_says_what_fails(repo: Path, tmp_path: Path,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    make_repo(repo, boxes=("alpha", "beta"))
    scenario(tmp_path, monkeypatch, [work("alpha", exit=True), work("beta", exit=True)])
    done = dun(repo, "loop")
    assert done.returncode == 0, done.stderr
    first = log(repo, 1)
    assert "premature_exit_claim" in first["flags"]
    assert first["decision"]["action"] == "continue"
    assert first["checks_after"]["ids"] == ["mission-boxes"]
    text = prompt(repo, 2)
    assert "EXIT_SIGNAL: true" in text and "still fail" in text and "mission-boxes" in text
    assert "beta" in text
    assert "premature_exit_claim" in report(repo)
    assert (state(repo)["stop_reason"], state(repo)["iteration"]) == ("complete", 2)
    assert log(repo, 2)["flags"] == []


def test_nothing_actionable_before_the_first_iteration_completes_without_an_agent(
        repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    make_repo(repo, ticked=("alpha", "beta", "gamma"))
    sc = scenario(tmp_path, monkeypatch, [work("alpha")])
    done = dun(repo, "loop")
    assert done.returncode == 0, done.stderr
    assert not sidecar(sc, ".calls.jsonl").exists()
    s = state(repo)
    assert (s["status"], s["stop_reason"], s["iteration"]) == ("complete", "complete", 0)
    assert not list((repo / ".dun").glob("logs/iteration-*"))
    assert "stop reason: **complete**" in report(repo)


def test_a_confirmation_that_breaks_a_check_does_not_complete(repo: Path, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    make_repo(repo, boxes=("alpha",), loop={"confirm_iterations": 1})
    reopen = {"actions": [{"append": "MISSION.md", "content": "- [ ] delta\n"}, {"commit": "Add delta"}],
              "status": block(task="found more", status="IN_PROGRESS", exit=False)}
    scenario(tmp_path, monkeypatch, [work("alpha", exit=False), reopen, work("delta", exit=True)])
    done = dun(repo, "loop")
    assert log(repo, 2)["checks_after"]["ids"] == ["mission-boxes"]
    assert log(repo, 2)["decision"]["reason"] != "complete"  # observed: complete with an open box
    assert done.returncode == 0
    assert (state(repo)["stop_reason"], state(repo)["iteration"]) == ("complete", 3)
    assert "- [ ]" not in (repo / "MISSION.md").read_text()


def test_a_resumed_run_still_needs_the_agents_agreement(repo: Path, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    make_repo(repo, boxes=("alpha",))
    agree = {"status": block(task="reviewed", status="COMPLETE", files=0, exit=True)}
    sc = scenario(tmp_path, monkeypatch, [work("alpha", exit=False), agree])
    assert dun(repo, "loop", "--max-iterations", "1").returncode == 1  # checks pass, the agent says not done
    assert (state(repo)["stop_reason"], state(repo)["last_exit_signal"]) == ("max_iterations", False)
    done = dun(repo, "loop", "--max-iterations", "5")  # the same run goes on
    assert done.returncode == 0, done.stderr
    assert len(calls(sc)) == 2  # not complete on the restart's first look: the agent said it was not done
    assert log(repo, 2)["confirmation"] is True


# --------------------------------------------------------------------------------------------------------------------
# the circuit breaker in the loop


def test_progress_closes_a_half_open_circuit(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    make_repo(repo, loop={"max_iterations": 3})
    scenario(tmp_path, monkeypatch, [idle(), idle(), work("alpha")])
    done = dun(repo, "loop")
    assert done.returncode == 1, done.stderr
    assert [log(repo, n)["circuit"]["state"] for n in (1, 2, 3)] == ["CLOSED", "HALF_OPEN", "CLOSED"]
    assert log(repo, 3)["circuit"]["no_progress"] == 0
    assert state(repo)["stop_reason"] == "max_iterations"


def test_the_same_error_with_different_numbers_opens_the_circuit(repo: Path, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    make_repo(repo, loop={"error_threshold": 20},
              circuit={"same_error_limit": 3, "no_progress_limit": 20, "half_open_after": 20})
    steps = [{"error": {"kind": "crash", "exit": 2,
                        "stderr": f"Error: connection reset by peer after {ms} ms (attempt {n} of 5)\n"}}
             for n, ms in ((1, 1203), (2, 87), (3, 30512))]
    sc = scenario(tmp_path, monkeypatch, steps)
    done = dun(repo, "loop")
    assert done.returncode == 1, done.stderr
    s = state(repo)
    assert (s["stop_reason"], s["iteration"]) == ("circuit_open", 3)
    assert (s["circuit"]["state"], s["circuit"]["reason"], s["circuit"]["same_error"]) == ("OPEN", "same_error", 3)
    assert [log(repo, n)["circuit"]["same_error"] for n in (1, 2, 3)] == [1, 2, 3]
    assert "1203" not in s["circuit"]["last_error"]
    assert len(calls(sc)) == 3


def test_permission_denials_twice_open_the_circuit(repo: Path, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    make_repo(repo, boxes=("a1", "a2", "a3", "a4"))
    denied = {"kind": "permission_denied", "tools": ["Bash"]}
    sc = scenario(tmp_path, monkeypatch, [work(f"a{i}", error=denied) for i in range(1, 5)])
    done = dun(repo, "loop")
    assert done.returncode == 1, done.stderr
    s = state(repo)
    assert (s["stop_reason"], s["iteration"]) == ("circuit_open", 2)
    assert (s["circuit"]["state"], s["circuit"]["reason"]) == ("OPEN", "permission_denied")
    assert [log(repo, n)["permission_denials"] for n in (1, 2)] == [1, 1]
    assert len(calls(sc)) == 2


def open_circuit_state(repo: Path, opened_ago_s: float) -> None:
    """A previous run stopped by an OPEN circuit, `opened_ago_s` seconds ago."""
    now = time.time()
    write(repo, ".dun/state.json", json.dumps({
        "schema_version": 1, "run_id": "previousrun1", "status": "stopped", "stop_reason": "circuit_open",
        "iteration": 3, "started_epoch": now - opened_ago_s - 60, "cost_usd_total": 0.03, "calls": [],
        "circuit": {"state": "OPEN", "no_progress": 3, "same_error": 0, "last_error": None, "permission_denials": 0,
                    "opened_at": now - opened_ago_s, "reason": "no_progress"}}))


def test_reset_circuit_closes_it(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    make_repo(repo, boxes=("alpha",))
    open_circuit_state(repo, 5)
    sc = scenario(tmp_path, monkeypatch, [work("alpha", exit=True)])
    done = dun(repo, "loop")
    assert done.returncode == 1
    assert state(repo)["stop_reason"] == "circuit_open"
    assert not sidecar(sc, ".calls.jsonl").exists()
    done = dun(repo, "loop", "--reset-circuit")
    assert done.returncode == 0, done.stderr
    s = state(repo)
    assert (s["stop_reason"], s["circuit"]["state"], s["circuit"]["reason"]) == ("complete", "CLOSED", None)
    assert len(calls(sc)) == 1


def test_an_open_circuit_is_half_open_on_a_start_after_the_cooldown(repo: Path, tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    make_repo(repo, boxes=("alpha",), circuit={"cooldown_min": 1})
    seen = tmp_path / "seen-state.json"
    step = work("alpha", exit=True)
    step["actions"].insert(0, {"run": f"cp .dun/state.json '{seen}'", "check": True})  # state.json during the call
    sc = scenario(tmp_path, monkeypatch, [step])
    open_circuit_state(repo, 30)  # within the cooldown: still OPEN, no call
    done = dun(repo, "loop")
    assert done.returncode == 1
    assert (state(repo)["stop_reason"], state(repo)["circuit"]["state"]) == ("circuit_open", "OPEN")
    assert not sidecar(sc, ".calls.jsonl").exists()
    open_circuit_state(repo, 90)  # past the 1-minute cooldown
    done = dun(repo, "loop")
    assert done.returncode == 0, done.stderr
    during = json.loads(seen.read_text())
    assert during["circuit"]["state"] == "HALF_OPEN"
    assert during["circuit"]["no_progress"] == 0
    s = state(repo)
    assert (s["stop_reason"], s["circuit"]["state"]) == ("complete", "CLOSED")  # progress closed it


# --------------------------------------------------------------------------------------------------------------------
# rate and usage limits, the hourly window


def next_9pm_london(after: float) -> float:
    zone = ZoneInfo("Europe/London")
    local = datetime.fromtimestamp(after, zone)
    when = local.replace(hour=21, minute=0, second=0, microsecond=0)
    if when.timestamp() < after:
        when = (local + timedelta(days=1)).replace(hour=21, minute=0, second=0, microsecond=0)
    return when.timestamp()


def test_a_usage_limit_with_a_wall_clock_reset_waits_for_it(repo: Path, tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch,
                                                            background: Callable[..., Background]) -> None:
    make_repo(repo)
    sc = scenario(tmp_path, monkeypatch, [{"error": {"kind": "usage_limit"}, "repeat": True}])
    loop = background(repo)
    s = until(lambda: (read_state(repo) or {}).get("resume_at") and read_state(repo), "resume_at in state.json")
    call = calls(sc)[0]
    assert s["resume_at"] == pytest.approx(next_9pm_london(call["time"]), abs=2)
    assert s["status"] == "running"
    assert s["errors_total"] == 0 and s["circuit"]["no_progress"] == 0 and s["circuit"]["state"] == "CLOSED"
    first = log(repo, 1)
    assert first["error_kind"] == "usage_limit"
    assert first["reset_at"] == s["resume_at"]
    assert first["decision"]["action"] == "wait" and first["decision"]["reason"] == "usage_limit"
    until(lambda: "waiting" in loop.stderr(), "the waiting line")
    status = dun(repo, "status")
    assert "waiting for a usage limit until " + time.strftime("%H:%M", time.localtime(s["resume_at"])) in status.stdout
    loop.signal(signal.SIGTERM)
    assert loop.wait() == 143
    assert state(repo)["resume_at"] == s["resume_at"]
    assert len(calls(sc)) == 1


def test_a_usage_limit_wait_survives_a_restart(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                               background: Callable[..., Background]) -> None:
    make_repo(repo, boxes=("alpha",))
    reset = int(time.time()) + 8  # room for two loop starts (each runs the checks and fingerprints) on a busy machine
    limit = {"kind": "usage_limit", "message": f"Claude AI usage limit reached|{reset}", "api_error_status": None}
    sc = scenario(tmp_path, monkeypatch, [{"error": limit}, work("alpha", exit=True)])
    loop = background(repo)
    until(lambda: (read_state(repo) or {}).get("resume_at"), "resume_at in state.json")
    until(lambda: "waiting" in loop.stderr(), "the waiting line")
    loop.signal(signal.SIGTERM)
    assert loop.wait() == 143
    s = state(repo)
    assert s["resume_at"] == reset
    assert s["stop_reason"] == "interrupted"
    assert s["resume_at"] > time.time(), "the test was too slow to restart during the wait"
    done = dun(repo, "loop")  # a fresh process: waits the rest, then goes on
    assert done.returncode == 0, done.stderr
    assert "waiting" in done.stderr and "usage_limit" in done.stderr
    recorded = calls(sc)
    assert len(recorded) == 2
    assert recorded[1]["time"] >= reset
    s = state(repo)
    assert (s["stop_reason"], s["iteration"], s["errors_total"]) == ("complete", 2, 0)
    assert log(repo, 1)["circuit"]["no_progress"] == 0
    assert log(repo, 1)["reset_at"] == reset


def test_a_rate_limit_without_a_reset_time_waits_usage_limit_wait_min(repo: Path, tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    make_repo(repo, boxes=("alpha",), loop={"usage_limit_wait_min": 0.01})
    sc = scenario(tmp_path, monkeypatch, [{"error": {"kind": "rate_limit"}}, work("alpha", exit=True)])
    done = dun(repo, "loop")
    assert done.returncode == 0, done.stderr
    first = log(repo, 1)
    assert first["error_kind"] == "rate_limit"
    assert first["decision"] == {"action": "wait", "reason": "rate_limit", "wait_s": 0.6}
    assert first["circuit"]["no_progress"] == 0
    recorded = calls(sc)
    assert recorded[1]["time"] - recorded[0]["time"] >= 0.6
    s = state(repo)
    assert (s["stop_reason"], s["iteration"], s["errors_total"]) == ("complete", 2, 0)


def test_the_hourly_call_window_carries_over_and_makes_the_loop_wait(repo: Path, tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch,
                                                                    background: Callable[..., Background]) -> None:
    make_repo(repo)
    now = time.time()
    write(repo, ".dun/state.json", json.dumps({
        "schema_version": 1, "run_id": "previousrun2", "status": "complete", "stop_reason": "complete",
        "iteration": 2, "calls": [now - 20, now - 10], "resume_at": None,
        "circuit": {"state": "CLOSED", "no_progress": 0, "same_error": 0, "last_error": None,
                    "permission_denials": 0, "opened_at": None, "reason": None}}))
    sc = scenario(tmp_path, monkeypatch, [work("alpha")])
    loop = background(repo, "--max-calls-per-hour", "2")
    line = until(lambda: next((x for x in loop.stderr().splitlines() if "waiting" in x), None), "the waiting line")
    assert "hourly_call_limit" in line
    minutes = float(line.split("waiting ")[1].split(" min")[0])
    assert 59.0 <= minutes <= 60.0
    s = state(repo)
    assert s["status"] == "running" and s["run_id"] != "previousrun2"
    assert s["calls_left_hour"] == 0 and len(s["calls"]) == 2
    loop.signal(signal.SIGTERM)
    assert loop.wait() == 143
    assert not sidecar(sc, ".calls.jsonl").exists()
    s = state(repo)
    assert (s["stop_reason"], s["iteration"]) == ("interrupted", 0)


def test_the_hourly_wait_ends_when_the_oldest_call_leaves_the_window(repo: Path, tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    make_repo(repo, boxes=("alpha",), loop={"max_calls_per_hour": 2})
    now = time.time()
    oldest = now - 3600 + 6  # dun must still see it in the window when it starts: seconds on a loaded machine
    write(repo, ".dun/state.json", json.dumps({
        "schema_version": 1, "run_id": "previousrun3", "status": "complete", "stop_reason": "complete",
        "iteration": 2, "calls": [oldest, now - 10], "resume_at": None}))
    sc = scenario(tmp_path, monkeypatch, [work("alpha", exit=True)])
    done = dun(repo, "loop")
    assert done.returncode == 0, done.stderr
    assert "hourly_call_limit" in done.stderr
    assert calls(sc)[0]["time"] >= oldest + 3600
    s = state(repo)
    assert s["stop_reason"] == "complete"
    assert len(s["calls"]) == 2  # the oldest left, the new one came
    assert s["calls_left_hour"] == 0


# --------------------------------------------------------------------------------------------------------------------
# crashes, resume, the lock, timeouts


def kill9_mid_iteration(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                        background: Callable[..., Background]) -> tuple[Path, dict[str, Any], dict[str, Any],
                                                                       subprocess.CompletedProcess[str]]:
    """Iteration 1 works, iteration 2 hangs and the loop is killed -9, then a new `dun loop` finishes the mission."""
    make_repo(repo)
    sc = scenario(tmp_path, monkeypatch, [work("alpha", 0.1), hanging(cost_usd=5.0), work("beta", 0.2),
                                          work("gamma", 0.3, exit=True)])
    loop = background(repo)
    agent = wait_for_agent(sc, 2)
    before = until(lambda: (s := read_state(repo)) and s.get("agent_pgid") == agent["pgid"] and s,
                   "the hanging agent in state.json")
    assert before["in_progress"] == 2
    os.kill(loop.pid, signal.SIGKILL)
    assert loop.wait() == -signal.SIGKILL
    assert alive(agent["pid"])  # kill -9 of the loop leaves its agent running: the next loop must clean up
    done = dun(repo, "loop")
    return sc, agent, before, done


def test_kill_9_mid_iteration_then_resume(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                          background: Callable[..., Background]) -> None:
    sc, agent, before, done = kill9_mid_iteration(repo, tmp_path, monkeypatch, background)
    assert done.returncode == 0, done.stderr
    assert gone(agent["pid"]) and gone(agent["child_pid"])
    assert "interrupted" in done.stderr
    interrupted = log(repo, 2)
    assert interrupted["interrupted"] is True
    assert interrupted["decision"]["reason"] == "interrupted"
    assert interrupted["ended_at"]
    assert logs(repo) == [1, 2, 3, 4]
    s = state(repo)
    assert s["run_id"] == before["run_id"]
    assert (s["stop_reason"], s["iteration"]) == ("complete", 4)
    assert s["cost_usd_total"] == pytest.approx(0.6)  # 0.1 before the crash, 0.2 + 0.3 after
    assert s["in_progress"] is None and s["agent_pgid"] is None
    assert len(calls(sc)) == 4
    assert "interrupted" in report_row(repo, 2)


def test_the_killed_iteration_still_counts_in_the_hourly_window(repo: Path, tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch,
                                                                background: Callable[..., Background]) -> None:
    sc, _, _, done = kill9_mid_iteration(repo, tmp_path, monkeypatch, background)
    assert done.returncode == 0, done.stderr
    assert len(calls(sc)) == 4
    assert len(state(repo)["calls"]) == 4


def test_one_loop_per_repository_and_a_killed_loops_lock_is_taken_over(repo: Path, tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch,
                                                                       background: Callable[..., Background]) -> None:
    make_repo(repo, boxes=("alpha",))
    sc = scenario(tmp_path, monkeypatch, [{"hang": True, "status": block()}, work("alpha", exit=True)])
    first = background(repo)
    agent = wait_for_agent(sc)
    second = dun(repo, "loop", timeout=20)
    assert second.returncode == 2
    assert f"pid {first.pid}" in second.stderr
    assert len(calls(sc)) == 1  # the second loop called no agent
    assert f"running (pid {first.pid})" in dun(repo, "status").stdout
    assert json.loads(dun(repo, "status", "--json").stdout)["loop_pid"] == first.pid
    os.kill(first.pid, signal.SIGKILL)
    first.wait()
    third = dun(repo, "loop")
    assert third.returncode == 0, third.stderr
    assert gone(agent["pid"])
    s = state(repo)
    assert s["stop_reason"] == "complete" and s["pid"] != first.pid
    assert json.loads(dun(repo, "status", "--json").stdout)["loop_pid"] is None


def test_status_does_not_call_a_dead_loop_running(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                 background: Callable[..., Background]) -> None:
    make_repo(repo)
    sc = scenario(tmp_path, monkeypatch, [{"hang": True, "status": block()}])
    loop = background(repo)
    wait_for_agent(sc)
    os.kill(loop.pid, signal.SIGKILL)
    loop.wait()
    status = dun(repo, "status")
    assert status.returncode == 0
    first_line = status.stdout.splitlines()[0]
    assert ": running" not in first_line, first_line
    assert json.loads(dun(repo, "status", "--json").stdout)["loop_pid"] is None


def test_the_timeout_kills_an_agent_and_a_child_that_ignore_sigterm(repo: Path, tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch,
                                                                    background: Callable[..., Background]) -> None:
    make_repo(repo, boxes=("alpha",), loop={"iteration_timeout_s": 1, "kill_grace_s": 0.5})
    sc = scenario(tmp_path, monkeypatch, [hanging(ignore_sigterm=True), work("alpha", 0.1, exit=True)])
    loop = background(repo)  # in the background so that teardown kills anything a failure leaves behind
    assert loop.wait(timeout=30) == 0, loop.stderr()
    first_call = calls(sc)[0]
    assert gone(first_call["pid"]) and gone(first_call["child_pid"])
    first = log(repo, 1)
    assert first["timed_out"] is True
    assert first["error_kind"] == "other" and "timed out" in first["error"]
    assert 1 <= first["duration_s"] < 5
    assert first["cost_estimated"] is True and first["cost_usd"] == 5.0  # charged loop.budget_per_iteration_usd
    s = state(repo)
    assert (s["stop_reason"], s["iteration"], s["errors_total"]) == ("complete", 2, 1)
    assert s["cost_usd_total"] == pytest.approx(5.1)
    assert "timed out" in report(repo)


def test_what_a_finished_agent_leaves_running_in_its_group_is_killed(repo: Path, tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch,
                                                                     background: Callable[..., Background]) -> None:
    make_repo(repo, boxes=("alpha",))
    sc = scenario(tmp_path, monkeypatch, [work("alpha", exit=True, spawn_child=True, child_sleep=60,
                                               child_stdout=False)])
    loop = background(repo)
    assert loop.wait() == 0, loop.stderr()
    assert gone(calls(sc)[0]["child_pid"])


def test_fresh_archives_the_previous_run(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    make_repo(repo)
    scenario(tmp_path, monkeypatch, [work("alpha"), work("beta"), work("gamma", exit=True)])
    assert dun(repo, "loop", "--max-iterations", "1").returncode == 1
    old = state(repo)
    done = dun(repo, "loop", "--fresh")
    assert done.returncode == 0, done.stderr
    archived = repo / ".dun" / "archive" / old["run_id"]
    assert json.loads((archived / "logs" / "iteration-1.json").read_text())["run_id"] == old["run_id"]
    assert json.loads((archived / "state.json").read_text())["stop_reason"] == "max_iterations"
    s = state(repo)
    assert s["run_id"] != old["run_id"]
    assert (s["stop_reason"], s["iteration"]) == ("complete", 2)
    assert logs(repo) == [1, 2]
    assert log(repo, 1)["status_block"]["task_completed"] == "beta"
    assert git(repo, "status", "--porcelain") == ""


def test_fresh_after_circuit_open_starts_with_a_closed_circuit(repo: Path, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    make_repo(repo, circuit={"half_open_after": 1, "no_progress_limit": 2})
    scenario(tmp_path, monkeypatch, [idle(), idle(), work("alpha"), work("beta"), work("gamma", exit=True)])
    first = dun(repo, "loop")
    assert first.returncode == 1 and state(repo)["stop_reason"] == "circuit_open"
    assert "to go on: read why it opened" in first.stderr and "--reset-circuit" in first.stderr
    status = dun(repo, "status").stdout
    assert "to go on:" in status and "`dun loop --reset-circuit`" in status
    assert "- to go on: read why it opened" in report(repo)
    done = dun(repo, "loop", "--fresh")
    assert done.returncode == 0, done.stderr
    assert "--fresh: a new run with a closed circuit (it was OPEN: no_progress)" in done.stderr
    s = state(repo)
    assert (s["stop_reason"], s["iteration"], s["circuit"]["state"]) == ("complete", 3, "CLOSED")


def test_a_budget_stop_says_what_was_spent_and_reserved(repo: Path, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """$5 budget and the default $5 per-iteration cap: the run goes on while a typical iteration fits."""
    make_repo(repo, boxes=("a1", "a2", "a3", "a4"), loop={"max_budget_usd": 5.0})
    scenario(tmp_path, monkeypatch, [work("a1", 0.11), work("a2", 2.0), work("a3", 2.5), work("a4", 0.1)])
    done = dun(repo, "loop")
    assert done.returncode == 1, done.stderr
    s = state(repo)
    assert (s["stop_reason"], s["iteration"]) == ("budget", 3)  # $4.61 spent: $0.39 left < the median $2
    why = ("$4.6100 spent of the $5 budget; the $0.3900 left is less than the $2.0000 reserved for a typical "
           "iteration (the median of this run's last 3 iteration(s))")
    assert s["stop_detail"] == why
    assert f"stop reason: **budget** ({why})" in report(repo)
    assert f"stopped: budget ({why})" in done.stderr
    assert "`dun loop --max-budget-usd X`" in dun(repo, "status").stdout


def test_a_mission_with_no_boxes_is_a_warning_naming_the_file(repo: Path, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    make_repo(repo, boxes=())
    write(repo, "MISSION.md", "# Mission\n\nMake the greeting friendlier, in prose.\n")
    git(repo, "commit", "-qam", "prose")
    scenario(tmp_path, monkeypatch, [work("alpha")])
    done = dun(repo, "loop")
    assert "warning: MISSION.md has no boxes (`- [ ] ...` lines): the mission gives the loop no work" in done.stderr


def test_a_killed_iterations_change_to_the_judge_is_still_the_agents(repo: Path, tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch,
                                                                     background: Callable[..., Background]) -> None:
    """The agent weakens the config, then the loop is killed -9 mid-iteration: the restart reverts the change as
    the agent's, instead of taking it as the new baseline."""
    make_repo(repo)
    original = (repo / ".dun/config.yaml").read_text()
    weakened = json.loads(original)
    weakened["plugins"]["disabled"] = ["python", "mission"]
    sc = scenario(tmp_path, monkeypatch, [{"actions": [{"write": ".dun/config.yaml", "content": json.dumps(weakened)},
                                                       {"run": "sed -i '/gamma/d' MISSION.md", "check": True}],
                                           "hang": True, "status": block()},
                                          work("alpha"), work("beta"), work("gamma", exit=True)])
    loop = background(repo)
    until(lambda: calls(sc) and json.loads((repo / ".dun/config.yaml").read_text()) == weakened, "the edit")
    loop.signal(signal.SIGKILL)
    loop.wait()
    done = dun(repo, "loop")
    assert done.returncode == 0, done.stderr
    assert "iteration 1, interrupted, changed what decides 'done': .dun/config.yaml (reverted)" in done.stderr
    assert "taken as the new baseline" not in done.stderr
    first = log(repo, 1)
    assert first["interrupted"] is True
    assert [d["kind"] for d in first["verification"]["discrepancies"]] == ["checker_tampered"]
    assert (repo / ".dun/config.yaml").read_text() == original
    s = state(repo)  # the run went on under the reverted config: the mission's boxes still counted
    assert (s["stop_reason"], s["iteration"]) == ("complete", 4)
    assert "- [ ]" not in (repo / "MISSION.md").read_text()
    # the box the killed agent deleted is not the operator's edit: the next conclusion put it back
    assert kinds_of(log(repo, 2)) == ["task_tampered"] and "- [x] gamma" in (repo / "MISSION.md").read_text()


def kinds_of(entry: dict[str, Any]) -> list[str]:
    return [d["kind"] for d in (entry.get("verification") or {}).get("discrepancies") or []]


def test_every_stop_reason_names_how_to_go_on() -> None:
    from dun.core.kinds import StopReason
    from dun.loop.report import RESUME

    assert set(RESUME) == set(StopReason)


# --------------------------------------------------------------------------------------------------------------------
# --dry-run, status, logs, stop


def dun_files(repo: Path) -> dict[str, float]:
    return {str(p.relative_to(repo)): p.stat().st_mtime for p in (repo / ".dun").rglob("*")}


def test_dry_run_prints_the_prompt_and_changes_nothing(repo: Path, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    make_repo(repo)
    sc = scenario(tmp_path, monkeypatch, [work("alpha")])
    files = dun_files(repo)
    done = dun(repo, "loop", "--dry-run")
    assert done.returncode == 0, done.stderr
    assert "alpha" in done.stdout and "mission-boxes" in done.stdout and "DUN_STATUS" in done.stdout
    assert "dry run: would run" in done.stderr
    assert not sidecar(sc, ".calls.jsonl").exists()
    assert not (repo / ".dun" / "state.json").exists()
    assert not (repo / ".dun" / "logs").exists()
    assert dun_files(repo) == files
    assert git(repo, "status", "--porcelain") == ""


def test_dry_run_says_when_the_loop_would_stop(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    make_repo(repo)
    scenario(tmp_path, monkeypatch, [work("alpha")])
    dun(repo, "stop")
    done = dun(repo, "loop", "--dry-run")
    assert done.returncode == 0
    assert "would stop (stop_requested)" in done.stderr
    assert done.stdout == ""
    assert (repo / ".dun" / "STOP").exists()  # a dry run consumes nothing


def test_dry_run_with_reset_circuit_predicts_the_real_run(repo: Path, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    make_repo(repo)
    open_circuit_state(repo, 5)
    sc = scenario(tmp_path, monkeypatch, [work("alpha")])
    done = dun(repo, "loop", "--dry-run", "--reset-circuit")
    assert "would run" in done.stderr, done.stderr
    assert "alpha" in done.stdout
    assert not sidecar(sc, ".calls.jsonl").exists()


def test_dry_run_after_a_complete_run_predicts_the_new_run(repo: Path, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    make_repo(repo, boxes=("alpha",), loop={"max_iterations": 1})
    scenario(tmp_path, monkeypatch, [work("alpha", exit=True), work("delta", exit=True)])
    assert dun(repo, "loop").returncode == 0
    write(repo, "MISSION.md", (repo / "MISSION.md").read_text() + "- [ ] delta\n")
    git(repo, "commit", "-qam", "more work")
    dry = dun(repo, "loop", "--dry-run")
    assert "would run" in dry.stderr, dry.stderr
    assert "# dun iteration 1" in dry.stdout
    real = dun(repo, "loop")
    assert real.returncode == 0, real.stderr
    assert state(repo)["iteration"] == 1


def test_a_new_run_after_a_complete_one_keeps_the_previous_runs_logs(repo: Path, tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    make_repo(repo, boxes=("alpha", "beta"))
    scenario(tmp_path, monkeypatch, [work("alpha"), work("beta", exit=True), work("delta", exit=True)])
    assert dun(repo, "loop").returncode == 0
    old_run = state(repo)["run_id"]
    write(repo, "MISSION.md", (repo / "MISSION.md").read_text() + "- [ ] delta\n")
    git(repo, "commit", "-qam", "more work")
    assert dun(repo, "loop").returncode == 0
    new_run = state(repo)["run_id"]
    assert new_run != old_run
    kept = [json.loads(p.read_text()) for p in (repo / ".dun").rglob("iteration-1.json")]
    assert old_run in {k.get("run_id") for k in kept}, "the previous run's first iteration log was overwritten"
    listed = json.loads(dun(repo, "logs", "--json").stdout)
    assert {entry.get("run_id") for entry in listed} == {new_run}


def test_status_and_logs(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    make_repo(repo)
    assert "no loop has run here yet" in dun(repo, "status").stdout
    assert "no iterations logged yet" in dun(repo, "logs").stdout
    scenario(tmp_path, monkeypatch, [work("alpha", 0.125), work("beta", 0.25)])
    assert dun(repo, "loop", "--max-iterations", "2").returncode == 1
    s = state(repo)
    status = dun(repo, "status")
    assert status.returncode == 0
    assert s["run_id"] in status.stdout
    assert "stopped: max_iterations" in status.stdout
    assert "iteration 2" in status.stdout and "$0.3750 spent" in status.stdout
    assert "circuit CLOSED" in status.stdout
    as_json = json.loads(dun(repo, "status", "--json").stdout)
    assert as_json["state"]["run_id"] == s["run_id"] and as_json["loop_pid"] is None

    listing = dun(repo, "logs")
    lines = listing.stdout.splitlines()
    assert len(lines) == 2
    assert lines[0].split()[0] == "1" and "alpha" in lines[0] and "$0.1250" in lines[0]
    assert lines[1].split()[0] == "2" and "beta" in lines[1] and "$0.2500" in lines[1]
    assert [entry["iteration"] for entry in json.loads(dun(repo, "logs", "--json").stdout)] == [1, 2]

    one = dun(repo, "logs", "2")
    assert one.returncode == 0 and "beta" in one.stdout and "decision:" in one.stdout and "argv:" in one.stdout
    assert json.loads(dun(repo, "logs", "2", "--json").stdout) == log(repo, 2)
    raw = subprocess.run([*DUN, "logs", "2", "--out"], cwd=repo, capture_output=True, timeout=30)
    assert raw.returncode == 0
    assert raw.stdout == (repo / ".dun" / "logs" / "iteration-2.out").read_bytes()
    assert b"beta" in raw.stdout
    missing = dun(repo, "logs", "9")
    assert missing.returncode == 2 and "9" in missing.stderr
    assert dun(repo, "logs", "9", "--out").returncode == 2


def test_stop_now_kills_the_agent_and_stops_at_once(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                    background: Callable[..., Background]) -> None:
    make_repo(repo)
    sc = scenario(tmp_path, monkeypatch, [hanging()])
    loop = background(repo)
    agent = wait_for_agent(sc)
    until(lambda: (read_state(repo) or {}).get("agent_pgid"), "the agent's group in state.json")
    stop = dun(repo, "stop", "--now")
    assert stop.returncode == 0
    assert f"asked the loop (pid {loop.pid}) to stop now" in stop.stdout
    assert loop.wait() == 1
    assert gone(agent["pid"]) and gone(agent["child_pid"])
    s = state(repo)
    assert (s["status"], s["stop_reason"]) == ("stopped", "stop_requested")
    assert not (repo / ".dun" / "STOP").exists()


def test_stop_waits_for_the_current_iteration(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                              background: Callable[..., Background]) -> None:
    make_repo(repo)
    sc = scenario(tmp_path, monkeypatch, [work("alpha", hang=1.5), work("beta")])
    loop = background(repo)
    wait_for_agent(sc)
    stop = dun(repo, "stop")
    assert f"asked the loop (pid {loop.pid}) to stop after the current iteration" in stop.stdout
    assert loop.wait() == 1
    assert len(calls(sc)) == 1
    first = log(repo, 1)
    assert first["exit_code"] == 0 and not first.get("interrupted")
    assert first["status_block"]["task_completed"] == "alpha"
    assert (state(repo)["stop_reason"], state(repo)["iteration"]) == ("stop_requested", 1)
    assert not (repo / ".dun" / "STOP").exists()


# --------------------------------------------------------------------------------------------------------------------
# how the agent is called


@pytest.mark.parametrize("skip", [False, True])
def test_claude_adapter_argv_environment_and_redaction(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                       skip: bool) -> None:
    make_repo(repo, boxes=("alpha",), loop={"budget_per_iteration_usd": 0.75},
              agent={"name": "claude", "skip_permissions": skip})
    monkeypatch.setenv("CLAUDECODE", "1")
    monkeypatch.setenv("TERM", "xterm-256color")
    sc = scenario(tmp_path, monkeypatch, [work("alpha", exit=True)])
    done = dun(repo, "loop")
    assert done.returncode == 0, done.stderr
    call = calls(sc)[0]
    text = prompt(repo, 1)
    argv = call["argv"]
    assert argv[:2] == ["-p", text]
    assert (call["prompt"], call["prompt_source"]) == (text, "argv")
    assert argv[argv.index("--output-format") + 1] == "json"
    assert argv[argv.index("--max-budget-usd") + 1] == "0.75"
    assert ("--dangerously-skip-permissions" in argv) is skip
    assert call["claudecode"] is False and "CLAUDECODE" not in call["env_names"]
    assert call["term"] == "dumb"
    assert call["stdin"] in ("closed", "devnull") and not call["stdin_bytes"]
    assert call["pgid"] == call["pid"]  # its own process group
    assert call["cwd"] == str(repo)
    logged = log(repo, 1)
    assert logged["agent"] == "claude"
    assert text not in json.dumps(logged)
    assert logged["argv"][:len(FAKE_COMMAND)] == FAKE_COMMAND
    assert logged["argv"][len(FAKE_COMMAND):len(FAKE_COMMAND) + 2] == ["-p", f"<prompt: {len(text)} chars>"]
    assert ("--dangerously-skip-permissions" in logged["argv"]) is skip
    assert text not in dun(repo, "logs", "1").stdout


def test_skip_permissions_flag_applies_to_this_run_only(repo: Path, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """A CI job passes --skip-permissions; the repository's config (false) is what the next plain run uses."""
    make_repo(repo, boxes=("alpha", "beta"), agent={"name": "claude", "skip_permissions": False})
    sc = scenario(tmp_path, monkeypatch, [work("alpha"), work("beta", exit=True)])
    assert dun(repo, "loop", "--skip-permissions", "--max-iterations", "1").returncode == 1
    assert dun(repo, "loop").returncode == 0
    first, second = (call["argv"] for call in calls(sc))
    assert "--dangerously-skip-permissions" in first
    assert "--dangerously-skip-permissions" not in second
    assert json.loads((repo / ".dun" / "config.yaml").read_text())["agent"]["skip_permissions"] is False


def test_command_adapter_gets_the_prompt_on_stdin_and_a_clean_environment(repo: Path, tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    make_repo(repo, boxes=("alpha",))
    monkeypatch.setenv("CLAUDECODE", "1")
    sc = scenario(tmp_path, monkeypatch, [work("alpha", exit=True)])
    assert dun(repo, "loop").returncode == 0
    call = calls(sc)[0]
    assert (call["prompt_source"], call["stdin_eof"]) == ("stdin", True)
    assert call["prompt"] == prompt(repo, 1)
    assert call["claudecode"] is False and call["term"] == "dumb"
    assert log(repo, 1)["argv"] == FAKE_COMMAND


def test_flags_override_the_agent_model_and_output_format(repo: Path, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    # the config names claude with another binary (agent.command); `--agent claude` names the same agent
    make_repo(repo, boxes=("alpha",), agent={"name": "claude"})
    step = work("alpha", 0.2, exit=True, format="auto")
    sc = scenario(tmp_path, monkeypatch, [step])
    done = dun(repo, "loop", "--agent", "claude", "--live", "--model", "opus-test")
    assert done.returncode == 0, done.stderr
    argv = calls(sc)[0]["argv"]
    assert argv[argv.index("--output-format") + 1] == "stream-json" and "--verbose" in argv
    assert argv[argv.index("--model") + 1] == "opus-test"
    first = log(repo, 1)
    assert (first["agent"], first["answer_shape"], first["cost_usd"]) == ("claude", "claude-stream-json", 0.2)
    assert first["status_block"]["task_completed"] == "alpha"
    out = (repo / ".dun" / "logs" / "iteration-1.out").read_text()
    assert [json.loads(line)["type"] for line in out.splitlines()][-1] == "result"  # one event a line, to tail -f


def test_an_unknown_agent_is_a_usage_error(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    make_repo(repo)
    sc = scenario(tmp_path, monkeypatch, [work("alpha")])
    done = dun(repo, "loop", "--agent", "nope")
    assert done.returncode == 2
    assert "nope" in done.stderr and "claude" in done.stderr
    assert "Traceback" not in done.stderr
    assert not sidecar(sc, ".calls.jsonl").exists()
    assert not (repo / ".dun" / "state.json").exists()


def test_an_agent_that_cannot_start_is_a_failed_call(repo: Path, tmp_path: Path) -> None:
    # the agent exists when the loop starts (it is checked then) and is gone by the second call
    vanishing = tmp_path / "vanishing-agent"
    vanishing.write_text("#!/bin/sh\nrm -f \"$0\"\ncat > /dev/null\necho 'no block'\n")
    vanishing.chmod(0o755)
    make_repo(repo, loop={"error_threshold": 1}, agent={"command": [str(vanishing)]},
              circuit={"half_open_after": 20, "no_progress_limit": 20, "same_error_limit": 20})
    done = dun(repo, "loop")
    assert done.returncode == 1, done.stderr
    s = state(repo)
    assert (s["stop_reason"], s["errors_total"], s["iteration"]) == ("error_threshold", 1, 2)
    second = log(repo, 2)
    assert second["error_kind"] == "other" and str(vanishing) in second["error"]
    assert second["exit_code"] is None


def test_a_bad_agent_section_fails_before_a_run_starts(repo: Path) -> None:
    make_repo(repo, agent={"command": []})
    proc = dun(repo, "loop")
    assert proc.returncode == 2
    assert proc.stderr.strip() == "dun: agent.command: the `command` agent needs a command line, e.g. " \
                                  "[my-agent, --json]"
    assert not (repo / ".dun" / "state.json").exists(), "no run may start with an agent that cannot be called"


def test_a_missing_agent_cli_fails_before_a_run_starts(repo: Path) -> None:
    make_repo(repo, agent={"name": "claude", "command": ["no-such-claude-binary"]})
    proc = dun(repo, "loop")
    assert proc.returncode == 2
    assert "agent command not found: no-such-claude-binary" in proc.stderr
    assert not (repo / ".dun" / "state.json").exists()
