from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from conftest import git, write

from dun.cli.commands.check import CheckOptions, build_report
from dun.engine.cache import cache_dir
from dun.engine.session import open_session

PLUGIN = """\
id: p
checks:
  - {id: todos, type: files, rule: pattern-count, glob: ["**/*.py"], pattern: 'TODO', max: 0}
  - {id: boxes, type: checkboxes, files: ["plans/*.md"]}
"""


def age(path: Path) -> None:
    """Backdate a file past the racy window, as files are by the time a loop re-checks them."""
    os.utime(path, ns=(1_600_000_000_000_000_000, 1_600_000_000_000_000_000))


def signals(repo: Path) -> dict[str, str]:
    report = build_report(open_session(repo), CheckOptions(only=["p"]))
    return {r.id: r.signal for r in report.results}


@pytest.fixture
def project(repo: Path) -> Path:
    write(repo, ".dun/plugins/p.yaml", PLUGIN)
    age(write(repo, "src/a.py", "x = 1  # TODO one\n"))
    age(write(repo, "plans/one.md", "- [ ] first\n- [x] done\n"))
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "project")
    return repo


def cache_files(repo: Path) -> list[Path]:
    return sorted(cache_dir(repo.resolve()).glob("*.json"))


def test_results_are_cached_outside_the_repository(project: Path) -> None:
    first = signals(project)
    assert first["todos"].startswith("1 line(s) match")
    names = [p.name.split("-")[0] for p in cache_files(project)]
    assert "pattern" in names and "checkboxes" in names
    assert git(project, "status", "--porcelain") == ""  # nothing written into the repo
    assert signals(project) == first


def test_a_changed_file_is_read_again(project: Path) -> None:
    signals(project)
    path = project / "src/a.py"
    path.write_text("x = 1  # TODO one\ny = 2  # TODO two\n")
    age(path)  # same old mtime: the size still tells the change
    assert signals(project)["todos"].startswith("2 line(s) match")
    boxes = project / "plans/one.md"
    boxes.write_text("- [x] first\n- [x] done\n")  # same size, fresh mtime
    assert signals(project)["boxes"] == "2/2 boxes done"


def test_files_modified_just_now_are_not_stored(project: Path) -> None:
    write(project, "src/fresh.py", "# TODO fresh\n")
    signals(project)
    (todo_cache,) = [p for p in cache_files(project) if p.name.startswith("pattern-count")]
    assert set(json.loads(todo_cache.read_text())) == {"src/a.py"}


def test_a_corrupt_cache_is_ignored(project: Path) -> None:
    first = signals(project)
    for path in cache_files(project):
        path.write_text("{not json")
    assert signals(project) == first


def test_dun_no_cache_turns_it_off(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DUN_NO_CACHE", "1")
    signals(project)
    assert cache_files(project) == []
