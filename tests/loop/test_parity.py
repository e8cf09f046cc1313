"""Both drivers resume alike from wherever a kill left a run.

A run is started in one repository and stopped at a step of an iteration: between two iterations, after the prompt
was written (the agent never ran), after the agent answered (the answer never read), or by SIGKILL of `dun loop`
while its agent runs. The repository, its `.dun/` and the fake agent's scenario are then copied twice; `dun loop`
resumes one copy and `scripts/dun-loop.sh` the other. Both must reach the same stop reason, exit code, iteration
count and sequence of decisions, and the expected ones.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from fake_agent import FAKE_COMMAND, alive, block, calls, write_scenario
from test_shell_driver import SCRIPT, VENV_BIN, Run, assert_same_end, describe, make_repo, spawn, work

CONFIRM = {"status": block(task="mission", exit=True, files=0), "cost_usd": 0.01}


def env(scenario: Path) -> dict[str, str]:
    return {**os.environ, "PATH": f"{VENV_BIN}{os.pathsep}{os.environ.get('PATH', '')}",
            "DUN_FAKE_SCENARIO": str(scenario), "TERM": "dumb"}


def dun(repo: Path, scenario: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(VENV_BIN / "dun"), *args], cwd=repo, env=env(scenario), capture_output=True,
                          text=True, timeout=60)


def state(repo: Path) -> dict[str, Any]:
    return dict(json.loads((repo / ".dun" / "state.json").read_text(encoding="utf-8")))


def step_before(repo: Path, scenario: Path) -> int:
    done = dun(repo, scenario, "respond", "--decide", "--before")
    assert done.returncode == 0 and done.stdout.startswith("go "), done.stdout + done.stderr
    return int(done.stdout.split()[1])


def run_agent(repo: Path, scenario: Path, n: int) -> int:
    logs = repo / ".dun" / "logs"
    with (logs / f"iteration-{n}.prompt.md").open("rb") as prompt, (logs / f"iteration-{n}.out").open("wb") as out, \
            (logs / f"iteration-{n}.err").open("wb") as err:
        return subprocess.run(FAKE_COMMAND, cwd=repo, env=env(scenario), stdin=prompt, stdout=out, stderr=err,
                              timeout=60).returncode


def kill_loop_during_agent(repo: Path, scenario: Path) -> None:
    """`dun loop` SIGKILLed once its agent is running; the agent (hanging) is left behind, as after a crash."""
    proc = subprocess.Popen([str(VENV_BIN / "dun"), "loop"], cwd=repo, env=env(scenario),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while not (calls(scenario) and state_has_agent(repo) and committed(repo, "Do alpha")):
        assert proc.poll() is None and time.monotonic() < deadline, "the loop never started its agent"
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=10)


def committed(repo: Path, subject: str) -> bool:
    """The agent's commit is done: HEAD has it and git holds no lock (the copy must not catch git mid-write)."""
    locks = (repo / ".git" / "index.lock", repo / ".git" / "HEAD.lock")
    last = subprocess.run(["git", "log", "-1", "--format=%s"], cwd=repo, capture_output=True, text=True).stdout
    return last.strip() == subject and not any(lock.exists() for lock in locks)


def state_has_agent(repo: Path) -> bool:
    try:
        return bool(state(repo).get("agent_pgid"))
    except (OSError, ValueError):
        return False


def prepare(base: Path, point: str, boxes: tuple[str, ...], steps: list[dict[str, Any]]) -> tuple[Path, Path]:
    repo = make_repo(base / "repo", boxes=boxes)
    scenario = write_scenario(base / "fake", steps)
    if point == "sigkill-during-agent":
        kill_loop_during_agent(repo, scenario)
        return repo, scenario
    n = step_before(repo, scenario)
    if point == "after-prompt":
        return repo, scenario
    assert run_agent(repo, scenario, n) == 0
    if point == "after-answer":
        return repo, scenario
    done = dun(repo, scenario, "respond", "--decide", "--iteration", str(n), "--exit-code", "0")
    assert done.stdout.startswith("continue"), done.stdout + done.stderr
    return repo, scenario


def resume_both(tmp_path: Path, base_repo: Path, base_scenario: Path) -> tuple[Run, Run]:
    sides = {}
    for name in ("loop", "sh"):
        shutil.copytree(base_repo.parent, tmp_path / name, symlinks=True)
        sides[name] = (tmp_path / name / "repo", tmp_path / name / "fake" / base_scenario.name)
    argv = {"loop": [str(VENV_BIN / "dun"), "loop"], "sh": [str(SCRIPT), "--", *FAKE_COMMAND]}
    with ThreadPoolExecutor(2) as pool:
        futures = {name: pool.submit(spawn, name, argv[name], *sides[name]) for name in ("loop", "sh")}
        return futures["loop"].result(), futures["sh"].result()


INTERRUPTED = (None, "stop", "interrupted")
TWO_BOXES = [work("alpha"), work("beta"), CONFIRM]
CASES = {
    # point: (iterations, the sequence of (status, action, reason) after resuming)
    "between-iterations": (3, [("COMPLETE", "continue", "work_remains"), ("COMPLETE", "continue", "confirm"),
                               ("COMPLETE", "stop", "complete")]),
    "after-prompt": (4, [INTERRUPTED, ("COMPLETE", "continue", "work_remains"), ("COMPLETE", "continue", "confirm"),
                         ("COMPLETE", "stop", "complete")]),
    "after-answer": (3, [INTERRUPTED, ("COMPLETE", "continue", "confirm"), ("COMPLETE", "stop", "complete")]),
    "sigkill-during-agent": (3, [INTERRUPTED, ("COMPLETE", "continue", "confirm"), ("COMPLETE", "stop", "complete")]),
}


@pytest.mark.parametrize("point", list(CASES))
def test_both_drivers_resume_alike_after_a_kill(tmp_path: Path, point: str) -> None:
    steps = [dict(TWO_BOXES[0], hang=True), *TWO_BOXES[1:]] if point == "sigkill-during-agent" else TWO_BOXES
    repo, scenario = prepare(tmp_path / "base", point, ("alpha", "beta"), steps)
    orphans = [c["pid"] for c in calls(scenario)] if point == "sigkill-during-agent" else []
    assert all(alive(pid) for pid in orphans), "the killed loop's agent is still running"
    loop, sh = resume_both(tmp_path, repo, scenario)
    assert not any(alive(pid) for pid in orphans), "the resumed loop killed the agent the dead loop left running"
    iterations, sequence = CASES[point]
    assert_same_end(loop, sh, "complete", iterations, sequence,
                    agent_calls=iterations - 1 if point == "after-prompt" else iterations)
    for run in (loop, sh):
        assert all(log.get("ended_at") for log in run.logs()), f"{run.name}: an iteration left open"


def test_a_killed_last_iteration_still_owes_its_confirmation(tmp_path: Path) -> None:
    """The agent ticked the last box, then the driver died before its answer was read. The checks pass, but the
    agent never agreed: both drivers must run a confirmation iteration, not stop `complete` with no agent call."""
    repo, scenario = prepare(tmp_path / "base", "after-answer", ("alpha",), [work("alpha"), CONFIRM])
    loop, sh = resume_both(tmp_path, repo, scenario)
    assert_same_end(loop, sh, "complete", 2, [INTERRUPTED, ("COMPLETE", "stop", "complete")])
    assert [bool(log.get("confirmation")) for log in loop.logs()] == [False, True], describe(loop)


def test_the_answer_step_refuses_another_iteration_number(tmp_path: Path) -> None:
    repo, scenario = prepare(tmp_path / "base", "after-answer", ("alpha",), [work("alpha"), CONFIRM])
    done = dun(repo, scenario, "respond", "--decide", "--iteration", "7", "--exit-code", "0")
    assert done.returncode == 2, done.stderr
    assert "--iteration 7 does not match the iteration in progress (1)" in done.stderr
    assert state(repo)["in_progress"] == 1, "a refused step changes nothing"
