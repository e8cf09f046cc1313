"""`dun guard` through the real Claude Code CLI: `dun loop` wires it in as the PreToolUse hook, and a scripted
`rm -rf` outside the repository is denied before it runs."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from . import scenarios as sc
from .conftest import make_claude_env
from .model_server import ModelServer

pytestmark = pytest.mark.e2e


def test_rm_rf_outside_the_repo_is_denied_and_nothing_is_deleted(
        tmp_path: Path, claude_bin: Path, isolated_home: Path,
        model_server: Callable[[list[list[dict[str, Any]]]], ModelServer]) -> None:
    # under the agent's HOME: outside the repository (the guard leaves /tmp alone, so not there)
    victim = isolated_home / "precious"
    victim.mkdir()
    (victim / "data.txt").write_text("keep me\n")
    destroy = {"tool_use": "Bash", "input": {"command": f"rm -rf {victim}", "description": "clean up"}}
    finish = {"text": "Tried to clean up.\n\n" + sc.status_block("mission-boxes", status="IN_PROGRESS", files=0)}
    server = model_server([[destroy, finish]])
    env = sc.dun_env(make_claude_env(isolated_home, server))
    root = sc.make_mission_repo(tmp_path / "mission", claude_bin, tasks=("one",), loop={"max_iterations": 1})
    proc = sc.run_dun(root, env, "loop")
    assert proc.returncode == 1, proc.stderr  # max_iterations: the box is still open
    assert (victim / "data.txt").read_text() == "keep me\n", "the guard must stop the delete"
    decisions = [json.loads(line) for line in (root / ".dun/logs/guard.jsonl").read_text().splitlines()]
    denied = [d for d in decisions if d.get("decision") == "deny"]
    assert len(denied) == 1 and str(victim) in json.dumps(denied[0])
    # the CLI ran the hook and told the model why: the reason is in the tool result of the next request
    assert "dun guard" in json.dumps(server.requests)
