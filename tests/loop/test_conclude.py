"""Cost for every agent, or an honest refusal: with a budget, an agent whose usage dun cannot price stops `dun loop`
and the shell driver before the run starts (exit 2, one line); tokens spent at an unknown price are never $0."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from fake_agent import FAKE_COMMAND, block, write_scenario
from loop_support import make_repo, work

DUN = [sys.executable, "-m", "dun"]


def dun(repo: Path, *args: str, scenario: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DUN_FAKE_SCENARIO": str(scenario or repo / "none.json")}
    return subprocess.run([*DUN, *args], cwd=repo, env=env, capture_output=True, text=True, timeout=60,
                          stdin=subprocess.DEVNULL)


def codex_repo(repo: Path, loop: dict[str, Any] | None = None, **agent: Any) -> Path:
    return make_repo(repo, boxes=("alpha",), loop=loop, agent={"name": "codex", "command": FAKE_COMMAND, **agent})


def test_an_unpriceable_agent_with_a_budget_is_a_config_error(repo: Path) -> None:
    codex_repo(repo, model="o9")
    for args in (["loop"], ["respond", "--decide", "--before"]):
        proc = dun(repo, *args)
        assert proc.returncode == 2, proc.stderr
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and "cannot price codex's usage" in lines[0] and "'o9'" in lines[0], proc.stderr
    assert not (repo / ".dun" / "state.json").exists()  # refused before anything started


def test_rates_or_no_budget_let_it_run(repo: Path, tmp_path: Path) -> None:
    codex_repo(repo, model="o9", input_usd_per_mtok=1.0, output_usd_per_mtok=4.0)
    scenario = write_scenario(tmp_path, [{**work("alpha", exit=True), "format": "codex",
                                          "usage": {"input_tokens": 1_000_000, "output_tokens": 250_000}}])
    proc = dun(repo, "loop", scenario=scenario)
    assert proc.returncode == 0, proc.stderr
    assert "$2.0000 spent" in proc.stderr  # 1M in at $1 and 0.25M out at $4


def test_tokens_at_an_unknown_price_are_assumed_to_cost_the_iteration_cap(repo: Path, tmp_path: Path) -> None:
    codex_repo(repo, loop={"max_budget_usd": 0, "budget_per_iteration_usd": 0.5}, model="o9")
    scenario = write_scenario(tmp_path, [{"format": "codex", "status": block(task="alpha", status="IN_PROGRESS"),
                                          "usage": {"input_tokens": 10, "output_tokens": 5}}])
    proc = dun(repo, "loop", "--max-iterations", "1", scenario=scenario)
    assert proc.returncode == 1, proc.stderr
    assert "$0.5000 spent" in proc.stderr
