"""What `dun watch` draws for a snapshot: the figures, a wait's countdown, a dead loop, the output fitted to the
screen."""

from __future__ import annotations

from rich.console import Console

from dun.fleet.live import LoopSnapshot
from dun.fleet.view import screen

NOW = 1_800_000_000.0


def drawn(snaps: list[LoopSnapshot], height: int = 40) -> str:
    console = Console(record=True, width=120, color_system=None)
    console.print(screen(snaps, NOW, height))
    return console.export_text()


def test_a_running_agent_shows_its_elapsed_time_boxes_cost_and_decisions() -> None:
    snap = LoopSnapshot(label="app", root="/srv/app", status="running", pid=42, agent="claude", phase="agent",
                        iteration=3, max_iterations=20, in_progress=3, call_started=NOW - 133, boxes=(1, 4),
                        cost_usd=1.5, budget_usd=10.0, output=("> Bash: pytest -q", "All 12 tests pass."),
                        decisions=({"iteration": 2, "action": "continue", "reason": "work_remains", "at": 1.0},))
    text = drawn([snap])
    assert "app  running  pid 42" in text
    assert "iteration 3/20 · agent claude working 2m13s · boxes 1/4 · $1.50 of $10.00" in text
    assert "decisions: #2 continue work_remains" in text
    assert "│ > Bash: pytest -q" in text and "│ All 12 tests pass." in text


def test_a_wait_counts_down_and_a_dead_loop_says_how_to_resume() -> None:
    waiting = LoopSnapshot(label="app/w1", root="/srv/app/.dun/worktrees/w1", status="running", pid=7,
                           phase="waiting", iteration=5, wait_until=NOW + 723, wait_reason="usage_limit")
    died = LoopSnapshot(label="lib", root="/srv/lib", status="not running", iteration=2, cost_usd=0.25)
    text = drawn([waiting, died])
    assert "waiting (usage_limit): resumes in 12m03s at " in text
    assert "$0.2500 spent (no budget cap)" in text
    assert "the loop died (no process holds its lock): `dun loop` resumes the run" in text


def test_the_output_is_cut_so_that_every_loop_fits_the_screen() -> None:
    output = tuple(f"line {i}" for i in range(50))
    snaps = [LoopSnapshot(label=f"repo{i}", root=f"/r{i}", status="running", output=output) for i in range(3)]
    text = drawn(snaps, height=30)
    assert len(text.splitlines()) <= 30
    assert "line 49" in text and "line 40" not in text
    assert "no loop has run here" in drawn([])
