"""The calls the loop engine makes never raise: a broken database or an unwritable directory is one line on
stderr, and the JSON files still hold everything."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import git, settings_with
from history_support import dun, make_log, new_repo, write_run

from dun.loop import operator as loop_hooks

CFG = settings_with(loop__max_budget_usd=0)


def test_a_corrupt_database_does_not_stop_the_loop(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    repo = new_repo(tmp_path / "repo")
    log = make_log("r1", 1)
    state = json.loads((write_run(repo, "r1", [log]) / "state.json").read_text())
    (repo / ".dun" / "history.db").write_bytes(b"not sqlite" * 200)
    loop_hooks.on_run_start(repo, state, CFG)
    loop_hooks.on_iteration(repo, log, state, CFG)
    loop_hooks.on_wait(repo, state, CFG, "usage_limit", 60.0)
    loop_hooks.on_stop(repo, state, CFG)
    err = capfd.readouterr().err.splitlines()
    assert len(err) == 4 and all(line.startswith("dun: history") for line in err), err  # one per call
    assert "dun history rebuild" in err[0]
    # the wait is in the events file all the same, and a rebuild brings it in
    assert [json.loads(line)["kind"] for line in (repo / ".dun/logs/events.jsonl").read_text().splitlines()] == [
        "wait"]
    assert dun(repo, "history", "rebuild").returncode == 0
    assert json.loads(dun(repo, "history", "--json").stdout)["runs"][0]["iterations"] == 1


def test_a_first_history_makes_the_runtime_gitignore(tmp_path: Path) -> None:
    repo = new_repo(tmp_path / "repo")
    (repo / ".dun" / ".gitignore").unlink()
    (repo / ".dun" / "config.yaml").rename(repo / "dun-config.yaml")
    (repo / ".dun").rmdir()
    assert dun(repo, "history").stdout == "no runs recorded yet (`dun loop` starts one)\n"
    assert git(repo, "check-ignore", ".dun/history.db").strip() == ".dun/history.db"
