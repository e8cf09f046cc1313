"""`dun check` on the current directory starts git before click loads; any PATH argument turns that off."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import write

from dun.cli.flags import TABLES, parse, valued
from dun.entry import WARM, _runs_checks_here


@pytest.mark.parametrize(("args", "early"), [
    (["check"], "check"),
    (["check", "--format", "json", "--only", "x", "-j", "2", "--no-cache"], "check"),
    (["check", "--format=json", "-v"], "check"),
    (["check", "some/repo"], None),
    (["check", "-f", "json", "some/repo"], None),
    (["check", "-C", "some/repo"], None),
    (["check", "-v", "--path", "some/repo"], None),
    (["iterate", "-C", "some/repo", "--confirm"], None),
    (["iterate"], "iterate"),
    (["iterate", "--max-prompt-chars", "4000", "-a", "plan", "--confirm"], "iterate"),
    (["iterate", "some/repo"], None),
    (["loop"], None),
    ([], None),
])
def test_only_check_and_iterate_without_a_path_start_early(args: list[str], early: str | None) -> None:
    assert _runs_checks_here(args) == early


def test_the_options_taking_a_value_are_the_commands_own() -> None:
    import click

    from dun.cli.main import cli

    assert isinstance(cli, click.Group)
    for name in TABLES:
        params = cli.commands[name].params
        expected = {opt for p in params if isinstance(p, click.Option) and not p.is_flag for opt in p.opts}
        assert valued(name) == expected, name


def test_each_option_is_declared_once_and_its_record_holds_it() -> None:
    """The flags table is the one declaration of an option; CheckOptions and IterateOptions only type its value:
    the same fields, the table's defaults."""
    import dataclasses

    from dun.cli.commands.check import CheckOptions
    from dun.cli.commands.iterate import IterateOptions

    for name, record in (("check", CheckOptions), ("iterate", IterateOptions)):
        fields = {f.name: f for f in dataclasses.fields(record)}
        assert list(fields) == ["path", *(flag.dest for flag in TABLES[name])], name
        for flag in TABLES[name]:
            field = fields[flag.dest]
            default = field.default_factory() if field.default_factory is not dataclasses.MISSING else field.default
            expected = (False if flag.takes == "flag" else [] if flag.takes == "many" else None) \
                if flag.default is None else flag.default
            assert default == expected or (flag.takes == "many" and default == ()), (name, flag.dest)


# `dun check` on an ordinary command line runs without click; click reads anything else. Both must behave alike.
PLUGIN = """\
id: p
checks:
  - {id: boxes, type: checkboxes, files: ["plan.md"]}
  - {id: todo, type: files, rule: pattern-count, glob: ["*.py"], pattern: TODO, max: 0}
"""


@pytest.fixture
def project(repo: Path) -> Path:
    write(repo, ".dun/plugins/p.yaml", PLUGIN)
    write(repo, "plan.md", "- [ ] first\n- [x] second\n")
    write(repo, "a.py", "x = 1  # TODO\n")
    return repo


def entry(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The console script's own path: `python -m dun` runs dun.entry."""
    return subprocess.run([sys.executable, "-m", "dun", *args], cwd=root, capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=60)


def through_click(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    code = "import sys; from dun.cli.main import main; sys.exit(main(sys.argv[1:]))"
    return subprocess.run([sys.executable, "-c", code, *args], cwd=root, capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=60)


@pytest.mark.parametrize("args", [
    ["check"],
    ["check", "--format", "json", "--no-cache", "-j", "1"],
    ["check", "-f", "llm", "--only", "p", "--skip", "todo", "--strict", "-v", "--color", "never"],
    ["check", "--only", "nosuchcheck"],  # a usage error raised by the command itself
    ["check", "-j", "0"],  # refused by click: the table leaves it to click
    ["check", "--color", "blue"],
    ["check", "--format=json", "--no-cache"],
    ["check", "--bogus"],
])
def test_without_click_a_check_prints_and_exits_as_through_click(project: Path, args: list[str],
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DUN_NO_CACHE", "1")  # both run every check: only how long they took may differ
    fast, slow = entry(project, *args), through_click(project, *args)
    assert (fast.returncode, fast.stderr) == (slow.returncode, slow.stderr)
    assert untimed(fast.stdout) == untimed(slow.stdout)
    assert fast.stdout.strip() or fast.returncode == 2


def untimed(text: str) -> str:
    return re.sub(r'("duration_s": |in )[0-9.e-]+', r"\1T", text)


@pytest.mark.parametrize("args", [
    ["iterate"],
    ["iterate", "--format", "json", "--max-prompt-chars", "4000", "-a", "plan", "--only", "p"],
    ["iterate", "--iteration", "3", "--skip", "todo"],
    ["iterate", "--confirm"],
    ["iterate", "--max-prompt-chars", "10"],  # refused by the command itself
    ["iterate", "--iteration", "0"],  # refused by click
    ["iterate", "-a", "sometimes"],
])
def test_without_click_an_iterate_prints_and_exits_as_through_click(project: Path, args: list[str],
                                                                    tmp_path: Path) -> None:
    """Each run in its own copy: `dun iterate` records where the iteration starts, which the next prompt reads."""
    fast_root, slow_root = tmp_path / "fast", tmp_path / "slow"
    shutil.copytree(project, fast_root)
    shutil.copytree(project, slow_root)
    fast, slow = entry(fast_root, *args), through_click(slow_root, *args)
    assert (fast.returncode, fast.stderr) == (slow.returncode, slow.stderr)
    assert untimed(fast.stdout.replace(str(fast_root), "ROOT")) == untimed(slow.stdout.replace(str(slow_root), "ROOT"))
    assert fast.stdout.strip() or fast.returncode == 2


def test_the_option_tables_read_only_what_they_are_sure_of() -> None:
    assert parse("check", ["--format", "json", "--only", "a", "--only", "b", "-j", "3", "--no-cache"]) == {
        "format": "json", "only": ["a", "b"], "jobs": 3, "no_cache": True}
    assert parse("iterate", ["--max-prompt-chars", "4000", "--confirm"]) == {"max_prompt_chars": 4000,
                                                                             "confirm": True}
    for args in (["--help"], ["-h"], ["--format=json"], ["-vj2"], ["-j", "zero"], ["-j", "0"], ["--format"],
                 ["--format", "--verbose"], ["--color", "blue"], ["-o", "."], ["some/path"], ["--"]):
        assert parse("check", args) is None, args
    for args in (["--max-prompt-chars", "-5"], ["--iteration", "0"], ["-f", "yaml"], ["--bogus"]):
        assert parse("iterate", args) is None, args


def test_a_broken_manifest_is_one_line_and_exit_2(project: Path) -> None:
    write(project, ".dun/plugins/p.yaml", "id: p\nchecks: [{id: x, type: nosuchtype}]\n")
    done = entry(project, "check")
    assert done.returncode == 2 and len(done.stderr.splitlines()) == 1, done.stderr
    assert "Traceback" not in done.stderr and "nosuchtype" in done.stderr


def test_a_reader_that_goes_away_is_no_error(project: Path) -> None:
    for _ in range(2):  # the second run is replayed
        piped = subprocess.run(f"{sys.executable} -m dun check --format json | head -c 5", shell=True, cwd=project,
                               capture_output=True, text=True, timeout=60)
        assert piped.stdout == "{\n  \"" and "Traceback" not in piped.stderr and "Error" not in piped.stderr


def test_an_atexit_callback_still_runs(project: Path) -> None:
    """dun skips the interpreter's teardown only when nothing is registered to run at exit (coverage.py is)."""
    code = ("import atexit, sys; atexit.register(print, 'bye'); sys.argv = ['dun', 'check', '-f', 'json']; "
            "from dun.entry import main; sys.exit(main())")
    for _ in range(2):  # run, then replayed
        done = subprocess.run([sys.executable, "-c", code], cwd=project, capture_output=True, text=True, timeout=60)
        assert done.returncode == 1 and done.stdout.endswith("}\nbye\n"), done.stderr


def test_a_replay_waiting_for_git_loads_only_what_a_run_imports_anyway(project: Path) -> None:
    """The modules loaded while a replay waits for `git status` (`WARM`) are ones a run that is not replayed imports
    anyway, so a changed tree gets them sooner and an unchanged one loses nothing it would have to undo."""
    proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "dun", "check", "--format", "json"], cwd=project,
                          capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=60)
    imported = set(re.findall(r"^import time:\s+\d+ \|\s+\d+ \| +(\S+)$", proc.stderr, re.M))
    assert proc.returncode == 1 and set(WARM) <= imported, sorted(set(WARM) - imported)
    assert "dun.engine.runner" not in WARM  # tests/engine/test_replay.py tells a replay by its absence


def test_a_check_of_another_repository_stops_the_git_started_here(project: Path, tmp_path: Path) -> None:
    """git starts in the current directory before the options are read; `-C PATH` stops it, and the run
    looks at the other repository only. Here the current directory's git could not even list its tree (a broken
    index), which must not matter."""
    other = tmp_path / "other"
    other.mkdir()
    shutil.copytree(project, other, dirs_exist_ok=True)
    (project / ".git" / "index").write_bytes(b"not an index")
    proc = entry(project, "check", "--format", "json", "-C", str(other))
    assert proc.returncode == 1 and f'"root": "{other}"' in proc.stdout, proc.stderr
