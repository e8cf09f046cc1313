"""The no-change path: a result is reused only while every input it reads is known and unchanged, and every kind of
change runs the check again. A command check appends a line to a log outside the repository each time it really
runs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import git, write

from dun.cli.commands.check import CheckOptions, build_report
from dun.engine.model import CheckResult
from dun.engine.session import Session, open_session

PLUGIN = """\
id: p
checks:
  - id: count
    type: command
    command: "echo run >> {log}; cat notes.txt 2>/dev/null; exit 1"
    inputs: {{files: [ignored/**], env: [DISPLAY]}}
"""


@pytest.fixture
def counted(repo: Path, tmp_path: Path) -> Path:
    write(repo, ".dun/config.yaml", "plugins: {disabled: [python, go, git, mission, hooks, beads, helix, javascript, "
                                    "rust, test-suites]}\n")
    write(repo, ".dun/plugins/p.yaml", PLUGIN.format(log=tmp_path / "runs.log"))
    write(repo, ".gitignore", "ignored/\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "plugin")
    return repo


def runs(repo: Path) -> int:
    log = repo.parent / "runs.log"
    return len(log.read_text().splitlines()) if log.exists() else 0


def result(repo: Path, no_cache: bool = False) -> CheckResult:
    report = build_report(open_session(repo), CheckOptions(no_cache=no_cache))
    return next(r for r in report.results if r.id == "count")


def test_an_unchanged_tree_reuses_the_result(counted: Path) -> None:
    first = result(counted)
    second = result(counted)
    assert (first.cached, second.cached, runs(counted)) == (False, True, 1)
    assert (second.status, second.signal, second.detail) == (first.status, first.signal, first.detail)


def test_no_cache_and_the_environment_variable_run_it_again(counted: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    result(counted)
    assert not result(counted, no_cache=True).cached
    monkeypatch.setenv("DUN_NO_CACHE", "1")
    assert not result(counted).cached
    assert runs(counted) == 3


@pytest.mark.parametrize("change", ["edit tracked", "same-size rewrite", "new untracked", "stage", "commit",
                                    "definition", "user override", "environment"])
def test_each_kind_of_change_runs_it_again(counted: Path, change: str, monkeypatch: pytest.MonkeyPatch) -> None:
    write(counted, "notes.txt", "one\n")
    git(counted, "add", "notes.txt")
    git(counted, "commit", "-qm", "notes")
    result(counted)
    assert result(counted).cached
    if change == "edit tracked":
        write(counted, "notes.txt", "one\ntwo\n")
    elif change == "same-size rewrite":  # the content is hashed, so no stat stamp can hide it
        write(counted, "untracked.txt", "aaa\n")
        result(counted)
        write(counted, "untracked.txt", "bbb\n")
    elif change == "new untracked":
        write(counted, "new.txt", "x\n")
    elif change == "stage":
        write(counted, "notes.txt", "staged\n")
        git(counted, "add", "notes.txt")
        result(counted)
        write(counted, "notes.txt", "one\n")  # the work tree is back, the index is not
    elif change == "commit":
        git(counted, "commit", "-q", "--allow-empty", "-m", "empty")
    elif change == "definition":
        write(counted, ".dun/plugins/p.yaml", (counted / ".dun/plugins/p.yaml").read_text() + "    timeout: 30\n")
        git(counted, "commit", "-qam", "timeout")  # committed: the definition alone changed, HEAD did too
    elif change == "user override":  # the definition alone changes: the check moves to a user-level manifest
        monkeypatch.setenv("XDG_CONFIG_HOME", str(counted.parent / "other-config"))
        repo_level = (counted / ".dun/plugins/p.yaml").read_text()
        user_level = counted.parent / "other-config/dun/plugins/u.yaml"
        write(user_level.parent, "u.yaml", repo_level.replace("id: p\n", "id: u\n"))
        write(counted, ".dun/plugins/p.yaml", repo_level.replace("count", "other"))
        git(counted, "commit", "-qam", "rename")
        result(counted)
        assert result(counted).cached  # the user-level `count`, unchanged since
        write(user_level.parent, "u.yaml", user_level.read_text() + "    timeout: 30\n")
    elif change == "environment":
        monkeypatch.setenv("MY_TOOL_MODE", "strict")
    before = runs(counted)
    fresh = result(counted)
    assert not fresh.cached and runs(counted) == before + 1


def test_a_command_without_declared_inputs_is_never_reused(counted: Path) -> None:
    plugin = counted / ".dun/plugins/p.yaml"
    declared = "    inputs: {files: [ignored/**], env: [DISPLAY]}\n"
    write(counted, ".dun/plugins/p.yaml", plugin.read_text().replace(declared, ""))
    git(counted, "commit", "-qam", "no inputs")
    assert [result(counted).cached for _ in range(2)] == [False, False] and runs(counted) == 2


@pytest.mark.parametrize("change", ["ignored edit", "ignored new file", "declared env"])
def test_a_declared_input_outside_git_runs_it_again(counted: Path, change: str,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    old = 1_600_000_000_000_000_000
    os.utime(write(counted, "ignored/data.txt", "1\n"), ns=(old, old))
    os.utime(counted / "ignored", ns=(old, old))  # a listing changed just now could change again unseen
    result(counted)
    assert result(counted).cached
    if change == "ignored edit":
        write(counted, "ignored/data.txt", "2\n")
        os.utime(counted / "ignored/data.txt", ns=(old, old))  # same size and mtime: the ctime tells
    elif change == "ignored new file":
        write(counted, "ignored/deeper/more.txt", "x\n")
    else:
        monkeypatch.setenv("DISPLAY", ":7")  # left out of every key unless declared
    before = runs(counted)
    assert not result(counted).cached and runs(counted) == before + 1


def test_declared_git_refs_and_config(counted: Path) -> None:
    plugin = counted / ".dun/plugins/p.yaml"
    write(counted, ".dun/plugins/p.yaml", plugin.read_text().replace(
        "env: [DISPLAY]}", "env: [DISPLAY], git-refs: [refs/tags], git-config: [dun.test]}"))
    git(counted, "commit", "-qam", "refs")
    result(counted)
    assert result(counted).cached
    git(counted, "tag", "v1")
    assert not result(counted).cached
    assert result(counted).cached
    git(counted, "config", "dun.test", "on")
    assert not result(counted).cached


def test_ttl_and_flaky(counted: Path) -> None:
    plugin = counted / ".dun/plugins/p.yaml"
    text = plugin.read_text()
    write(counted, ".dun/plugins/p.yaml", text + "    flaky: true\n")
    git(counted, "commit", "-qam", "flaky")
    assert [result(counted).cached for _ in range(2)] == [False, False]  # a flaky failure is run again
    write(counted, ".dun/plugins/p.yaml", text + "    ttl: 0\n")
    git(counted, "commit", "-qam", "ttl")
    assert [result(counted).cached for _ in range(2)] == [False, False]  # older than its ttl at once


def test_a_coverage_input_outside_git(counted: Path) -> None:
    write(counted, ".dun/plugins/cov.yaml", "id: cov\nchecks:\n  - {id: cov, type: coverage, file: ignored/c.json, "
                                            "threshold: 50}\n")
    git(counted, "add", "-A")
    git(counted, "commit", "-qm", "coverage")
    data = {"files": {"a.py": {"executed_lines": [1], "missing_lines": [2], "summary": {"num_statements": 2}}}}
    write(counted, "ignored/c.json", json.dumps(data))
    os.utime(counted / "ignored/c.json", ns=(1_000_000_000, 1_000_000_000))  # outside the racy window
    session = open_session(counted)
    first = next(r for r in session.report(reuse=True).results if r.id == "cov")
    again = next(r for r in open_session(counted).report(reuse=True).results if r.id == "cov")
    assert (first.cached, again.cached, first.signal) == (False, True, again.signal)
    data["files"]["a.py"]["missing_lines"] = []
    data["files"]["a.py"]["executed_lines"] = [1, 2]
    write(counted, "ignored/c.json", json.dumps(data))
    os.utime(counted / "ignored/c.json", ns=(2_000_000_000, 2_000_000_000))
    fresh = next(r for r in open_session(counted).report(reuse=True).results if r.id == "cov")
    assert not fresh.cached and fresh.signal != first.signal


def test_a_file_changed_while_the_check_runs_is_not_stored(counted: Path) -> None:
    """The check writes notes.txt as it runs (as an agent or an editor might): the tree seen before it ran is not
    the one its result describes, so nothing is stored under it."""
    plugin = counted / ".dun/plugins/p.yaml"
    write(counted, ".dun/plugins/p.yaml", plugin.read_text().replace("cat notes.txt 2>/dev/null",
                                                                      "echo x >> notes.txt"))
    git(counted, "commit", "-qam", "writes")
    assert [result(counted).cached for _ in range(3)] == [False, False, False]


def test_no_cache_stores_what_it_found(counted: Path) -> None:
    assert not result(counted, no_cache=True).cached
    assert result(counted).cached and runs(counted) == 1


def test_errors_are_never_reused(counted: Path) -> None:
    write(counted, ".dun/plugins/p.yaml", (counted / ".dun/plugins/p.yaml").read_text() + "    cwd: missing-dir\n")
    assert result(counted).status == "error"
    assert not result(counted).cached


def test_the_cli_marks_reused_results_in_text_and_json(counted: Path) -> None:
    dun = [sys.executable, "-m", "dun", "check"]
    subprocess.run(dun, cwd=counted, capture_output=True, check=False)
    text = subprocess.run(dun, cwd=counted, capture_output=True, text=True, check=False).stdout
    assert "(cached since " in text.splitlines()[0] and " cached, the oldest since " in text
    data = json.loads(subprocess.run([*dun, "--format", "json"], cwd=counted, capture_output=True, text=True,
                                     check=False).stdout)
    count = next(c for c in data["checks"] if c["id"] == "count")
    assert data["summary"]["cached"] == len(data["checks"]) and count["cached"] is True
    assert count["cached_since"].endswith("+00:00")
    fresh = json.loads(subprocess.run([*dun, "--format", "json", "--no-cache"], cwd=counted, capture_output=True,
                                      text=True, check=False).stdout)
    assert fresh["summary"]["cached"] == 0 and runs(counted) == 2


def test_the_loops_sandbox_reuses_what_dun_check_found_but_not_the_other_way(counted: Path) -> None:
    def confined_session() -> Session:
        session = open_session(counted)
        session.confine = lambda argv: argv  # stands for the loop's sandbox (dun/loop/confinement.py)
        session.context().confine = session.confine
        return session

    result(counted)  # dun check, outside any sandbox
    inside = next(r for r in confined_session().report().results if r.id == "count")
    assert inside.cached and runs(counted) == 1
    write(counted, "notes.txt", "changed\n")
    assert not next(r for r in confined_session().report().results if r.id == "count").cached
    assert not result(counted).cached and runs(counted) == 3  # made in the sandbox: run again outside it


def test_dun_iterate_reuses_what_dun_check_just_found_and_says_so(counted: Path) -> None:
    subprocess.run([sys.executable, "-m", "dun", "check"], cwd=counted, capture_output=True, check=False)
    proc = subprocess.run([sys.executable, "-m", "dun", "iterate"], cwd=counted, capture_output=True, text=True,
                          check=False)
    assert proc.returncode == 0 and runs(counted) == 1  # the suite did not run a second time
    assert "results reused from an earlier run on the same inputs (the oldest since " in proc.stderr


def test_a_second_look_at_the_tree_only_when_a_read_could_have_moved(repo: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Checks that read the tree only through stamps need no second `git status` when every file they read is older
    than git's look; a file written since (its mtime later), or a command that may read anything, gets one."""
    from dun.engine.session import Session

    looks: list[int] = []
    real = Session._start_look
    monkeypatch.setattr(Session, "_start_look", lambda self: looks.append(1) or real(self))
    old = 1_600_000_000_000_000_000
    write(repo, ".dun/config.yaml", "plugins: {disabled: [python, go, git, mission, hooks, beads, helix]}\n")
    write(repo, ".dun/plugins/p.yaml", "id: p\nchecks:\n  - {id: boxes, type: checkboxes, files: ['plan*.md']}\n")
    os.utime(write(repo, "plan.md", "- [ ] one\n"), ns=(old, old))
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "plan")
    assert not open_session(repo, fresh=True).report(only=["boxes"]).results[0].cached and looks == []
    # test-suites stamps every path it looks at (its declared inputs), tracked or not: no second look either
    write(repo, "Gemfile", "")
    os.utime(write(repo, "spec/a_spec.rb", ""), ns=(old, old))
    os.utime(repo / "spec", ns=(old, old))
    os.utime(repo / "Gemfile", ns=(old, old))
    os.utime(repo, ns=(old, old))
    assert open_session(repo, fresh=True).report(only=["test-suites"]).results[0].status == "warn" and looks == []
    assert open_session(repo).report(only=["test-suites"]).results[0].cached
    (repo / "Gemfile").unlink()
    (repo / "spec/a_spec.rb").unlink()
    (repo / "spec").rmdir()
    future = (int(__import__("time").time()) + 30) * 10**9  # the same content, written "after" git looked
    os.utime(repo / "plan.md", ns=(future, future))
    open_session(repo, fresh=True).report(only=["boxes"])
    assert looks == [1]
    write(repo, ".dun/plugins/p.yaml", "id: p\nchecks:\n  - {id: c, type: command, command: 'true', inputs: {}}\n")
    git(repo, "commit", "-qam", "command")
    open_session(repo).report(only=["c"])
    assert looks == [1, 1]


def test_one_look_after_the_checks_when_the_last_of_them_starts_it(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """In a repository without a commit git's look has no time to compare reads with, so the stamped shortcut does
    not hold; the look started when the last check finished is still the look after them all: git runs once."""
    looks: list[int] = []
    real = Session._start_look
    monkeypatch.setattr(Session, "_start_look", lambda self: looks.append(1) or real(self))
    root = tmp_path / "fresh"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    write(root, ".dun/config.yaml", "plugins: {disabled: [python, go, git, mission, hooks, beads, helix]}\n")
    write(root, ".dun/plugins/p.yaml", "id: p\nchecks:\n  - {id: c, type: command, command: 'true', inputs: {}}\n")
    first = open_session(root).report(only=["c"]).results[0]
    assert (first.status, looks) == ("pass", [1])


def test_a_plugin_found_not_applicable_runs_once_its_trigger_appears(repo: Path, tmp_path: Path) -> None:
    """Its checks' inputs are not looked at while no `path-exists` trigger exists (the skip depends on the triggers
    alone); a trigger appearing, even one git ignores, runs the check instead of replaying the skip."""
    write(repo, ".dun/config.yaml", "plugins: {disabled: [python, go, git, mission, hooks, beads, helix, javascript, "
                                    "rust, test-suites]}\n")
    write(repo, ".dun/plugins/p.yaml", PLUGIN.format(log=tmp_path / "runs.log").replace(
        "id: p\n", "id: p\ntriggers:\n  - path-exists: ignored/marker\n"))
    write(repo, ".gitignore", "ignored/\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "plugin")
    first, again = result(repo), result(repo)
    assert (first.status, first.cached, again.status, again.cached, runs(repo)) == ("skip", False, "skip", True, 0)
    write(repo, "ignored/marker", "")
    ran = result(repo)
    assert (ran.status, ran.cached, runs(repo)) == ("fail", False, 1)
    (repo / "ignored/marker").unlink()
    assert result(repo).status == "skip"
