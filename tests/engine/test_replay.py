"""The whole-run no-change path: `dun check` replays the output of an identical earlier run whose every result was
reused, and never replays after any change. A command check appends a line to a log each time it really runs."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import git, write

PLUGIN = """\
id: p
checks:
  - id: count
    type: command
    command: "echo run >> {log}; cat notes.txt 2>/dev/null; exit 1"
    inputs: {{}}  # it reads nothing beyond the work tree
  - id: boxes
    type: checkboxes
    files: [MISSION.md]
"""


def age(root: Path) -> None:
    """Every file and directory of the work tree a minute old: outside the racy window, so caches may be kept."""
    past = time.time() - 60
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d != ".git"]
        for name in [*filenames, *dirnames, "."]:
            os.utime(os.path.join(dirpath, name), (past, past))


@pytest.fixture
def project(repo: Path, tmp_path: Path) -> Path:
    write(repo, ".dun/config.yaml", "plugins: {disabled: [python, go, git, mission, hooks, beads, helix, javascript, "
                                    "rust, test-suites]}\n")
    write(repo, ".dun/plugins/p.yaml", PLUGIN.format(log=tmp_path / "runs.log"))
    write(repo, "MISSION.md", "- [ ] one\n- [ ] two\n")
    write(repo, ".gitignore", "ignored/\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "plugin")
    age(repo)
    return repo


def check(repo: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """`dun check --format json`, as a user runs it; `-X importtime` shows whether the checks' runner was loaded at all
    (a replay may load some of the engine while it waits for git: dun/entry.py's WARM, which leaves the runner out)."""
    return subprocess.run([sys.executable, "-X", "importtime", "-m", "dun", "check", "--format", "json", *args],
                          cwd=repo, capture_output=True, text=True, env={**os.environ, **(env or {})}, check=False)


def runs(repo: Path) -> int:
    log = repo.parent / "runs.log"
    return len(log.read_text().splitlines()) if log.exists() else 0


def replayed(proc: subprocess.CompletedProcess[str]) -> bool:
    return " dun.engine.runner" not in proc.stderr


def test_an_identical_run_is_replayed_and_any_change_runs_again(project: Path) -> None:
    first = check(project)
    second = check(project)  # every result reused: stored whole
    third = check(project)
    assert (first.returncode, second.returncode, third.returncode) == (1, 1, 1)
    assert runs(project) == 1 and not replayed(second) and replayed(third)
    assert third.stdout == second.stdout and '"cached": true' in third.stdout

    write(project, "MISSION.md", "- [x] one\n- [ ] two\n")  # a tracked file: the tree's fingerprint
    age(project)
    after_tick = check(project)
    assert not replayed(after_tick) and after_tick.stdout != third.stdout and runs(project) == 2
    write(project, "notes.txt", "untracked\n")  # an untracked file changes what the command check sees
    age(project)
    after_note = check(project)
    assert not replayed(after_note) and "untracked" in after_note.stdout and runs(project) == 3


def test_no_replay_after_a_config_or_manifest_change_or_when_caching_is_off(project: Path) -> None:
    check(project)
    check(project)
    assert replayed(check(project))
    assert not replayed(check(project, "--no-cache"))
    assert not replayed(check(project, env={"DUN_NO_CACHE": "1"}))
    assert not replayed(check(project, "--format", "text"))  # other arguments: another run
    write(project, ".dun/plugins/q.yaml", "id: q\nchecks:\n  - id: extra\n    type: command\n    command: 'true'\n")
    age(project)
    git(project, "add", "-A")
    git(project, "commit", "-qm", "extra")
    out = check(project)
    assert not replayed(out) and '"id": "extra"' in out.stdout


def test_an_ignored_input_of_a_reused_result_prevents_the_replay(project: Path) -> None:
    """An ignored file is outside the tree's fingerprint: the stamps of declared inputs catch it."""
    write(project, "ignored/cov.xml", '<coverage line-rate="0.9"><packages/></coverage>\n')
    write(project, ".dun/plugins/c.yaml", "id: c\nchecks:\n  - id: cov\n    type: coverage\n"
                                           "    file: ignored/cov.xml\n    threshold: 80\n")
    git(project, "add", ".dun")
    git(project, "commit", "-qm", "coverage")
    age(project)
    check(project)
    check(project)
    assert replayed(check(project))
    write(project, "ignored/cov.xml", '<coverage line-rate="0.5"><packages/></coverage>\n')
    age(project)
    out = check(project)
    assert not replayed(out) and '"cached": false' in out.stdout


def test_a_run_from_a_subdirectory_is_replayed_and_git_dir_in_the_environment_is_not(project: Path) -> None:
    """The replay finds the repository's cache without asking git: the nearest directory holding `.git`. With
    GIT_DIR or GIT_WORK_TREE set it does not guess, and the run goes on as usual."""
    sub = project / "deeper" / "down"
    sub.mkdir(parents=True)
    age(project)  # `python -m` puts the new directory on sys.path, whose look the replay keeps
    check(sub)
    second = check(sub)
    assert replayed(check(sub)) and check(sub).stdout == second.stdout
    env = {"GIT_DIR": str(project / ".git"), "GIT_WORK_TREE": str(project)}
    check(sub, env=env)
    check(sub, env=env)
    assert not replayed(check(sub, env=env))


def test_a_replay_loads_the_runs_modules_while_git_looks_only_after_a_run_that_was_not_replayed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Results stored after the last replayable output: that run had to check, and so will this one, likely; a
    replayed run stores nothing, so after it the wait for git is left to git."""
    from dun.engine import replay as replay_module

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    root = str(tmp_path)
    directory = Path(replay_module.cache_dir_path(root))
    directory.mkdir(parents=True)
    assert not replay_module._missed_last(root)  # nothing stored yet
    (directory / replay_module.FILE).write_bytes(b"")
    (directory / replay_module.RESULTS).write_bytes(b"")
    os.utime(directory / replay_module.FILE, ns=(10**18, 10**18))
    os.utime(directory / replay_module.RESULTS, ns=(2 * 10**18, 2 * 10**18))
    assert replay_module._missed_last(root)
    os.utime(directory / replay_module.FILE, ns=(3 * 10**18, 3 * 10**18))
    assert not replay_module._missed_last(root)


def test_installed_plugins_are_watched_where_site_packages_lies_inside_the_stdlib_directory(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A Python without a venv (a CI runner's, a container's) keeps site-packages under lib/python3.X: a plugin
    upgraded there must stop the replay, while the standard library's own modules are not looked at."""
    import sysconfig
    import types

    from dun.engine.replay import module_looks

    lib = tmp_path / "lib" / "python3.x"
    site = lib / "site-packages"
    write(site, "dun_plugin_x.py", "X = 1\n")
    write(lib, "json_like.py", "X = 1\n")
    monkeypatch.setattr(sysconfig, "get_paths", lambda: {"stdlib": str(lib), "platstdlib": str(lib),
                                                          "purelib": str(site), "platlib": str(site)})
    for name, path in (("dun_plugin_x", site / "dun_plugin_x.py"), ("json_like", lib / "json_like.py")):
        module = types.ModuleType(name)
        module.__file__ = str(path)
        monkeypatch.setitem(sys.modules, name, module)
    looks = module_looks()
    assert str(site / "dun_plugin_x.py") in looks
    assert str(lib / "json_like.py") not in looks


def test_a_no_cache_run_ends_the_replay_of_the_output_it_contradicts(project: Path, tmp_path: Path) -> None:
    """`--no-cache` is the way back to the truth after something dun cannot see changed (here a file outside the
    repository that the check reads without declaring it): it stores what it found, and the next plain run must say
    the same. The output stored for replay before it used to be printed again."""
    outside = write(tmp_path, "outside.txt", "bad\n")
    write(project, ".dun/plugins/p.yaml", f"id: p\nchecks:\n  - id: count\n    type: command\n"
                                          f"    command: 'grep -q ok {outside}'\n    inputs: {{}}\n")
    git(project, "commit", "-qam", "reads outside")
    age(project)
    check(project)
    check(project)
    assert replayed(check(project))
    write(tmp_path, "outside.txt", "okk\n")
    assert check(project, "--no-cache").returncode == 0
    after = check(project)
    assert after.returncode == 0 and not replayed(after)
