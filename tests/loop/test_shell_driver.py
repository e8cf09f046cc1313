"""`scripts/dun-loop.sh` against `dun loop`: the same scenarios, the same stop reasons.

Each scenario builds two identical git repositories. One runs `dun loop` with the `command` agent, the other
`scripts/dun-loop.sh -- <fake agent>`; both run on a terminal (pexpect), each with its own copy of the fake agent's
scenario, at the same time. They must end the same way: the stop reason in `.dun/state.json`, the exit code, the
number of iterations and agent calls, and each iteration's (status, decision) in `.dun/logs/iteration-N.json`.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pexpect
import pytest
from conftest import git, write
from fake_agent import FAKE_COMMAND, block, calls, write_scenario
from loop_support import make_repo as loop_repo

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "dun-loop.sh"
VENV_BIN = Path(sys.executable).parent  # where `dun` is installed: the script finds it on PATH
RUN_TIMEOUT_S = 30.0

# --------------------------------------------------------------------------------------------------------------------
# helpers


def make_repo(repo: Path, boxes: tuple[str, ...], ticked: tuple[str, ...] = (), loop: dict[str, Any] | None = None,
              circuit: dict[str, Any] | None = None) -> Path:
    """A fresh git repository set up as the loop tests set theirs up (the fake agent as `command` agent)."""
    repo.mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    return loop_repo(repo, boxes, ticked, loop, circuit)


def work(box: str, exit: bool = False, cost: float = 0.01, status: str = "COMPLETE") -> dict[str, Any]:
    """A step that does one box for real: ticks it and commits."""
    return {"actions": [{"tick": "MISSION.md", "box": box}, {"commit": f"Do {box}"}],
            "status": block(task=box, status=status, exit=exit), "cost_usd": cost}


@dataclass
class Run:
    """One driver's run, as a user sees it afterwards."""

    name: str
    repo: Path
    scenario: Path
    exit_code: int | None
    output: str

    @property
    def state(self) -> dict[str, Any]:
        return json.loads((self.repo / ".dun" / "state.json").read_text(encoding="utf-8"))

    def logs(self) -> list[dict[str, Any]]:
        paths = sorted((self.repo / ".dun" / "logs").glob("iteration-*.json"), key=lambda p: int(p.stem[10:]))
        return [json.loads(p.read_text(encoding="utf-8")) for p in paths]

    def sequence(self) -> list[tuple[str | None, str, str]]:
        """(status_block.status, decision.action, decision.reason) of every iteration, in order."""
        return [((log.get("status_block") or {}).get("status"), log["decision"]["action"],
                 log["decision"]["reason"]) for log in self.logs()]

    def calls(self) -> list[dict[str, Any]]:
        return calls(self.scenario)


def spawn(name: str, argv: list[str], repo: Path, scenario: Path, cwd: Path | None = None) -> Run:
    """Run `argv` on a terminal until it ends; the fake agent plays `scenario`."""
    # each side its own user state: loops of one agent on one machine share limits (fleet.shared_limits), and the
    # two sides run at the same time
    env = {**os.environ, "PATH": f"{VENV_BIN}{os.pathsep}{os.environ.get('PATH', '')}",
           "DUN_FAKE_SCENARIO": str(scenario), "TERM": "dumb", "XDG_STATE_HOME": str(repo.parent / "state")}
    child = pexpect.spawn(argv[0], argv[1:], cwd=str(cwd or repo), env=env, timeout=RUN_TIMEOUT_S,
                          encoding="utf-8", codec_errors="replace", dimensions=(50, 200))
    try:
        child.expect(pexpect.EOF)
    except pexpect.TIMEOUT:
        child.terminate(force=True)
        pytest.fail(f"{name} still running after {RUN_TIMEOUT_S}s; output so far:\n{child.before}")
    output = child.before or ""
    child.wait()
    child.close()
    return Run(name, repo, scenario, child.exitstatus, output.replace("\r\n", "\n"))


def both(tmp_path: Path, steps: list[dict[str, Any]], prepare: Callable[[Path], None] | None = None,
         **repo_args: Any) -> tuple[Run, Run]:
    """Two identical repositories; `dun loop` in one and `scripts/dun-loop.sh` in the other, at the same time."""
    sides = {}
    for name in ("loop", "sh"):
        repo = make_repo(tmp_path / name / "repo", **repo_args)
        scenario = write_scenario(tmp_path / name / "fake", steps)  # outside the repo: not a change git would see
        sides[name] = (repo, scenario)
    if prepare:  # after both set-ups, right before both start: a time `prepare` seeds is not eaten by a slow set-up
        for repo, _ in sides.values():
            prepare(repo)
    argv = {"loop": [str(VENV_BIN / "dun"), "loop"], "sh": [str(SCRIPT), "--", *FAKE_COMMAND]}
    with ThreadPoolExecutor(2) as pool:
        futures = {name: pool.submit(spawn, name, argv[name], *sides[name]) for name in ("loop", "sh")}
        return futures["loop"].result(), futures["sh"].result()


def describe(run: Run) -> str:
    return f"--- {run.name} (exit {run.exit_code}) ---\n{run.output}"


def assert_same_end(loop: Run, sh: Run, reason: str, iterations: int,
                    sequence: list[tuple[str | None, str, str]], agent_calls: int | None = None) -> None:
    """Both drivers ended as expected, and alike. `agent_calls`: the fake agent's calls in all (default: one per
    iteration)."""
    both_out = describe(loop) + describe(sh)
    expected_exit = 0 if reason == "complete" else 1
    assert (loop.state["stop_reason"], sh.state["stop_reason"]) == (reason, reason), both_out
    assert (loop.exit_code, sh.exit_code) == (expected_exit, expected_exit), both_out
    assert (loop.state["iteration"], sh.state["iteration"]) == (iterations, iterations), both_out
    assert loop.sequence() == sh.sequence() == sequence, both_out
    expected_calls = iterations if agent_calls is None else agent_calls
    assert len(loop.calls()) == len(sh.calls()) == expected_calls, "one agent call per iteration that ran one"
    assert all(call["prompt_source"] == "stdin" for call in loop.calls() + sh.calls()), "the prompt comes on stdin"
    assert [bool(log.get("confirmation")) for log in loop.logs()] == [bool(log.get("confirmation"))
                                                                      for log in sh.logs()], both_out
    assert (loop.state["status"], sh.state["status"]) == (("complete",) * 2 if reason == "complete"
                                                          else ("stopped",) * 2)
    # what each driver tells the user at the end
    assert re.search(rf"stopped: {reason}( \(.*\))? after {iterations} iteration\(s\)", loop.output), both_out
    assert f"dun-loop.sh: stop {reason}" in sh.output, both_out
    for run in (loop, sh):
        assert reason in (run.repo / ".dun" / "REPORT.md").read_text(encoding="utf-8")


# --------------------------------------------------------------------------------------------------------------------
# the scenarios


@dataclass
class Case:
    id: str
    steps: list[dict[str, Any]]
    reason: str
    sequence: list[tuple[str | None, str, str]]
    boxes: tuple[str, ...] = ("alpha", "beta", "gamma")
    ticked: tuple[str, ...] = ()
    loop: dict[str, Any] = field(default_factory=dict)
    circuit: dict[str, Any] = field(default_factory=dict)
    stop_file: bool = False


IDLE = {"status": block(task="looked around", status="IN_PROGRESS", files=0), "cost_usd": 0.01}
CRASH = {"error": {"kind": "crash", "stderr": "fake_agent: segfault at 0x0\n", "exit": 1}}
CONTINUE = ("continue", "work_remains")

CASES = [
    Case("complete-honest-mission", [work("alpha"), work("beta"), work("gamma", exit=True)], "complete",
         [("COMPLETE", *CONTINUE), ("COMPLETE", *CONTINUE), ("COMPLETE", "stop", "complete")]),
    # the agent ticks the last box but says EXIT_SIGNAL false: a confirmation iteration, where it says true
    Case("complete-after-confirmation", [work("alpha", exit=False), {"status": block(task="mission", exit=True)}],
         "complete", [("COMPLETE", "continue", "confirm"), ("COMPLETE", "stop", "complete")], boxes=("alpha",)),
    # the agent keeps saying false: `loop.confirm_iterations` (2) confirmation iterations, then complete
    Case("complete-after-confirmations-run-out",
         [work("alpha", exit=False), {"status": block(task="mission", exit=False, files=0), "repeat": True}],
         "complete", [("COMPLETE", "continue", "confirm")] * 2 + [("COMPLETE", "stop", "complete")],
         boxes=("alpha",)),
    Case("max-iterations", [work("alpha"), work("beta"), work("gamma")], "max_iterations",
         [("COMPLETE", *CONTINUE), ("COMPLETE", *CONTINUE)], loop={"max_iterations": 2}),
    Case("circuit-open-without-status-block", [{"status": None, "text": "I read the code.", "repeat": True}],
         "circuit_open", [(None, *CONTINUE), (None, *CONTINUE), (None, "stop", "circuit_open")]),
    Case("agent-blocked-twice-on-one-task",
         [{"status": block(task="beta", status="BLOCKED", files=0), "repeat": True}], "agent_blocked",
         [("BLOCKED", *CONTINUE), ("BLOCKED", "stop", "agent_blocked")]),
    # $0.5 a call; cap $1 with $0.25 a call budgeted: two calls, then the next could exceed the cap
    Case("budget", [work("alpha", cost=0.5), work("beta", cost=0.5), work("gamma", cost=0.5)], "budget",
         [("COMPLETE", *CONTINUE), ("COMPLETE", *CONTINUE)],
         loop={"max_budget_usd": 1.0, "budget_per_iteration_usd": 0.25}),
    Case("error-threshold", [{**CRASH, "repeat": True}], "error_threshold", [(None, *CONTINUE)] * 2,
         loop={"error_threshold": 2},
         circuit={"same_error_limit": 50, "no_progress_limit": 50, "half_open_after": 40}),
    Case("stop-requested-before-start", [IDLE], "stop_requested", [], stop_file=True),
    Case("complete-at-once-nothing-actionable", [IDLE], "complete", [], boxes=("alpha", "beta"),
         ticked=("alpha", "beta")),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_script_and_dun_loop_end_alike(tmp_path: Path, case: Case) -> None:
    def prepare(repo: Path) -> None:
        if case.stop_file:
            write(repo, ".dun/STOP", "\n")

    loop, sh = both(tmp_path, case.steps, prepare, boxes=case.boxes, ticked=case.ticked, loop=case.loop,
                    circuit=case.circuit)
    assert_same_end(loop, sh, case.reason, len(case.sequence), case.sequence)
    if case.stop_file:  # consumed, so the next start runs
        assert not (loop.repo / ".dun" / "STOP").exists()
        assert not (sh.repo / ".dun" / "STOP").exists()


# --------------------------------------------------------------------------------------------------------------------
# waits: dun decides how long, the script sleeps that long and goes on


def test_rate_limited_answer_makes_both_wait_then_finish(tmp_path: Path) -> None:
    steps = [{"error": {"kind": "rate_limit"}}, work("alpha", exit=True)]
    loop, sh = both(tmp_path, steps, boxes=("alpha",), loop={"usage_limit_wait_min": 0.01})  # 0.6 s
    assert_same_end(loop, sh, "complete", 2, [(None, "wait", "rate_limit"), ("COMPLETE", "stop", "complete")])
    for run in (loop, sh):
        wait_s = run.logs()[0]["decision"]["wait_s"]
        assert 0 < wait_s <= 0.6
        first, second = run.calls()
        assert second["time"] - first["time"] >= wait_s, f"{run.name} called the agent again before the wait ended"
        assert run.state["errors_total"] == 0, "a rate limit is a wait, not a failure"
    waits = re.findall(r"dun-loop\.sh: waiting ([\d.]+) s \((\w+)\)", sh.output)
    assert [reason for _, reason in waits] == ["rate_limit"], describe(sh)
    assert 0 < float(waits[0][0]) <= 0.7  # rounded up to a tenth, never down to 0
    gap = sh.calls()[1]["time"] - sh.calls()[0]["time"]
    assert gap >= float(waits[0][0]), "the script sleeps the seconds dun gave"
    assert "waiting 0.0 min (rate_limit)" in loop.output, describe(loop)


def test_hourly_call_limit_makes_both_wait_then_finish(tmp_path: Path) -> None:
    """`loop.max_calls_per_hour: 1` and a call 5 s short of an hour ago: both wait, then run and complete."""
    seeded: dict[Path, float] = {}

    def seed(repo: Path) -> None:
        from dun.store.state import LoopState

        seeded[repo] = time.time() - 3600 + 5  # taken as the driver starts: a loaded machine still sees a wait
        previous = LoopState(status="complete", stop_reason="complete", calls=[seeded[repo]])
        write(repo, ".dun/state.json", json.dumps(previous.to_record()))

    loop, sh = both(tmp_path, [work("alpha", exit=True)], seed, boxes=("alpha",), loop={"max_calls_per_hour": 1})
    assert_same_end(loop, sh, "complete", 1, [("COMPLETE", "stop", "complete")])
    for run in (loop, sh):
        assert run.calls()[0]["time"] >= seeded[run.repo] + 3600, f"{run.name} called the agent inside the hour"
    assert re.search(r"dun-loop\.sh: waiting [\d.]+ s \(hourly_call_limit\)", sh.output), describe(sh)
    assert re.search(r"dun loop: waiting \d+\.\d min \(hourly_call_limit\)", loop.output), describe(loop)


def test_script_is_never_told_to_wait_less_than_dun_waits(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    from dun.core.kinds import ExitCode
    from dun.loop.stepper import decide_before
    from dun.store.state import LoopState

    repo = make_repo(tmp_path / "repo", boxes=("alpha",))
    frozen = time.time()
    write(repo, ".dun/state.json", json.dumps(LoopState(resume_at=frozen + 0.4).to_record()))  # a usage-limit wait
    monkeypatch.setattr(time, "time", lambda: frozen)
    assert decide_before(str(repo)) == ExitCode.STEP_WAIT
    action, seconds, reason = capsys.readouterr().out.split()
    assert (action, reason) == ("wait", "usage_limit")
    assert float(seconds) >= 0.4, f"dun asked the script to sleep {seconds} s of a 0.4 s wait"


def test_resumed_run_owes_its_confirmation_in_both(tmp_path: Path) -> None:
    """A run stopped (max_iterations) right after the agent ticked the last box but said EXIT_SIGNAL false, then
    resumed with a higher limit: the dual gate still wants the agent's agreement, so a confirmation iteration runs."""
    steps = [work("alpha", exit=False), {"status": block(task="mission", exit=True, files=0)}]
    loop, sh = both(tmp_path, steps, boxes=("alpha",), loop={"max_iterations": 1})
    assert_same_end(loop, sh, "max_iterations", 1, [("COMPLETE", "continue", "confirm")])
    for run in (loop, sh):
        config = json.loads((run.repo / ".dun" / "config.yaml").read_text(encoding="utf-8"))
        config["loop"]["max_iterations"] = 5
        write(run.repo, ".dun/config.yaml", json.dumps(config, indent=1) + "\n")
        git(run.repo, "commit", "-q", "-am", "allow more iterations")
    with ThreadPoolExecutor(2) as pool:
        again = [pool.submit(spawn, run.name, argv, run.repo, run.scenario)
                 for run, argv in ((loop, [str(VENV_BIN / "dun"), "loop"]), (sh, [str(SCRIPT), "--", *FAKE_COMMAND]))]
        loop, sh = (future.result() for future in again)
    assert_same_end(loop, sh, "complete", 2, [("COMPLETE", "continue", "confirm"), ("COMPLETE", "stop", "complete")])


# --------------------------------------------------------------------------------------------------------------------
# the script's own command line


@pytest.mark.parametrize("args", [[], ["--"], ["-C", "."]], ids=["nothing", "dashes-only", "repo-only"])
def test_script_without_agent_command_is_a_usage_error(repo: Path, args: list[str]) -> None:
    result = subprocess.run([str(SCRIPT), *args], cwd=repo, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                            timeout=RUN_TIMEOUT_S)
    assert result.returncode == 2
    assert "give the agent command after --" in result.stderr
    assert not (repo / ".dun").exists(), "a usage error starts no run"


def test_script_help_prints_usage(repo: Path) -> None:
    result = subprocess.run([str(SCRIPT), "--help"], cwd=repo, capture_output=True, text=True, timeout=RUN_TIMEOUT_S)
    assert result.returncode == 0
    assert "scripts/dun-loop.sh [-C REPO] -- AGENT_COMMAND" in result.stdout


def test_script_runs_in_the_repository_given_with_C(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", boxes=("alpha",))
    scenario = write_scenario(tmp_path / "fake", [work("alpha", exit=True)])
    run = spawn("sh", [str(SCRIPT), "-C", str(repo), "--", *FAKE_COMMAND], repo, scenario, cwd=tmp_path)
    assert run.exit_code == 0, describe(run)
    assert run.state["stop_reason"] == "complete"
    assert [c["cwd"] for c in run.calls()] == [str(repo)]
    assert not (tmp_path / ".dun").exists()
