"""The review gate (dun/loop/review.py) under `dun loop`: the scripted fake agent works, and another fake agent,
run as the `command` reviewer with a scenario of its own, approves or rejects. A rejection is a `review_rejected`
discrepancy: the run does not complete on it, the next prompt says why, and the reviewers' cost is spent."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import git
from fake_agent import FAKE_COMMAND, block, calls, write_scenario
from loop_support import idle, make_repo, work

from dun.loop.review import Review, Verdict

DUN = [sys.executable, "-m", "dun"]


def verdict(word: str, reasons: str, cost: float = 0.02, **extra: Any) -> dict[str, Any]:
    return {"status": {"STATUS": "COMPLETE", "EXIT_SIGNAL": True, "VERDICT": word, "REASONS": reasons},
            "cost_usd": cost, **extra}


def gated(repo: Path, review: Path, boxes: tuple[str, ...] = ("alpha",), **gate: Any) -> Path:
    """A repository whose config has a gate of `command` reviewers playing the `review` scenario."""
    if not (repo / ".git").exists():
        repo.mkdir(parents=True, exist_ok=True)
        git(repo, "init", "-q", "-b", "main")
    make_repo(repo, boxes=boxes)
    config = json.loads((repo / ".dun" / "config.yaml").read_text(encoding="utf-8"))
    command = ["env", f"DUN_FAKE_SCENARIO={review}", *FAKE_COMMAND]
    config["gate"] = {"reviewers": ["command"], "commands": {"command": command}, **gate}
    (repo / ".dun" / "config.yaml").write_text(json.dumps(config, indent=1) + "\n", encoding="utf-8")
    git(repo, "commit", "-qam", "gate")
    return repo


def loop(repo: Path, scenario: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*DUN, "loop", *args], cwd=repo, env={**os.environ, "DUN_FAKE_SCENARIO": str(scenario)},
                          capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)


def log(repo: Path, n: int) -> dict[str, Any]:
    return json.loads((repo / ".dun" / "logs" / f"iteration-{n}.json").read_text(encoding="utf-8"))


def state(repo: Path) -> dict[str, Any]:
    return json.loads((repo / ".dun" / "state.json").read_text(encoding="utf-8"))


def test_an_approved_completion_completes_and_the_reviewer_is_paid_for(repo: Path, tmp_path: Path) -> None:
    review = write_scenario(tmp_path, [verdict("APPROVE", "the box is ticked and committed")], name="review")
    gated(repo, review)
    work_scenario = write_scenario(tmp_path, [work("alpha", cost=0.01, exit=True)])
    proc = loop(repo, work_scenario)
    assert proc.returncode == 0, proc.stderr
    st = state(repo)
    assert (st["stop_reason"], st["iteration"]) == ("complete", 1)
    assert st["cost_usd_total"] == pytest.approx(0.03)  # the agent's $0.01 and the reviewer's $0.02
    first = log(repo, 1)
    assert first["cost_usd"] == pytest.approx(0.03)
    gate = first["verification"]["review"]
    assert (gate["outcome"], gate["needed"], gate["cost_usd"]) == ("approved", 1, 0.02)
    assert gate["verdicts"] == [{"reviewer": "command", "verdict": "APPROVE", "reasons": "the box is ticked and "
                                 "committed", "cost_usd": 0.02, "exit_code": 0,
                                 "argv": ["env", f"DUN_FAKE_SCENARIO={review}", *FAKE_COMMAND]}]
    assert first["verification"]["discrepancies"] == []
    # what the reviewer read: the claim, the checks and the diff, in a scratch directory outside the repository
    [call] = calls(review)
    assert "TASK_COMPLETED: alpha" in call["prompt"] and "EXIT_SIGNAL: true" in call["prompt"]
    assert "mission-boxes" in call["prompt"] and "+- [x] alpha" in call["prompt"]
    assert not Path(call["cwd"]).is_relative_to(repo) and not Path(call["cwd"]).exists()
    assert (repo / ".dun" / "logs" / "iteration-1.review-1.prompt.md").read_text(encoding="utf-8") == call["prompt"]


def test_a_rejected_completion_is_a_discrepancy_shown_in_the_next_prompt(repo: Path, tmp_path: Path) -> None:
    review = write_scenario(tmp_path, [verdict("REJECT", "tests were deleted"),
                                       verdict("APPROVE", "fine now")], name="review")
    gated(repo, review)
    steps = [work("alpha", exit=True),
             {"status": block(task="alpha", exit=True, files=0), "cost_usd": 0.01}]
    proc = loop(repo, write_scenario(tmp_path, steps))
    assert proc.returncode == 0, proc.stderr
    st = state(repo)
    assert (st["stop_reason"], st["iteration"]) == ("complete", 2)  # not complete on the rejected iteration
    first = log(repo, 1)
    assert first["verification"]["review"]["outcome"] == "rejected"
    [found] = first["verification"]["discrepancies"]
    assert found == {"kind": "review_rejected",
                     "detail": "the review gate rejected this iteration (command: tests were deleted)"}
    assert first["decision"]["action"] == "continue"
    assert first["circuit"]["discrepancies"] == 1
    prompt = (repo / ".dun" / "logs" / "iteration-2.prompt.md").read_text(encoding="utf-8")
    assert "NOT VERIFIED: the review gate rejected this iteration (command: tests were deleted)" in prompt
    assert log(repo, 2)["verification"]["review"]["outcome"] == "approved"
    assert st["cost_usd_total"] == pytest.approx(0.01 * 2 + 0.02 * 2)


def test_a_reviewer_that_keeps_rejecting_opens_the_circuit(repo: Path, tmp_path: Path) -> None:
    review = write_scenario(tmp_path, [verdict("REJECT", "no", repeat=True)], name="review")
    gated(repo, review)
    steps = [work("alpha", exit=True), {"status": block(task="alpha", exit=True, files=0), "repeat": True}]
    proc = loop(repo, write_scenario(tmp_path, steps))
    assert proc.returncode == 1, proc.stderr
    st = state(repo)
    assert (st["stop_reason"], st["circuit"]["reason"]) == ("circuit_open", "untrustworthy")
    assert st["iteration"] == 3  # circuit.discrepancy_limit: 3 rejections in a row


def test_only_completions_are_reviewed_unless_every_iteration_is_asked_for(repo: Path, tmp_path: Path) -> None:
    review = write_scenario(tmp_path, [verdict("APPROVE", "ok", repeat=True)], name="review")
    gated(repo, review, boxes=("alpha", "beta"))
    steps = [idle(), work("alpha"), work("beta", exit=True)]
    assert loop(repo, write_scenario(tmp_path, steps)).returncode == 0
    assert [("review" in log(repo, n)["verification"]) for n in (1, 2, 3)] == [False, True, True]  # a tick, EXIT
    assert len(calls(review)) == 2

    other = tmp_path / "every"
    review = write_scenario(other, [verdict("APPROVE", "ok", repeat=True)], name="review")
    gated(other / "repo", review, boxes=("alpha", "beta"), when="every")
    assert loop(other / "repo", write_scenario(other, steps)).returncode == 0
    assert len(calls(review)) == 3


@pytest.mark.parametrize(("verdicts", "outcome"), [
    (["APPROVE", "REJECT", "APPROVE"], "approved"),
    (["REJECT", "APPROVE", "REJECT"], "rejected"),
])
def test_a_quorum_of_three_with_two_approvals(repo: Path, tmp_path: Path, verdicts: list[str], outcome: str) -> None:
    review = write_scenario(tmp_path, [verdict(v, f"reviewer {i}") for i, v in enumerate(verdicts)], name="review")
    gated(repo, review, reviewers=["command", "command", "command"], approvals=2)
    loop(repo, write_scenario(tmp_path, [work("alpha", exit=True), idle(repeat=True)]), "--max-iterations", "1")
    gate = log(repo, 1)["verification"]["review"]
    assert (gate["outcome"], gate["needed"]) == (outcome, 2)
    assert [v["verdict"] for v in gate["verdicts"]] == verdicts
    assert gate["cost_usd"] == pytest.approx(0.06)


def test_a_failed_reviewer_leaves_the_gate_undecided(repo: Path, tmp_path: Path) -> None:
    review = write_scenario(tmp_path, [{"error": {"kind": "crash", "stderr": "boom", "exit": 3}}], name="review")
    gated(repo, review)
    proc = loop(repo, write_scenario(tmp_path, [work("alpha", exit=True)]))
    assert proc.returncode == 0, proc.stderr  # no verdict is no rejection
    gate = log(repo, 1)["verification"]["review"]
    assert gate["outcome"] == "undecided" and gate["verdicts"][0]["verdict"] is None
    assert "exit 3" in gate["verdicts"][0]["reasons"]


def test_the_gate_is_checked_before_the_run(repo: Path, tmp_path: Path) -> None:
    gated(repo, tmp_path / "review.json", reviewers=["nosuch"])
    proc = loop(repo, tmp_path / "none.json")
    assert proc.returncode == 2 and "gate.reviewers: unknown agent 'nosuch'" in proc.stderr
    gated(tmp_path / "r2", tmp_path / "review.json", reviewers=["codex:o9"], commands={"codex": FAKE_COMMAND})
    proc = loop(tmp_path / "r2", tmp_path / "none.json")
    assert proc.returncode == 2 and "gate.reviewers: codex:o9: dun cannot price codex's usage" in proc.stderr
    gated(tmp_path / "r3", tmp_path / "review.json", reviewers=["command"], approvals=2)
    proc = loop(tmp_path / "r3", tmp_path / "none.json")
    assert proc.returncode == 2 and "gate.approvals: 2 approvals needed but only 1 reviewer(s)" in proc.stderr


@pytest.mark.parametrize(("words", "needed", "outcome"), [
    ([None], 1, "undecided"), (["REJECT"], 1, "rejected"), (["APPROVE", None], 2, "undecided"),
    (["REJECT", None], 2, "rejected"), (["APPROVE", "REJECT", None], 2, "undecided"),
    (["APPROVE", "APPROVE", "REJECT"], 2, "approved"),
])
def test_outcome_of_a_quorum(words: list[str | None], needed: int, outcome: str) -> None:
    assert Review([Verdict("r", w, "", None, 0) for w in words], needed).outcome == outcome
