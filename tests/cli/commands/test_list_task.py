"""`dun list` (the checks, nothing run) and `dun task ID [--prompt]` (one check or item, run now)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import git, write

from dun.cli.main import cli, main


def invoke(args: list[str]) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, args, catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def project(repo: Path) -> Path:
    write(repo, ".dun/config.yaml", "plugins:\n  disabled: [python]\n")
    write(repo, ".dun/plugins/p.yaml", """\
id: p
priority: 5
checks:
  - id: tests
    type: command
    description: The suite passes.
    command: "printf 'src/a.py:3: first problem\\nsrc/b.py:9: second problem\\nloose end\\n'; exit 1"
    parser: {type: regex, pattern: '^((?P<file>[^:]+):(?P<line>\\d+): )?(?P<text>.*)$'}
    next: fix the tests
  - id: green
    type: command
    command: "true"
""")
    write(repo, "MISSION.md", "# Mission\n\n## Tasks\n- [ ] write the parser\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "project")
    return repo


def test_list_shows_every_check_and_whether_it_applies(project: Path) -> None:
    code, out, _ = invoke(["list", str(project)])
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split() == ["ID", "PLUGIN", "LEVEL", "DESCRIPTION"]
    assert any(line.split()[:4] == ["tests", "p", "HIGH", "The"] for line in lines)
    assert any(line.startswith("go-test ") and "(not applicable)" in line for line in lines)
    assert not any(line.startswith("pytest ") for line in lines)  # its plugin is disabled
    assert lines[-1].endswith("checks apply; `dun task ID` runs one, `dun explain ID` shows it")
    data = json.loads(invoke(["list", str(project), "--format", "json"])[1])
    tests = next(c for c in data["checks"] if c["id"] == "tests")
    assert tests["applies"] is True and tests["level_when_failing"] == "HIGH" and tests["why_not"] is None
    assert not (project / ".dun" / "cache").exists()  # nothing ran


def test_task_for_a_whole_check_numbers_its_items(project: Path) -> None:
    code, out, _ = invoke(["task", "tests", "-C", str(project)])
    assert code == 1
    assert "check:  tests (p, command) fail HIGH" in out
    assert "  tests@src/a.py:3  src/a.py:3 first problem" in out
    assert "  tests#3  loose end" in out
    assert "next:   fix the tests" in out


@pytest.mark.parametrize("task_id", ["tests#2", "tests@src/b.py:9", "tests@src/b.py"])
def test_task_for_one_item(project: Path, task_id: str) -> None:
    code, out, _ = invoke(["task", task_id, "-C", str(project)])
    assert code == 1
    assert "item:   src/b.py:9 second problem" in out
    assert "src/a.py:3" not in out


def test_task_prompt_is_the_iterate_prompt_narrowed_to_one_item(project: Path) -> None:
    code, out, _ = invoke(["task", "tests@src/a.py:3", "--prompt", "-C", str(project)])
    assert code == 1
    assert "### 1. [HIGH] tests (p, fail)" in out and "- src/a.py:3 first problem" in out
    assert "second problem" not in out and "mission-boxes" not in out
    assert "write the parser" in out  # the mission, for context
    assert out.rstrip().endswith("---END_DUN_STATUS---")


def test_a_done_task_exits_zero(project: Path) -> None:
    code, out, _ = invoke(["task", "green", "-C", str(project)])
    assert code == 0 and out.startswith("task green: done (green pass: exit 0)")
    code, out, _ = invoke(["task", "tests@src/gone.py:1", "-C", str(project)])
    assert code == 0 and "done" in out


@pytest.mark.parametrize(("task_id", "message"), [
    ("testz", "no check 'testz' (did you mean 'tests'?); `dun list` shows them"),
    ("tests#0", "invalid task id 'tests#0': items are numbered from 1"),
    ("tests#x", "invalid task id 'tests#x': use CHECK, CHECK#N or CHECK@FILE:LINE"),
])
def test_bad_task_ids_are_usage_errors(project: Path, task_id: str, message: str,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["task", task_id, "-C", str(project)]) == 2
    assert message in capsys.readouterr().err
