"""Numbers that would disable a limit: NaN, the infinities and negatives, refused where a person writes them (config,
manifests, flags) with one line naming the place, and distrusted where an agent reports them (its cost)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import git, write
from fake_agent import calls, write_scenario
from loop_support import idle, make_repo
from robust_support import dun, state

CONFIG_VALUES = [".nan", ".NaN", ".inf", "-.inf", "1e400", "-1", "1e12"]


@pytest.mark.parametrize("key", ["max_budget_usd", "iteration_timeout_s", "cooldown_s", "max_duration_h"])
@pytest.mark.parametrize("value", CONFIG_VALUES)
def test_a_config_number_that_would_disable_a_limit_is_refused_with_its_line(repo: Path, key: str,
                                                                             value: str) -> None:
    write(repo, ".dun/config.yaml", f"# limits\nloop:\n  {key}: {value}\n")
    done = dun(repo, "loop", "--dry-run")
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith(f"dun: {repo / '.dun' / 'config.yaml'}:3:") and f"loop.{key}:" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("value", [".nan", ".inf", "-.inf", "0", "-5"])
def test_a_checks_timeout_that_would_disable_it_is_refused_with_its_line(repo: Path, value: str) -> None:
    write(repo, ".dun/plugins/mine.yaml", f"id: mine\nchecks:\n  - id: slow\n    type: command\n"
                                          f"    command: sleep 600\n    timeout: {value}\n")
    done = dun(repo, "check", timeout=30)
    assert done.returncode == 2, done.stderr
    assert "mine.yaml:6:14: checks[0].timeout: must be" in done.stderr


@pytest.mark.parametrize(("flag", "value"), [("--max-budget-usd", "nan"), ("--max-budget-usd", "inf"),
                                             ("--max-budget-usd", "-1"), ("--iteration-timeout", "nan"),
                                             ("--iteration-timeout", "-inf"), ("--iteration-timeout", "1e309")])
def test_a_flag_that_would_disable_a_limit_is_refused(repo: Path, flag: str, value: str) -> None:
    done = dun(repo, "loop", "--dry-run", flag, value)
    assert done.returncode == 2
    assert f"Invalid value for '{flag}'" in done.stderr and "Traceback" not in done.stderr


def test_a_pyproject_limit_is_refused_with_its_line(repo: Path) -> None:
    write(repo, "pyproject.toml", "[project]\nname = 'x'\n\n[tool.dun.loop]\nmax_budget_usd = nan\n")
    done = dun(repo, "loop", "--dry-run")
    assert done.returncode == 2
    assert "pyproject.toml:5:1: loop.max_budget_usd: must be a finite number, got nan" in done.stderr


@pytest.mark.parametrize("cost", [float("nan"), float("inf"), -50.0, -1e-9])
def test_a_reported_cost_that_is_no_amount_is_charged_the_estimate(repo: Path, tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch, cost: float) -> None:
    """A $10 cap with $5 estimated per iteration: two iterations, whatever the agent claims to have cost."""
    make_repo(repo, loop={"max_budget_usd": 10, "budget_per_iteration_usd": 5},
              circuit={"no_progress_limit": 100, "half_open_after": 100})
    sc = write_scenario(tmp_path / "sc", [idle(cost_usd=cost, repeat=True)])
    monkeypatch.setenv("DUN_FAKE_SCENARIO", str(sc))
    done = dun(repo, "loop")
    assert done.returncode == 1, done.stderr
    s = state(repo)
    assert (s["stop_reason"], s["iteration"], s["cost_usd_total"]) == ("budget", 2, 10.0)
    assert len(calls(sc)) == 2
    first = json.loads((repo / ".dun" / "logs" / "iteration-1.json").read_text(encoding="utf-8"))
    assert (first["cost_usd"], first["cost_estimated"]) == (5.0, True)
    git(repo, "status")  # the repository is intact
