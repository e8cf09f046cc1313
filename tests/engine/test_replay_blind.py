"""The replay path where `git status` is blind: what the work tree's fingerprint looks at beyond git's answer
(skip-worktree files, what a tracked link points at, a nested repository, an executable bit under
core.fileMode=false) is looked at while git still walks the tree (`TreeLook.prepare`, dun/core/fingerprint.py), not
after it. After each such edit, a replayable `dun check` must run again and say what a run with every cache off says.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import git, write

from tests.engine.test_replay import age, replayed

PLUGIN = """\
id: p
checks:
  - id: reads
    type: command
    command: "cat skipped.txt linked.txt inner/data.txt; if test -x tool.sh; then echo executable; fi; exit 1"
    inputs: {}  # it reads nothing beyond the work tree
"""
DISABLED = "python, go, git, mission, hooks, beads, helix, javascript, rust, test-suites"


def check(root: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-X", "importtime", "-m", "dun", "check", "--format", "json"], cwd=root,
                          capture_output=True, text=True, env={**os.environ, **env}, check=False, timeout=120)


def said(proc: subprocess.CompletedProcess[str]) -> dict[str, tuple[object, ...]]:
    return {c["id"]: (c["status"], c["signal"], c.get("detail")) for c in json.loads(proc.stdout)["checks"]}


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Path]]:
    top = tmp_path_factory.mktemp("blind-replay")
    root, outside = top / "repo", top / "outside"
    root.mkdir()
    write(outside, "linked.txt", "outside 0\n")
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "core.fileMode", "false")
    write(root, ".dun/config.yaml", f"plugins: {{disabled: [{DISABLED}]}}\n")
    write(root, ".dun/plugins/p.yaml", PLUGIN)
    write(root, "skipped.txt", "skipped 0\n")
    write(root, "tool.sh", "echo tool\n")
    (root / "linked.txt").symlink_to(outside / "linked.txt")
    inner = root / "inner"
    inner.mkdir()
    git(inner, "init", "-q", "-b", "main")
    write(inner, "data.txt", "inner 0\n")
    git(inner, "add", "-A")
    git(inner, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "inner")
    git(root, "add", ".dun", "skipped.txt", "tool.sh", "linked.txt")
    git(root, "commit", "-qm", "blind spots")
    git(root, "update-index", "--skip-worktree", "skipped.txt")
    yield root, outside


@pytest.mark.parametrize("edit", ["skip-worktree file", "linked file", "nested repository", "executable bit"])
def test_a_replay_sees_what_git_status_does_not(project: tuple[Path, Path], edit: str) -> None:
    root, outside = project
    age(root)
    age(outside)
    check(root)
    check(root)
    before = check(root)
    assert replayed(before), before.stderr[-2000:]
    if edit == "skip-worktree file":
        write(root, "skipped.txt", f"skipped {edit}\n")
    elif edit == "linked file":
        write(outside, "linked.txt", f"outside {edit}\n")
    elif edit == "nested repository":
        write(root, "inner/data.txt", f"inner {edit}\n")
    else:  # git status says nothing under core.fileMode=false
        tool = root / "tool.sh"
        tool.chmod(tool.stat().st_mode ^ 0o111)
        assert git(root, "status", "--porcelain", "--untracked-files=no") == ""
    age(root)
    age(outside)
    cached = check(root)
    fresh = check(root, DUN_NO_CACHE="1")
    assert not replayed(cached)
    assert said(cached) == said(fresh) != said(before), edit
