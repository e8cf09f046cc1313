"""The loop's live record (`.dun/live.json`) while a real `dun loop` runs the scripted agent, and what `dun logs` and
`dun status` say about a loop that is running (here, or in another work tree)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pexpect
import pytest
from fake_agent import block, write_scenario
from loop_support import make_repo, until, work

DUN = [sys.executable, "-m", "dun"]


def dun(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*DUN, *args], cwd=cwd, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=60)


def live(root: Path) -> dict[str, Any] | None:
    try:
        return json.loads((root / ".dun" / "live.json").read_text(encoding="utf-8"))  # type: ignore[no-any-return]
    except (FileNotFoundError, ValueError):
        return None


def held(gate: Path, box: str) -> dict[str, Any]:
    """A step that says something, waits until the test creates `gate`, then does `box`."""
    return {"format": "claude-stream-json",
            "actions": [{"say": f"starting on {box}"}, {"wait_for": str(gate)}, {"tick": "MISSION.md", "box": box},
                        {"commit": f"Do {box}"}],
            "status": block(task=box), "cost_usd": 0.25}


@pytest.fixture
def procs() -> Iterator[list[subprocess.Popen[bytes]]]:
    started: list[subprocess.Popen[bytes]] = []
    yield started
    for proc in started:
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=10)


def start_loop(cwd: Path, scenario: Path, procs: list[subprocess.Popen[bytes]], *args: str,
               stderr: Path | None = None) -> None:
    env = {**os.environ, "DUN_FAKE_SCENARIO": str(scenario)}
    with (stderr or Path(os.devnull)).open("wb") as err:
        procs.append(subprocess.Popen([*DUN, "loop", *args], cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                                      stdout=subprocess.DEVNULL, stderr=err))


def test_the_live_record_follows_the_loop_and_logs_says_running(repo: Path, tmp_path: Path,
                                                                procs: list[subprocess.Popen[bytes]]) -> None:
    make_repo(repo, boxes=("alpha", "beta"), loop={"max_budget_usd": 5})
    gate = tmp_path / "go-1"
    sc = write_scenario(tmp_path / "sc", [held(gate, "alpha"), work("beta", exit=True)])
    start_loop(repo, sc, procs)
    record = until(lambda: (r := live(repo)) and r["phase"] == "agent" and r, "the agent phase")
    assert record["iteration"] == 1 and record["in_progress"] == 1 and record["out_file"] == "iteration-1.out"
    assert (record["boxes_done"], record["boxes_total"]) == (0, 2)
    assert record["budget_usd"] == 5 and record["call_started"] is not None
    assert record["pid"] == procs[0].pid
    listing = dun(repo, "logs").stdout
    assert "running: the agent has been working for" in listing, listing
    assert "exit None" not in listing and "no progress" not in listing
    gate.touch()
    assert procs[0].wait(timeout=60) == 0
    record = live(repo)
    assert record is not None
    assert record["phase"] == "stopped" and record["stop_reason"] == "complete"
    assert (record["boxes_done"], record["boxes_total"]) == (2, 2)
    assert record["in_progress"] is None and record["cost_usd"] == pytest.approx(0.26)
    assert [(d["iteration"], d["action"], d["reason"]) for d in record["decisions"]] == [
        (1, "continue", "work_remains"), (2, "stop", "complete")]


def test_a_killed_loops_open_iteration_is_unfinished_not_running(repo: Path, tmp_path: Path,
                                                                 procs: list[subprocess.Popen[bytes]]) -> None:
    make_repo(repo, boxes=("alpha",))
    sc = write_scenario(tmp_path / "sc", [held(tmp_path / "never", "alpha")])
    start_loop(repo, sc, procs)
    until(lambda: (r := live(repo)) and r["phase"] == "agent", "the agent phase")
    procs[0].kill()
    procs[0].wait(timeout=10)
    listing = dun(repo, "logs").stdout
    assert "unfinished: its loop is not running" in listing, listing


def test_status_in_the_main_tree_names_the_loops_running_in_worktrees(repo: Path, tmp_path: Path,
                                                                      procs: list[subprocess.Popen[bytes]]) -> None:
    make_repo(repo, boxes=("alpha",))
    sc = write_scenario(tmp_path / "sc", [held(tmp_path / "never", "alpha")])
    start_loop(repo, sc, procs, "--worktree", "w1", stderr=tmp_path / "w1.stderr")
    wt = repo / ".dun" / "worktrees" / "w1"
    until(lambda: (r := live(wt)) and r["phase"] == "agent", "the worktree loop's agent phase")
    said = until(lambda: (text := (tmp_path / "w1.stderr").read_text(encoding="utf-8")) and "agent starts" in text
                 and text, "the worktree loop's line")
    assert "dun loop [w1]: iteration 1: the agent starts (boxes 0/1, $0.0000 of $50)" in said, said
    assert all(line.startswith("dun loop [w1]: ") for line in said.splitlines()), said
    status = dun(repo, "status")
    assert "no loop has run here yet" in status.stdout
    assert "1 loop(s) running in other work trees of this repository: w1 (iteration 1, pid " in status.stdout
    others = json.loads(dun(repo, "status", "--json").stdout)["other_loops"]
    assert [(o["name"], o["status"]) for o in others] == [("w1", "running")]


def test_loop_on_a_terminal_shows_the_agents_elapsed_time_in_place(repo: Path, tmp_path: Path) -> None:
    make_repo(repo, boxes=("alpha",), loop={"max_budget_usd": 2})
    gate = tmp_path / "go"
    sc = write_scenario(tmp_path / "sc", [{**held(gate, "alpha"), "status": block(task="alpha", exit=True)}])
    env = {**os.environ, "DUN_FAKE_SCENARIO": str(sc), "TERM": "xterm"}
    loop = pexpect.spawn(DUN[0], [*DUN[1:], "loop"], cwd=str(repo), env=env, timeout=30, encoding="utf-8")
    try:
        loop.expect_exact("dun loop: iteration 1: the agent starts (boxes 0/1, $0.0000 of $2)")
        loop.expect_exact("\r\x1b[Kdun loop: iteration 1: agent working 1s (boxes 0/1, $0.0000 of $2)")
        gate.touch()
        loop.expect_exact("\r\x1b[Kdun loop: iteration 1: command exit 0")
        loop.expect(pexpect.EOF)
    finally:
        loop.close(force=True)
    assert loop.exitstatus == 0


def test_each_step_of_the_shell_driver_leaves_its_live_record_written(repo: Path, tmp_path: Path) -> None:
    """`dun respond --decide` runs one step per process: the record is written before the process exits."""
    make_repo(repo, boxes=("alpha", "beta"))
    before = dun(repo, "respond", "--decide", "--before")
    assert before.stdout.strip() == "go 1", before.stderr
    record = live(repo)
    assert record is not None and (record["phase"], record["in_progress"]) == ("agent", 1)
    assert (record["boxes_done"], record["boxes_total"]) == (0, 2)


def test_no_progress_line_in_place_while_another_loop_of_the_repository_runs(
        repo: Path, tmp_path: Path, procs: list[subprocess.Popen[bytes]]) -> None:
    """Two loops sharing a terminal would write their in-place lines over each other: with another loop running,
    each line is whole and labelled."""
    make_repo(repo, boxes=("alpha",))
    start_loop(repo, write_scenario(tmp_path / "sc1", [held(tmp_path / "never-1", "alpha")]), procs,
               "--worktree", "w1")
    until(lambda: (r := live(repo / ".dun" / "worktrees" / "w1")) and r["phase"] == "agent", "loop w1's agent")
    sc = write_scenario(tmp_path / "sc2", [{**held(tmp_path / "go-2", "alpha"), "status": block(task="alpha")}])
    env = {**os.environ, "DUN_FAKE_SCENARIO": str(sc), "TERM": "xterm"}
    loop = pexpect.spawn(DUN[0], [*DUN[1:], "loop", "--worktree", "w2", "--max-iterations", "1"], cwd=str(repo),
                         env=env, timeout=30, encoding="utf-8")
    try:
        loop.expect_exact("dun loop [w2]: iteration 1: the agent starts (boxes 0/1")
        with pytest.raises(pexpect.TIMEOUT):
            loop.expect_exact("agent working", timeout=1.5)  # it would be rewritten every half second
        (tmp_path / "go-2").touch()
        loop.expect_exact("dun loop [w2]: iteration 1: command exit 0")
        loop.expect(pexpect.EOF)
    finally:
        loop.close(force=True)
    # the main tree's loop, with w1 still running, names itself too
    start_loop(repo, write_scenario(tmp_path / "sc3", [held(tmp_path / "never-3", "alpha")]), procs,
               stderr=tmp_path / "main.stderr")
    said = until(lambda: "agent starts" in (text := (tmp_path / "main.stderr").read_text(encoding="utf-8")) and text,
                 "the main tree's loop line")
    assert "dun loop [main]: iteration 1: the agent starts (boxes 0/1" in said, said
    assert all(line.startswith("dun loop [main]: ") for line in said.splitlines()), said
