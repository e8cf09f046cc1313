"""The messy night, with a scripted command agent (the fake agent): a small Python project, five mission boxes and a
failing test; the agent works honestly, crashes once, hits a rate limit, makes one false claim, answers once without
a status block, commits work in progress, deletes a box, hangs past the timeout, then finishes, committing with
`git add -A` as agents do. The run must end `complete` (exit 0) with every box ticked, discrepancies only on the
lying and the box-deleting iterations, nothing of dun's in `git status`; and a second run after the operator
commits a config change (and a new box) keeps that change.

tests/e2e/test_messy_night_e2e.py plays the same night with the real Claude Code CLI.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import git, write
from fake_agent import FAKE_COMMAND, block, write_scenario

DUN = [sys.executable, "-m", "dun"]
TASKS = ("one", "two", "three", "four", "five")
MISSION = "# Mission\n\nA greeter that greets.\n\n" + "".join(f"- [ ] Task {t}\n" for t in TASKS)
LINE = {t: 5 + i for i, t in enumerate(TASKS)}  # MISSION's head is four lines
TESTS = (f"id: project\nchecks:\n  - id: unit-tests\n    type: command\n"
         f"    command: {sys.executable} -m pytest -q -p no:cacheprovider tests\n")
APP_BROKEN = "def greet(name):\n    return 'bye ' + name\n"
APP_FIXED = "def greet(name):\n    return 'hello ' + name\n"
TEST = "from app import greet\n\n\ndef test_greet():\n    assert greet('you') == 'hello you'\n"


def tick(task: str) -> dict[str, Any]:
    return {"tick": "MISSION.md", "box": f"Task {task}"}


def commit(message: str) -> dict[str, Any]:
    return {"commit": message}  # the fake agent commits with `git add -A`


def night() -> list[dict[str, Any]]:
    return [
        # 1: fixes the failing test and ticks one; claims the boxes' check, which still lists four others
        {"actions": [{"write": "app.py", "content": APP_FIXED}, tick("one"), commit("Fix greet, task one")],
         "status": block(task="mission-boxes", files=2), "cost_usd": 0.11},
        # 2: crashes
        {"error": {"kind": "crash", "exit": 1, "stderr": "agent: connection reset by peer\n"}},
        # 3: a rate limit
        {"error": {"kind": "rate_limit"}},
        # 4: lies: claims task three, writes notes only
        {"actions": [{"write": "NOTES.md", "content": "thinking about three\n"}, commit("notes")],
         "status": block(task=f"mission-boxes@MISSION.md:{LINE['three']}", files=1), "cost_usd": 0.09},
        # 5: honest work, but no status block
        {"actions": [{"write": "two.txt", "content": "two\n"}, tick("two"), commit("Task two")],
         "status": None, "text": "Task two is done.", "cost_usd": 0.1},
        # 6: work in progress, committed
        {"actions": [{"write": "three.txt", "content": "half\n"}, commit("WIP three")],
         "status": block(task="Task three", status="IN_PROGRESS", files=1), "cost_usd": 0.08},
        # 7: finishes three, and deletes box five
        {"actions": [{"write": "three.txt", "content": "three\n"}, tick("three"),
                     {"run": "sed -i '/Task five/d' MISSION.md", "check": True}, commit("Task three")],
         "status": block(task="Task three", files=2), "cost_usd": 0.12},
        # 8: hangs past the timeout (after dun's restore commit)
        {"hang": True, "status": block()},
        # 9, 10: finishes
        {"actions": [{"write": "four.txt", "content": "four\n"}, tick("four"), commit("Task four")],
         "status": block(task="Task four", files=2), "cost_usd": 0.1},
        {"actions": [{"write": "five.txt", "content": "five\n"}, tick("five"), commit("Task five")],
         "status": block(task="Task five", files=2, exit=True), "cost_usd": 0.1},
        # second run: the box the operator added
        {"actions": [{"write": "six.txt", "content": "six\n"}, {"tick": "MISSION.md", "box": "Task six"},
                     commit("Task six")], "status": block(task="Task six", files=2, exit=True), "cost_usd": 0.1},
    ]


def dun(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*DUN, *args], cwd=repo, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=300)


def logs(repo: Path) -> list[dict[str, Any]]:
    paths = sorted((repo / ".dun" / "logs").glob("iteration-*.json"), key=lambda p: int(p.stem.split("-")[1]))
    return [json.loads(p.read_text()) for p in paths]


def kinds(log: dict[str, Any]) -> list[str]:
    return [d["kind"] for d in (log.get("verification") or {}).get("discrepancies") or []]


def test_the_messy_night_ends_complete_and_blames_only_the_lies(repo: Path, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    config = {"plugins": {"disabled": ["python"]},
              "agent": {"name": "command", "command": FAKE_COMMAND, "prompt_via": "stdin"},
              "loop": {"max_budget_usd": 5, "cooldown_s": 0, "iteration_timeout_s": 2, "kill_grace_s": 0.3,
                       "usage_limit_wait_min": 0.01, "sandbox": "off"}}
    write(repo, ".dun/config.yaml", json.dumps(config, indent=1) + "\n")
    write(repo, ".dun/plugins/project.yaml", TESTS)
    write(repo, "MISSION.md", MISSION)
    write(repo, "app.py", APP_BROKEN)
    write(repo, "tests/test_app.py", TEST)
    write(repo, ".gitignore", "__pycache__/\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "a greeter with a failing test")
    monkeypatch.setenv("DUN_FAKE_SCENARIO", str(write_scenario(tmp_path / "sc", night())))

    done = dun(repo, "loop")
    state = json.loads((repo / ".dun/state.json").read_text())
    assert (done.returncode, state["stop_reason"], state["iteration"]) == (0, "complete", 10), done.stderr
    night_logs = logs(repo)
    assert {log["iteration"]: kinds(log) for log in night_logs if kinds(log)} == {
        4: ["unverified_completion"], 7: ["task_tampered"]}
    assert night_logs[1]["error_kind"] == "network" and night_logs[2]["error_kind"] == "rate_limit"
    assert night_logs[7]["timed_out"] is True and night_logs[7]["cost_estimated"] is True
    assert night_logs[7]["cost_usd"] == pytest.approx(0.1)  # a typical iteration of the night, not the $5 cap
    assert "- [ ]" not in (repo / "MISSION.md").read_text() and (repo / "MISSION.md").read_text().count("[x]") == 5
    assert git(repo, "log", "--format=%an %s").count("dun dun: restore") == 1  # box five came back, once
    assert not [line for line in git(repo, "status", "--porcelain", "--untracked-files=all").splitlines()
                if ".dun/" in line]
    assert state["circuit"]["state"] == "CLOSED"
    report = (repo / ".dun/REPORT.md").read_text()
    assert "stop reason: **complete**" in report and "of $5 budget" in report
    review = dun(repo, "review")  # one lie and one deleted box are no pattern a person must look at
    assert review.returncode == 0 and review.stdout.startswith("no review items"), review.stdout

    # the operator lets the next run go further and adds a box, committed between the runs
    config["loop"]["max_iterations"] = 20
    write(repo, ".dun/config.yaml", json.dumps(config, indent=1) + "\n")
    write(repo, "MISSION.md", (repo / "MISSION.md").read_text() + "- [ ] Task six\n")
    git(repo, "commit", "-qam", "Operator: a sixth task, a longer leash")
    second = dun(repo, "loop")
    assert second.returncode == 0, second.stderr
    assert "changed since the last run, taken as the new baseline: .dun/config.yaml, MISSION.md" in second.stderr
    state = json.loads((repo / ".dun/state.json").read_text())
    assert (state["stop_reason"], state["iteration"]) == ("complete", 1)
    assert [kinds(log) for log in logs(repo)] == [[]]
    assert json.loads((repo / ".dun/config.yaml").read_text())["loop"]["max_iterations"] == 20
    assert git(repo, "log", "-1", "--format=%an").strip() == "fake-agent"
