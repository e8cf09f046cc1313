"""The sandbox inside `dun loop`: an agent that runs the filesystem class of dangerous commands leaves every canary
outside the repository intact and still gets its own work committed; with `loop.sandbox: off` the same agent
destroys the canaries (so the test can fail)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from fake_agent import block, calls, write_scenario
from loop_support import make_repo
from test_sandbox import ATTACK, CANARIES, OUTSIDE, intact, needs_bwrap, world  # noqa: F401 (fixture)


def run_loop(base: Path, mode: str) -> subprocess.CompletedProcess[str]:
    repo = base / "repo"
    make_repo(repo, boxes=("alpha",), loop={"sandbox": mode})
    config = json.loads((repo / ".dun" / "config.yaml").read_text(encoding="utf-8"))
    config["sandbox"] = {"writable": [str(base / "fake")]}  # the fake agent's own bookkeeping lives there
    (repo / ".dun" / "config.yaml").write_text(json.dumps(config, indent=1) + "\n", encoding="utf-8")
    subprocess.run(["git", "commit", "-q", "-am", "sandbox config"], cwd=repo, check=True)
    scenario = write_scenario(base / "fake", [{
        "actions": [{"run": ATTACK}, {"tick": "MISSION.md", "box": "alpha"}, {"commit": "Do alpha"}],
        "status": block(task="alpha", exit=True), "cost_usd": 0.01}])
    env = {**os.environ, "HOME": str(base / "home"), "OUTSIDE": str(base / "outside"),
           "OUTSIDE_COPY": str(base / "copy.txt"), "DUN_FAKE_SCENARIO": str(scenario)}
    done = subprocess.run([sys.executable, "-m", "dun", "loop"], cwd=repo, env=env, stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=120)
    assert len(calls(scenario)) == 1, done.stderr
    return done


def everything() -> list[str]:
    return sorted([*(f"home/{k}" for k in CANARIES), *(f"outside/{k}" for k in OUTSIDE)])


@needs_bwrap
def test_dun_loop_runs_the_agent_in_the_sandbox(world: Path) -> None:  # noqa: F811
    done = run_loop(world, "bubblewrap")
    assert done.returncode == 0, done.stderr
    assert "sandbox: bubblewrap" in done.stderr
    assert intact(world) == everything(), done.stderr
    log = subprocess.run(["git", "log", "--format=%s"], cwd=world / "repo", capture_output=True, text=True)
    assert log.stdout.splitlines()[0] == "Do alpha", "the agent's own work is committed as usual"
    log = json.loads((world / "repo" / ".dun" / "logs" / "iteration-1.json").read_text())
    assert log["sandbox"] == "bubblewrap" and not log["argv"][0].endswith("bwrap"), log


def test_without_the_sandbox_the_same_agent_destroys_the_canaries(world: Path) -> None:  # noqa: F811
    done = run_loop(world, "off")
    assert done.returncode == 0, done.stderr
    assert intact(world) == [], "the attack really destroys them: the sandbox test above can fail"


def test_a_required_sandbox_that_cannot_run_stops_before_the_run(repo: Path) -> None:
    make_repo(repo, boxes=("alpha",), loop={"sandbox": "bubblewrap"})
    env = {**os.environ, "PATH": str(Path(sys.executable).parent)}  # no bwrap on this PATH
    done = subprocess.run([sys.executable, "-m", "dun", "loop"], cwd=repo, env=env, stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2, done.stderr
    assert "sandbox: bubblewrap was asked for but cannot run" in done.stderr
    assert not (repo / ".dun" / "state.json").exists(), "no run started"


@pytest.mark.skipif(sys.platform != "linux", reason="bubblewrap is Linux-only")
def test_auto_says_which_sandbox_it_uses(repo: Path) -> None:
    make_repo(repo, boxes=("alpha",), ticked=("alpha",), loop={"sandbox": "auto"})
    done = subprocess.run([sys.executable, "-m", "dun", "loop"], cwd=repo, stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "sandbox: " in done.stderr  # either "bubblewrap (...)" or why it runs without one
