"""The command line as a user meets it: exit codes, formats and one-line errors without tracebacks."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import git, write

from dun.cli.main import cli, main

DUN = str(Path(sys.executable).parent / "dun")


def run(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run the installed console script, as CI and users do."""
    return subprocess.run([DUN, *args], cwd=cwd, capture_output=True, text=True, timeout=120)


def clean_repo(repo: Path) -> Path:
    write(repo, ".dun/config.yaml", "plugins:\n  disabled: [python]\n")
    write(repo, ".dun/plugins/p.yaml", "id: p\nchecks:\n  - {id: readme, type: files, rule: path-exists, "
                                       "paths: [README.md]}\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "config")
    return repo


def test_exit_0_when_nothing_is_actionable(repo: Path) -> None:
    proc = run(["check"], clean_repo(repo))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "nothing actionable" in proc.stdout


def test_exit_1_when_work_remains_and_items_are_listed(repo: Path) -> None:
    clean_repo(repo)
    write(repo, "MISSION.md", "# M\n- [ ] write the parser\n")
    proc = run(["check", "--format", "json"], repo)
    assert proc.returncode == 1
    data = json.loads(proc.stdout)
    assert data["schema_version"] == 1
    assert data["summary"]["exit_code"] == 1
    boxes = next(c for c in data["checks"] if c["id"] == "mission-boxes")
    assert boxes["items"] == [{"file": "MISSION.md", "line": 2, "text": "write the parser"}]
    assert boxes["level"] == "MEDIUM"


@pytest.mark.parametrize("bad", [
    ("id: p\nchecks:\n  - {id: x, type: comand, command: ls}\n",
     "p.yaml:3:19: checks[0].type: unknown check type 'comand' (did you mean 'command'?)"),
    ("id: p\nchecks: [\n", "YAML syntax error"),
    ("id: p\nchecks:\n  - {id: x, type: command, command: 5}\n", "checks[0].command: expected a string, got int"),
])
def test_config_errors_exit_2_with_one_line_and_no_traceback(repo: Path, bad: tuple[str, str]) -> None:
    write(repo, ".dun/plugins/p.yaml", bad[0])
    proc = run(["check"], repo)
    assert proc.returncode == 2
    assert bad[1] in proc.stderr
    assert "Traceback" not in proc.stderr + proc.stdout
    assert len(proc.stderr.strip().splitlines()) == 1


def test_unknown_format_and_option_are_usage_errors(repo: Path) -> None:
    proc = run(["check", "--format", "jsn"], clean_repo(repo))
    assert proc.returncode == 2
    assert "unknown format 'jsn' (did you mean 'json'?)" in proc.stderr
    proc = run(["check", "--bogus"], repo)
    assert proc.returncode == 2
    assert "No such option" in proc.stderr


def test_not_a_git_repository_still_checks(plain_dir: Path) -> None:
    write(plain_dir, ".dun/plugins/p.yaml", "id: p\nchecks:\n  - {id: gs, type: git-status}\n")
    proc = run(["check", "--format", "llm"], plain_dir)
    assert proc.returncode == 1
    assert "gs error: not a git repository" in proc.stdout
    assert "Traceback" not in proc.stderr


def test_missing_path_argument_is_a_usage_error(tmp_path: Path) -> None:
    proc = run(["check", str(tmp_path / "nowhere")], tmp_path)
    assert proc.returncode == 2
    assert "nowhere: no such directory" in proc.stderr


def test_internal_error_exit_3_names_a_log_with_the_traceback(repo: Path, isolated_home: Path) -> None:
    import click

    @click.command()
    def explode() -> None:
        raise RuntimeError("kaboom")

    code = main([], entry=explode)
    assert code == 3
    logs = list((isolated_home / ".local" / "state" / "dun").glob("crash-*.log"))
    assert len(logs) == 1
    assert "RuntimeError: kaboom" in logs[0].read_text()


def test_internal_error_message_is_one_line(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import click

    @click.command()
    def explode() -> None:
        raise KeyError("multi\nline")

    assert main([], entry=explode) == 3
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1
    assert "internal error: KeyError" in err and "traceback in" in err


def test_output_file_and_formats_through_clirunner(repo: Path, tmp_path: Path) -> None:
    clean_repo(repo)
    runner = CliRunner()
    out = tmp_path / "report.xml"
    result = runner.invoke(cli, ["check", str(repo), "--format", "junit", "--output", str(out)])
    assert result.exit_code == 0, result.output
    assert out.read_text().startswith('<?xml version="1.0" encoding="utf-8"?>')
    result = runner.invoke(cli, ["check", str(repo), "--format", "llm"])
    assert result.exit_code == 0
    assert result.output.strip().startswith("nothing actionable")


def test_color_only_when_asked_or_on_a_tty(repo: Path) -> None:
    clean_repo(repo)
    write(repo, "MISSION.md", "- [ ] x\n")
    assert "\x1b[" not in run(["check"], repo).stdout
    assert "\x1b[31m" in run(["check", "--color", "always"], repo).stdout


def test_version_and_help(tmp_path: Path) -> None:
    proc = run(["--version"], tmp_path)
    assert proc.returncode == 0 and proc.stdout.startswith("dun, version ")
    proc = run(["--help"], tmp_path)
    for command in ("check", "plugins", "explain", "config", "init"):
        assert command in proc.stdout


def test_python_module_entry_point(repo: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "dun", "check", "--format", "json"], cwd=clean_repo(repo),
                          capture_output=True, text=True, env={**os.environ}, timeout=120)
    assert proc.returncode == 0
    assert json.loads(proc.stdout)["summary"]["actionable"] == 0
