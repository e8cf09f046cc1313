"""The loop's confinement with a real bubblewrap: an agent installed under /tmp (hidden by the sandbox's private
/tmp) still runs; an agent that cannot start inside is refused before iteration 1 with exit 2; the checks that
judge the agent run confined; the start line, REPORT.md and `dun doctor` say what is confined."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import git, write
from fake_agent import FAKE_AGENT, block, calls, write_scenario
from loop_support import make_repo

from dun.sandbox import probe

needs_bwrap = pytest.mark.skipif(probe("bwrap") is not None, reason=f"bubblewrap cannot run here: {probe('bwrap')}")


def _configure(repo: Path, tmp_path: Path, command: list[str], mode: str = "bubblewrap") -> None:
    make_repo(repo, boxes=("alpha",), loop={"sandbox": mode, "max_iterations": 2})
    config = json.loads((repo / ".dun" / "config.yaml").read_text(encoding="utf-8"))
    config["agent"]["command"] = command
    config["sandbox"] = {"writable": [str(tmp_path / "fake")]}
    write(repo, ".dun/config.yaml", json.dumps(config, indent=1) + "\n")
    write(repo, ".dun/plugins/outside.yaml",
          "id: outside\nchecks:\n  - id: writes-outside\n    type: command\n"
          f"    command: echo check > {tmp_path / 'outside' / 'from-check'}; echo ran > check-ran.txt\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "confined")


def _loop(repo: Path, scenario: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **({"DUN_FAKE_SCENARIO": str(scenario)} if scenario else {})}
    return subprocess.run([sys.executable, "-m", "dun", "loop"], cwd=repo, env=env, stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=180)


@needs_bwrap
def test_an_agent_installed_under_tmp_runs_and_the_checks_are_confined(repo: Path, tmp_path: Path) -> None:
    assert str(tmp_path).startswith("/tmp/"), "the point: the sandbox's /tmp is private"
    installed = tmp_path / "opt" / "agent.py"
    installed.parent.mkdir()
    shutil.copyfile(FAKE_AGENT, installed)
    (tmp_path / "outside").mkdir()
    _configure(repo, tmp_path, [sys.executable, str(installed)])
    scenario = write_scenario(tmp_path / "fake", [
        {"actions": [{"tick": "MISSION.md", "box": "alpha"}, {"commit": "Do alpha"}],
         "status": block(task="alpha", exit=True), "cost_usd": 0.01}])
    done = _loop(repo, scenario)
    assert len(calls(scenario)) >= 1, done.stderr
    assert "the agent, and the checks and verify: commands that judge it, are confined" in done.stderr
    assert (repo / "check-ran.txt").read_text() == "ran\n", "the check ran"
    assert not (tmp_path / "outside" / "from-check").exists(), "confined: it could not write outside"
    report = (repo / ".dun" / "REPORT.md").read_text(encoding="utf-8")
    assert "- protection: bubblewrap sandbox" in report


@needs_bwrap
@pytest.mark.skipif(not os.path.isdir("/dev/shm"), reason="no /dev/shm here")
def test_an_agent_that_cannot_start_in_the_sandbox_is_refused_before_iteration_1(repo: Path,
                                                                                  tmp_path: Path) -> None:
    """/dev is fresh inside the sandbox: an agent installed under /dev/shm runs on the host, not inside."""
    agent = Path("/dev/shm") / f"dun-test-agent-{os.getpid()}"
    agent.write_text("#!/bin/sh\necho hello\n", encoding="utf-8")
    agent.chmod(0o755)
    try:
        _configure(repo, tmp_path, [str(agent)])
        done = _loop(repo)
        doctor = subprocess.run([sys.executable, "-m", "dun", "doctor"], cwd=repo, capture_output=True, text=True,
                                timeout=120)
    finally:
        agent.unlink()
    assert done.returncode == 2, done.stderr
    assert f"agent preflight: {agent} cannot run in the sandbox: {agent}: not found" in done.stderr
    assert "Traceback" not in done.stderr
    assert not (repo / ".dun" / "logs" / "iteration-1.json").exists(), "no iteration was spent"
    assert "agent preflight:" in doctor.stdout and doctor.returncode != 0, doctor.stdout


def test_unconfined_runs_say_so_in_the_start_line_and_the_report(repo: Path, tmp_path: Path) -> None:
    (tmp_path / "outside").mkdir()
    _configure(repo, tmp_path, [sys.executable, str(FAKE_AGENT)], mode="off")
    scenario = write_scenario(tmp_path / "fake", [
        {"actions": [{"tick": "MISSION.md", "box": "alpha"}, {"commit": "Do alpha"}],
         "status": block(task="alpha", exit=True), "cost_usd": 0.01}])
    done = _loop(repo, scenario)
    assert "sandbox: off (loop.sandbox is off: the agent and the checks run unconfined" in done.stderr
    assert (tmp_path / "outside" / "from-check").exists(), "unconfined: the same check writes outside"
    log = json.loads((repo / ".dun" / "logs" / "iteration-1.json").read_text(encoding="utf-8"))
    assert log["sandbox"] == "off" and "unconfined" in log["protection"]
    assert "- protection: **no sandbox** (loop.sandbox is off" in (repo / ".dun" / "REPORT.md").read_text()
