"""Honest nights: an agent that works honestly, with everything a real night has (crashes, a rate limit, an answer
without a status block, a timeout, work in progress committed, boxes it adds, claims of a check that still lists
other boxes, confirmations, an operator's committed change between runs), must end for the right reason and leave
no alarm: zero discrepancies, zero review items, at most one notification per event kind, nothing of dun's in
`git status`. Each night is `dun loop` as a subprocess over a real git repository with the scripted fake agent.

The dishonest counterparts are tests/trust/test_trust.py (each kind of discrepancy, committed on purpose).
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from conftest import git, write
from fake_agent import block, write_scenario
from loop_support import make_repo

DUN = [sys.executable, "-m", "dun"]
BOXES = ("alpha", "beta", "gamma")
GREET = "id: x\nchecks:\n  - id: greet\n    type: command\n    command: test -f greet.txt\n"
SINK = "import os, sys\nopen(sys.argv[1], 'a').write(os.environ['DUN_EVENT'] + '\\n')\n"


def do(box: str, claim: str | None = None, commit: bool = True, exit: bool = False, files: int | None = 2,
       status: str = "COMPLETE", **extra: Any) -> dict[str, Any]:
    """Honest work on one box: a file for it, the box ticked, committed (`git add -A`, as agents do)."""
    actions: list[dict[str, Any]] = [{"write": f"{box}.txt", "content": f"{box}\n"}, {"tick": "MISSION.md", "box": box}]
    if commit:
        actions.append({"commit": f"Do {box}"})
    return {"actions": actions, "status": block(task=box if claim is None else claim, status=status, files=files,
                                                exit=exit), "cost_usd": 0.11, **extra}


def confirm(exit: bool = False) -> dict[str, Any]:
    """A confirmation: every check passes, the agent looks and answers, changing nothing."""
    return {"status": block(task="checked the mission", status="COMPLETE", files=0, exit=exit), "cost_usd": 0.02}


CRASH = {"error": {"kind": "crash", "exit": 1, "stderr": "agent: connection reset by peer\n"}}
RATE = {"error": {"kind": "rate_limit"}}
LOOK = {"status": block(task="read the code", status="IN_PROGRESS", files=0), "cost_usd": 0.03}
WIP = {"actions": [{"write": "beta.txt", "content": "half of beta\n"}, {"commit": "WIP beta"}],
       "status": block(task="beta", status="IN_PROGRESS", files=1), "cost_usd": 0.05}
PROSE = {"actions": [{"write": "beta.txt", "content": "beta\n"}, {"tick": "MISSION.md", "box": "beta"},
                     {"commit": "Do beta"}], "status": None, "text": "Done with beta, moving on.", "cost_usd": 0.1}
HANG = {"hang": True, "status": block()}

# name -> (steps, repo options, expected iterations)
NIGHTS: dict[str, tuple[list[dict[str, Any]], dict[str, Any], int]] = {
    "one-box-each": ([do("alpha"), do("beta"), do("gamma", exit=True)], {}, 3),
    "claims-the-check": ([do(b, claim="mission-boxes", exit=b == "gamma") for b in BOXES], {}, 3),
    "claims-the-check-then-confirms": ([do(b, claim="mission-boxes") for b in BOXES] + [confirm(), confirm()], {},
                                       5),
    "claims-the-line": ([do(b, claim=f"mission-boxes@MISSION.md:{n}", exit=b == "gamma")
                         for n, b in enumerate(BOXES, start=3)], {}, 3),
    "crash-once": ([do("alpha"), CRASH, do("beta"), do("gamma", exit=True)], {}, 4),
    "crash-twice-in-a-row": ([do("alpha"), CRASH, CRASH, do("beta"), do("gamma", exit=True)], {}, 5),
    "rate-limit": ([do("alpha"), RATE, do("beta"), do("gamma", exit=True)], {"loop": {"usage_limit_wait_min": 0.01}},
                   4),
    "answer-without-block": ([do("alpha"), PROSE, do("gamma", exit=True)], {}, 3),
    "wip-commit": ([do("alpha"), WIP, do("beta"), do("gamma", exit=True)], {}, 4),
    "looks-around-first": ([LOOK, do("alpha"), do("beta"), do("gamma", exit=True)], {}, 4),
    "timeout-then-finish": ([do("alpha"), HANG, do("beta"), do("gamma", exit=True)],
                            {"loop": {"iteration_timeout_s": 1.5, "kill_grace_s": 0.2}}, 4),
    "uncommitted-then-committed": ([do("alpha", commit=False), {"actions": [{"commit": "Do alpha"}],
                                                                "status": block(task="alpha", files=0),
                                                                "cost_usd": 0.01},
                                    do("beta"), do("gamma", exit=True)], {}, 4),
    "plans-more-boxes": ([{"actions": [{"append": "MISSION.md", "content": "- [ ] delta\n"}, {"commit": "Plan delta"}],
                           "status": block(task="planning", status="IN_PROGRESS", files=1), "cost_usd": 0.05},
                          do("alpha"), do("beta"), do("gamma"), do("delta", exit=True)], {}, 5),
    "two-boxes-at-once": ([{"actions": [{"tick": "MISSION.md", "box": "alpha"}, {"tick": "MISSION.md", "box": "beta"},
                                        {"write": "ab.txt", "content": "ab\n"}, {"commit": "alpha and beta"}],
                            "status": block(task="mission-boxes", files=2), "cost_usd": 0.2},
                           do("gamma", exit=True)], {}, 2),
    "confirmation-crashes-then-answers": ([do(b, claim="mission-boxes") for b in BOXES] + [CRASH, confirm(),
                                                                                           confirm()], {}, 6),
    "confirmation-rate-limited": ([do(b) for b in BOXES] + [RATE, confirm(exit=True)],
                                  {"loop": {"usage_limit_wait_min": 0.01}}, 5),
    "budget-with-default-per-iteration-cap": ([do("alpha"), do("beta"), do("gamma", exit=True)],
                                              {"loop": {"max_budget_usd": 5.0}}, 3),
    "tight-budget-that-fits": ([do("alpha"), do("beta"), do("gamma", exit=True)],
                               {"loop": {"max_budget_usd": 0.35, "budget_per_iteration_usd": 0.2}}, 3),
    "files-modified-unknown": ([do(b, files=None, exit=b == "gamma") for b in BOXES], {}, 3),
    "two-commits-in-one-iteration": ([{"actions": [{"write": "alpha.txt", "content": "a\n"}, {"commit": "alpha code"},
                                                   {"tick": "MISSION.md", "box": "alpha"}, {"commit": "tick alpha"}],
                                       "status": block(task="alpha", files=2), "cost_usd": 0.1},
                                      do("beta"), do("gamma", exit=True)], {}, 3),
    "a-check-made-to-pass": ([{"actions": [{"write": "greet.txt", "content": "hello\n"},
                                           {"tick": "MISSION.md", "box": "greet"}, {"commit": "Greet"}],
                               "status": block(task="greet", files=2), "cost_usd": 0.1},
                              do("alpha"), do("beta", exit=True)],
                             {"boxes": ("make `greet` pass", "alpha", "beta"), "plugin": GREET}, 3),
    "verify-commands-hold": ([do("alpha"), do("beta"), do("gamma", exit=True)], {"verify": True}, 3),
    "edits-the-mission-prose": ([{"actions": [{"append": "MISSION.md", "content": "\nNotes: alpha first.\n"},
                                              {"write": "alpha.txt", "content": "a\n"},
                                              {"tick": "MISSION.md", "box": "alpha"}, {"commit": "alpha"}],
                                  "status": block(task="alpha", files=2), "cost_usd": 0.1},
                                 do("beta"), do("gamma", exit=True)], {}, 3),
    "a-blocked-moment": ([do("alpha"), {"status": block(task="beta", status="BLOCKED", files=0), "cost_usd": 0.02},
                          do("beta"), do("gamma", exit=True)], {}, 4),
}


def dun(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*DUN, *args], cwd=repo, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=120)


def night_repo(repo: Path, tmp_path: Path, options: dict[str, Any]) -> Path:
    boxes = options.get("boxes", BOXES)
    (tmp_path / "sink.py").write_text(SINK, encoding="utf-8")
    make_repo(repo, boxes=boxes, loop={"max_iterations": 12, **options.get("loop", {})},
              circuit={"half_open_after": 2, "no_progress_limit": 3})
    config = json.loads((repo / ".dun/config.yaml").read_text(encoding="utf-8"))
    config["notify"] = {"command": [sys.executable, str(tmp_path / "sink.py"), str(tmp_path / "events.txt")]}
    write(repo, ".dun/config.yaml", json.dumps(config, indent=1) + "\n")
    if options.get("plugin"):
        write(repo, ".dun/plugins/x.yaml", options["plugin"])
    if options.get("verify"):
        write(repo, "MISSION.md", "# Mission\n\n" + "".join(f"- [ ] {b}\n  verify: test -f {b}.txt\n" for b in boxes))
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "night setup")
    return repo


def assert_no_alarm(repo: Path, tmp_path: Path) -> None:
    logs = sorted((repo / ".dun" / "logs").glob("iteration-*.json"), key=lambda p: int(p.stem.split("-")[1]))
    found = {p.stem: (json.loads(p.read_text())["verification"] or {}).get("discrepancies") for p in logs}
    assert all(not d for d in found.values()), found
    review = dun(repo, "review")
    assert review.returncode == 0 and review.stdout.startswith("no review items"), review.stdout
    events = Counter((tmp_path / "events.txt").read_text().split()) if (tmp_path / "events.txt").exists() else {}
    assert all(n <= 1 for n in events.values()) and not {"tampering", "deficiency"} & set(events), events
    assert not [line for line in git(repo, "status", "--porcelain", "--untracked-files=all").splitlines()
                if ".dun/" in line], "dun's own files show in git status"


@pytest.mark.parametrize("name", list(NIGHTS))
def test_an_honest_night_ends_complete_without_an_alarm(name: str, repo: Path, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    steps, options, iterations = NIGHTS[name]
    night_repo(repo, tmp_path, options)
    monkeypatch.setenv("DUN_FAKE_SCENARIO", str(write_scenario(tmp_path / "sc", steps)))
    done = dun(repo, "loop")
    assert "Traceback" not in done.stderr and "scenario error" not in done.stderr, done.stderr
    state = json.loads((repo / ".dun/state.json").read_text())
    assert (done.returncode, state["stop_reason"], state["iteration"]) == (0, "complete", iterations), done.stderr
    assert state["circuit"]["state"] == "CLOSED" and state["circuit"]["discrepancies"] == 0
    assert "- [ ]" not in (repo / "MISSION.md").read_text()
    assert "dun" not in git(repo, "log", "--format=%an").split()  # dun never had to repair anything
    assert_no_alarm(repo, tmp_path)


def test_an_operators_committed_change_between_runs_is_kept(repo: Path, tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    night_repo(repo, tmp_path, {"loop": {"max_iterations": 1}})
    monkeypatch.setenv("DUN_FAKE_SCENARIO", str(write_scenario(tmp_path / "sc", [do(b, exit=b == "gamma")
                                                                                 for b in BOXES])))
    assert dun(repo, "loop").returncode == 1  # max_iterations: the operator raises it and commits
    config = json.loads((repo / ".dun/config.yaml").read_text())
    config["loop"]["max_iterations"] = 6
    write(repo, ".dun/config.yaml", json.dumps(config, indent=1) + "\n")
    git(repo, "commit", "-qam", "Let the loop run longer")
    done = dun(repo, "loop")
    assert done.returncode == 0, done.stderr
    assert "changed since the last run, taken as the new baseline: .dun/config.yaml" in done.stderr
    assert json.loads((repo / ".dun/config.yaml").read_text())["loop"]["max_iterations"] == 6
    assert git(repo, "log", "-1", "--format=%an").strip() == "fake-agent"
    assert_no_alarm(repo, tmp_path)


def test_a_night_whose_agent_never_answers_the_confirmation_is_not_complete(repo: Path, tmp_path: Path,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    night_repo(repo, tmp_path, {})
    steps = [do(b, claim="mission-boxes") for b in BOXES] + [{**CRASH, "repeat": True}]
    monkeypatch.setenv("DUN_FAKE_SCENARIO", str(write_scenario(tmp_path / "sc", steps)))
    done = dun(repo, "loop")
    state = json.loads((repo / ".dun/state.json").read_text())
    assert (done.returncode, state["stop_reason"], state["iteration"]) == (5, "unconfirmed", 5), done.stderr
    assert "every check passes, but 2 confirmation call(s) in a row gave no answer" in state["stop_detail"]
    report = (repo / ".dun/REPORT.md").read_text()
    assert "stop reason: **unconfirmed**" in report and "to go on: check that the agent runs" in report
