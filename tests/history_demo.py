#!/usr/bin/env python3
"""A short scripted night for `make demo` and the screenshot in docs/: two `dun loop` runs of the fake agent
(tests/fake_agent.py) in a fresh git repository, then `dun report` of both.

    python tests/history_demo.py DIRECTORY      (prints where the report is)

The first run has an honest iteration, an unverified claim, a crash, a rate-limit wait, a guard denial and a
box the agent keeps circling at a rising cost; the second run finishes the mission.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

from fake_agent import FAKE_COMMAND, block, write_scenario  # next to this script, so on sys.path

DUN = [sys.executable, "-m", "dun"]
BOXES = ("parse the input", "render the table", "cache results", "command line", "write the docs")
IDENTITY = {"GIT_AUTHOR_NAME": "dun-demo", "GIT_AUTHOR_EMAIL": "demo@example.invalid",
            "GIT_COMMITTER_NAME": "dun-demo", "GIT_COMMITTER_EMAIL": "demo@example.invalid"}


def work(box: str, cost: float, exit: bool = False) -> dict[str, object]:
    return {"actions": [{"tick": "MISSION.md", "box": box}, {"commit": f"Do: {box}"}],
            "status": block(task=box, exit=exit, files=1), "cost_usd": cost}


def circling(cost: float) -> dict[str, object]:
    return {"status": block(task="cache results", status="IN_PROGRESS", files=0), "cost_usd": cost}


def guard_probe(repo: Path) -> str:
    """A shell action that asks the real guard about a force push (it is denied and logged)."""
    event = json.dumps({"hook_event_name": "PreToolUse", "tool_name": "Bash", "cwd": str(repo),
                        "tool_input": {"command": "git push --force origin main"}})
    return f"printf '%s' {shlex.quote(event)} | {shlex.quote(sys.executable)} -m dun guard >/dev/null"


def steps(repo: Path) -> list[dict[str, object]]:
    lie = {"status": block(task="mission-boxes", status="COMPLETE", files=3), "cost_usd": 0.06}
    crash = {"error": {"kind": "crash", "stderr": "agent: segmentation fault\n", "exit": 139}}
    limited = {"error": {"kind": "rate_limit", "message": "rate limited: too many requests"}}
    denied = {**work("render the table", 0.05), "actions": [{"run": guard_probe(repo)},
                                                            {"tick": "MISSION.md", "box": "render the table"},
                                                            {"commit": "Do: render the table"}]}
    return [work("parse the input", 0.04), lie, crash, limited, denied, circling(0.04), circling(0.05),
            circling(0.31), work("cache results", 0.05), work("command line", 0.04),
            work("write the docs", 0.05, exit=True)]


def main(directory: str) -> int:
    repo = Path(directory).resolve() / "repo"
    repo.mkdir(parents=True)
    env = {**os.environ, **IDENTITY}
    config = {"plugins": {"disabled": ["python"]},
              "agent": {"name": "command", "command": FAKE_COMMAND, "prompt_via": "stdin"},
              "loop": {"cooldown_s": 0, "max_budget_usd": 1.0, "budget_per_iteration_usd": 0.1, "sandbox": "off",
                       "usage_limit_wait_min": 0.02},
              "circuit": {"no_progress_limit": 20, "half_open_after": 10, "discrepancy_limit": 10}}
    (repo / ".dun").mkdir()
    (repo / ".dun" / "config.yaml").write_text(json.dumps(config, indent=1) + "\n", encoding="utf-8")
    (repo / "MISSION.md").write_text("# Mission\n\n" + "".join(f"- [ ] {b}\n" for b in BOXES), encoding="utf-8")
    for argv in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-qm", "mission"]):
        subprocess.run(["git", *argv], cwd=repo, env=env, check=True)
    scenario = write_scenario(repo.parent / "fake-agent", steps(repo))
    env["DUN_FAKE_SCENARIO"] = str(scenario)
    for args in (["--max-iterations", "8"], ["--fresh"]):
        subprocess.run([*DUN, "loop", *args], cwd=repo, env=env, stdin=subprocess.DEVNULL, check=False)
    subprocess.run([*DUN, "review"], cwd=repo, env=env, check=False)
    return subprocess.run([*DUN, "report", "--runs", "2"], cwd=repo, env=env, check=False).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]) if len(sys.argv) == 2 else 2)
