"""Cache truth for files git ignores but a check reads by name (a MISSION.md or plan kept out of git): git status
says nothing of their content, so nothing may take its silence for "unchanged".

Both were stale before: the per-file checkbox cache took an ignored file for clean at the current commit and gave
back the boxes it read before any edit, and the replay of a whole run kept only whether MISSION.md exists (the
mission plugin's trigger), dropping the stamp its check's result was reused on."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import git, write

from dun.engine.session import open_session

OLD_NS = 1_600_000_000_000_000_000
ONLY_MISSION = "plugins: {disabled: [python, go, git, hooks, beads, helix, javascript, rust, test-suites]}\n"


def age(path: Path) -> None:
    os.utime(path, ns=(OLD_NS, OLD_NS))


@pytest.fixture
def project(repo: Path) -> Path:
    write(repo, ".dun/config.yaml", ONLY_MISSION)
    write(repo, ".gitignore", "MISSION.md\nlocal/\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "mission kept out of git")
    return repo


def boxes(repo: Path, fresh: bool = False) -> tuple[str, list[tuple[str | None, int | None, str]]]:
    result = next(r for r in open_session(repo, fresh=fresh).report().results if r.id == "mission-boxes")
    return result.signal, [(i.file, i.line, i.text) for i in result.items]


@pytest.mark.parametrize("where", ["MISSION.md", "local/plan.md"])
def test_an_ignored_file_read_by_name_is_read_again_after_an_edit(project: Path, where: str) -> None:
    """A file ignored by name, or inside an ignored directory (git names the directory once, not the file)."""
    if where != "MISSION.md":
        write(project, ".dun/plugins/m.yaml", "id: mission\ntriggers: [{path-exists: local/plan.md}]\nchecks:\n"
                                              "  - {id: mission-boxes, type: checkboxes, files: [local/plan.md]}\n")
    mission = write(project, where, "# M\n\n- [ ] one\n")
    age(mission)
    boxes(project)
    write(project, where, "# M\n\n- [x] one\n- [ ] two\n")
    age(mission)
    assert boxes(project) == boxes(project, fresh=True)
    assert boxes(project)[1] == [(where, 4, "two")]


def test_a_whole_run_is_not_replayed_after_an_ignored_mission_changed(project: Path) -> None:
    def check() -> str:
        return subprocess.run([sys.executable, "-m", "dun", "check", "--format", "json"], cwd=project,
                              capture_output=True, text=True, check=False).stdout

    mission = write(project, "MISSION.md", "# M\n\n- [ ] one\n")
    age(mission)
    check()
    assert '"cached": true' in check()  # stored whole for replay
    write(project, "MISSION.md", "# M\n\n- [x] one\n- [ ] two\n")
    age(mission)
    assert "MISSION.md:4 two" in check()
