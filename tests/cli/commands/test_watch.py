"""`dun watch` in a real pseudo-terminal while a real `dun loop` runs the scripted agent, and `dun logs -f`.

The agent streams Claude stream-json and waits at gates the test opens, so every change the watch must show is made
at a known point; the test waits for the change in the loop's files, then gives the screen 2 seconds to show it.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pexpect
import pytest
from fake_agent import block, write_scenario
from loop_support import make_repo, until

DUN = [sys.executable, "-m", "dun"]
SHOWN_WITHIN_S = 2.0


def live(root: Path) -> dict[str, Any]:
    try:
        return json.loads((root / ".dun" / "live.json").read_text(encoding="utf-8"))  # type: ignore[no-any-return]
    except (FileNotFoundError, ValueError):
        return {}


def out_has(root: Path, n: int, text: str) -> bool:
    path = root / ".dun" / "logs" / f"iteration-{n}.out"
    return path.is_file() and text in path.read_text(encoding="utf-8", errors="replace")


def step(box: str, gate: Path, exit: bool = False) -> dict[str, Any]:
    return {"format": "claude-stream-json",
            "actions": [{"say": f"Reading the mission for {box}"}, {"wait_for": str(gate)},
                        {"say": f"Ticking {box} now"}, {"tick": "MISSION.md", "box": box}, {"commit": f"Do {box}"}],
            "status": block(task=box, exit=exit), "cost_usd": 0.5}


class Night:
    """A repository with a two-box mission and a `dun loop` running the gated agent in the background."""

    def __init__(self, tmp_path: Path, repo: Path) -> None:
        self.repo = make_repo(repo, boxes=("alpha", "beta"), loop={"max_budget_usd": 5})
        self.gates = [tmp_path / "gate-1", tmp_path / "gate-2"]
        sc = write_scenario(tmp_path / "sc", [step("alpha", self.gates[0]), step("beta", self.gates[1], exit=True)])
        self.env = {**os.environ, "DUN_FAKE_SCENARIO": str(sc)}
        self.loop = subprocess.Popen([*DUN, "loop"], cwd=repo, env=self.env, stdin=subprocess.DEVNULL,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def watch(self, *args: str) -> pexpect.spawn:
        env = {**self.env, "TERM": "xterm-256color", "COLUMNS": "140", "LINES": "50"}
        env.pop("NO_COLOR", None)
        screen = pexpect.spawn(DUN[0], [*DUN[1:], "watch", "-C", str(self.repo), *args], env=env,
                               dimensions=(50, 140), timeout=10, encoding="utf-8", codec_errors="replace")
        screen.logfile_read = io.StringIO()  # everything the terminal received
        return screen

    def close(self) -> None:
        for gate in self.gates:
            gate.touch()
        if self.loop.poll() is None:
            self.loop.kill()
        self.loop.wait(timeout=30)


@pytest.fixture
def night(tmp_path: Path, repo: Path) -> Iterator[Night]:
    started = Night(tmp_path, repo)
    yield started
    started.close()


def cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def shown(screen: pexpect.spawn, text: str) -> float:
    """Seconds until `text` is on the screen (fails after SHOWN_WITHIN_S)."""
    t0 = time.monotonic()
    screen.expect_exact(text, timeout=SHOWN_WITHIN_S)
    return time.monotonic() - t0


def test_watch_shows_each_change_within_2_seconds_and_quits_on_q(night: Night) -> None:
    screen = night.watch()
    repo = night.repo
    until(lambda: live(repo).get("phase") == "agent" and out_has(repo, 1, "Reading the mission for alpha"),
          "the agent of iteration 1 to speak")
    shown(screen, "iteration 1/100")
    shown(screen, "boxes 0/2")
    shown(screen, "Reading the mission for alpha")
    shown(screen, "$0.0000 of $5.00")
    cpu0, wall0 = cpu_s(screen.pid), time.monotonic()
    night.gates[0].touch()  # the agent ticks alpha and answers; iteration 2 opens
    until(lambda: live(repo).get("in_progress") == 2 and out_has(repo, 2, "Reading the mission for beta"),
          "the agent of iteration 2 to speak")
    shown(screen, "iteration 2/100")
    shown(screen, "boxes 1/2")
    shown(screen, "Reading the mission for beta")
    shown(screen, "#1 continue work_remains")
    shown(screen, "$0.5000 of $5.00")
    cpu, wall = cpu_s(screen.pid) - cpu0, time.monotonic() - wall0
    assert cpu < 0.2 * wall + 0.3, f"the watch used {cpu:.2f}s of CPU in {wall:.2f}s"
    seen = screen.logfile_read.getvalue()
    assert seen.count("\x1b[2J") <= 1, "the screen was cleared between frames (it flickers)"
    screen.send("q")
    screen.expect(pexpect.EOF, timeout=5)
    screen.close()
    assert screen.exitstatus == 0
    assert "Traceback" not in (screen.before or "")
    assert night.loop.poll() is None, "quitting the watch must leave the loop running"


def test_watch_quits_on_ctrl_c_and_restores_the_terminal(night: Night) -> None:
    screen = night.watch()
    until(lambda: live(night.repo).get("phase") == "agent", "the agent phase")
    shown(screen, "Reading the mission for alpha")
    screen.sendintr()
    screen.expect(pexpect.EOF, timeout=5)
    rest = screen.before or ""
    screen.close()
    assert screen.exitstatus == 0, rest
    assert "Traceback" not in rest and "interrupted" not in rest
    assert "\x1b[?1049l" in rest, "the alternate screen was not left"


def test_logs_follow_prints_the_agents_stream_and_ends_with_the_loop(night: Night) -> None:
    follow = subprocess.Popen([*DUN, "logs", "-f"], cwd=night.repo, env=night.env, stdin=subprocess.DEVNULL,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert follow.stdout is not None
    first: list[str] = []
    while not first or not first[-1].startswith("  | Reading the mission for alpha"):  # it follows iteration 1
        line = follow.stdout.readline()
        assert line, f"dun logs -f ended early: {''.join(first)}"
        first.append(line)
    for gate in night.gates:
        gate.touch()
    assert night.loop.wait(timeout=60) == 0
    out, err = follow.communicate(timeout=10)
    assert follow.returncode == 0, err
    out = "".join(first) + out
    lines = out.splitlines()
    for expected in ("iteration 1: the agent started, boxes 0/2", "  | Reading the mission for alpha",
                     "  | > Edit: ", "iteration 1: continue (work_remains)",
                     "iteration 2: the agent started",  # with its boxes unless it ran between two looks
                     "  | Ticking beta now", "iteration 2: stop (complete)", "the loop stopped: complete"):
        assert any(line.startswith(expected) for line in lines), (expected, out)


def test_watch_once_prints_the_view_without_a_terminal(night: Night) -> None:
    until(lambda: live(night.repo).get("phase") == "agent", "the agent phase")
    out = subprocess.run([*DUN, "watch", "-C", str(night.repo)], env=night.env, capture_output=True, text=True,
                         timeout=30)
    assert out.returncode == 0, out.stderr
    assert "iteration 1/100" in out.stdout and "boxes 0/2" in out.stdout and "running" in out.stdout
    assert "\x1b[" not in out.stdout


@pytest.mark.parametrize("extra", [["3"], ["--json"], ["--out"]])
def test_logs_follow_with_what_it_cannot_take_is_one_line(repo: Path, extra: list[str]) -> None:
    make_repo(repo)
    done = subprocess.run([sys.executable, "-m", "dun", "logs", "-f", *extra], cwd=repo, capture_output=True,
                          text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert done.returncode == 2 and done.stdout == "", done.stderr
    assert done.stderr == "dun: -f follows the running loop: it takes no N, --json or --out\n"


def test_logs_follow_tells_an_iteration_that_ran_between_two_looks(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """A fast agent: iteration 2 started and ended between two looks of `dun logs -f`, which saw only its decision.
    Its start and its output are still told, from its files, before the decision."""
    from dun.cli.commands.watch import _Follower
    from dun.store.records import LIVE_SCHEMA_VERSION
    from dun.store.store import Store

    store = Store(tmp_path)
    store.logs_dir.mkdir(parents=True)
    record: dict[str, Any] = {
        "schema_version": LIVE_SCHEMA_VERSION, "run_id": "r1", "pid": os.getpid(), "pid_started": None,
        "driver": "loop", "agent": "command", "phase": "agent", "iteration": 1, "max_iterations": 5,
        "in_progress": 1, "call_started": 1.0, "out_file": "iteration-1.out", "boxes_done": 0, "boxes_total": 2,
        "cost_usd": 0.0, "budget_usd": None, "decisions": [], "wait_until": None, "wait_reason": None,
        "stop_reason": None, "started_epoch": 1.0, "updated": 1.0}
    (store.logs_dir / "iteration-1.out").write_text("first at work\n")
    store.write_live(record)  # type: ignore[arg-type]
    follower = _Follower(store)
    follower.look()
    (store.logs_dir / "iteration-2.out").write_text("second, quickly\n")
    record.update(phase="deciding", iteration=2, in_progress=None, out_file=None, boxes_done=2, decisions=[
        {"iteration": 1, "action": "continue", "reason": "work_remains", "at": 2.0},
        {"iteration": 2, "action": "stop", "reason": "complete", "at": 3.0}])
    store.write_live(record)  # type: ignore[arg-type]
    follower.look()
    said = capsys.readouterr().out.splitlines()
    assert said[1:] == ["iteration 1: the agent started, boxes 0/2", "  | first at work",
                        "iteration 1: continue (work_remains)", "iteration 2: the agent started",
                        "  | second, quickly", "iteration 2: stop (complete)"], said
