"""dun's own git processes never run a program the repository names: each way an agent could plant one in `.git/`
or the work tree, tried against every git operation dun performs (status and listing, the work-tree hash, diffs,
show, grep, its restore commits, and `dun check` end to end)."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from dun.core.git import changed_paths, diff_stat, git, head, worktree_tree
from dun.core.gitsafe import filter_drivers, neutral_env
from dun.core.snapshot import Snapshot
from tests.conftest import git as run_git
from tests.conftest import write


def _script(path: Path, canary: Path) -> str:
    """An executable that leaves `canary` behind and passes its input through (as a filter would)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!/bin/sh\ntouch '{canary}'\ncat\n", encoding="utf-8")
    path.chmod(0o755)
    return str(path)


def _plant_config(root: Path, key: str, value: str) -> None:
    run_git(root, "config", key, value)


def _hooks(root: Path, outside: Path) -> None:
    for name in ("post-index-change", "pre-commit", "commit-msg", "post-commit", "prepare-commit-msg",
                 "pre-auto-gc", "reference-transaction"):
        _script(root / ".git" / "hooks" / name, outside / f"hook-{name}")


def _hooks_path(root: Path, outside: Path) -> None:
    _script(root / "myhooks" / "post-index-change", outside / "hookspath")
    _script(root / "myhooks" / "pre-commit", outside / "hookspath-commit")
    _plant_config(root, "core.hooksPath", str(root / "myhooks"))


def _fsmonitor(root: Path, outside: Path) -> None:
    _plant_config(root, "core.fsmonitor", _script(outside.parent / "bin" / "fsmon", outside / "fsmonitor"))


def _filter(root: Path, outside: Path) -> None:
    prog = _script(outside.parent / "bin" / "filt", outside / "filter")
    _plant_config(root, "filter.evil.clean", prog)
    _plant_config(root, "filter.evil.smudge", prog)
    write(root, ".gitattributes", "* filter=evil\n")


def _filter_process(root: Path, outside: Path) -> None:
    _plant_config(root, "filter.proc.process", _script(outside.parent / "bin" / "proc", outside / "process"))
    _plant_config(root, "filter.proc.required", "true")
    write(root, ".gitattributes", "*.md filter=proc\n")


def _filter_by_include(root: Path, outside: Path) -> None:
    prog = _script(outside.parent / "bin" / "inc", outside / "include")
    write(root, "innocent.cfg", f'[filter "inc"]\n\tclean = {prog}\n')
    _plant_config(root, "include.path", str(root / "innocent.cfg"))
    write(root, "sub/.gitattributes", "* filter=inc\n")


def _gpg(root: Path, outside: Path) -> None:
    _plant_config(root, "commit.gpgSign", "true")
    _plant_config(root, "gpg.program", _script(outside.parent / "bin" / "gpg", outside / "gpg"))


def _diff_drivers(root: Path, outside: Path) -> None:
    _plant_config(root, "diff.external", _script(outside.parent / "bin" / "ext", outside / "external"))
    _plant_config(root, "diff.evil.textconv", _script(outside.parent / "bin" / "tc", outside / "textconv"))
    _plant_config(root, "core.pager", _script(outside.parent / "bin" / "pager", outside / "pager"))
    write(root, ".gitattributes", "* diff=evil\n")


PLANTS: dict[str, Callable[[Path, Path], None]] = {
    "hooks": _hooks, "hooksPath": _hooks_path, "fsmonitor": _fsmonitor, "filter": _filter,
    "filter-process": _filter_process, "filter-include": _filter_by_include, "gpg": _gpg,
    "diff-drivers": _diff_drivers,
}


def _dun_git_operations(root: Path) -> None:
    """Every kind of git call dun makes on its own account."""
    write(root, "README.md", "# changed by the agent\n")
    write(root, "new.txt", "untracked\n")
    before = head(root)
    snap = Snapshot(root)
    snap.files()
    snap.fingerprint()
    snap.tree()
    tree = worktree_tree(root)
    assert tree is not None
    diff_stat(root, before or "HEAD")
    changed_paths(root, tree, tree)
    git(root, "show", "HEAD:README.md", check=False)
    git(root, "grep", "-c", "demo", "HEAD", "--", "*.md", check=False)
    # a restore commit, as dun/trust/verify.py makes it
    git(root, "add", "-A", "--", "README.md", check=False)
    assert git(root, "commit", "-q", "-m", "dun: restore", "--", "README.md", check=False).returncode == 0


@pytest.mark.parametrize("plant", sorted(PLANTS))
def test_no_planted_program_runs(repo: Path, tmp_path: Path, plant: str) -> None:
    outside = tmp_path / "canaries"
    outside.mkdir()
    PLANTS[plant](repo, outside)
    _dun_git_operations(repo)
    assert sorted(p.name for p in outside.iterdir()) == []
    assert run_git(repo, "log", "-1", "--format=%s") == "dun: restore\n"


@pytest.mark.parametrize("plant", ["hooks", "fsmonitor", "filter", "gpg"])
def test_planted_programs_would_run_without_it(repo: Path, tmp_path: Path, plant: str) -> None:
    """The plants above are real: plain git runs them (so the test above can fail)."""
    outside = tmp_path / "canaries"
    outside.mkdir()
    PLANTS[plant](repo, outside)
    write(repo, "README.md", "# changed\n")
    subprocess.run(["git", "status"], cwd=repo, capture_output=True, check=False)
    subprocess.run(["git", "add", "-A"], cwd=repo, capture_output=True, check=False)
    subprocess.run(["git", "commit", "-q", "-m", "x"], cwd=repo, capture_output=True, check=False)
    assert list(outside.iterdir())


def test_dun_check_runs_no_planted_program(repo: Path, tmp_path: Path) -> None:
    """`dun check` starts git before it loads (dun/entry.py): that git is neutral too."""
    outside = tmp_path / "canaries"
    outside.mkdir()
    for plant in ("hooks", "fsmonitor", "filter"):
        PLANTS[plant](repo, outside)
    write(repo, "README.md", "# dirty\n")
    proc = subprocess.run([sys.executable, "-m", "dun", "check"], cwd=repo, capture_output=True, text=True,
                          check=False)
    assert "Traceback" not in proc.stderr
    assert sorted(p.name for p in outside.iterdir()) == []


def test_filters_are_an_opt_in(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    outside = tmp_path / "canaries"
    outside.mkdir()
    _filter(repo, outside)
    monkeypatch.setenv("DUN_GIT_FILTERS", "1")
    write(repo, "README.md", "# changed\n")
    worktree_tree(repo)
    assert (outside / "filter").exists()


def test_filter_drivers_found_in_every_config_file(repo: Path, tmp_path: Path) -> None:
    home = Path(os.environ["HOME"])
    write(home, ".gitconfig", '[filter "lfs"]\n\tclean = git-lfs clean -- %f\n[include]\n\tpath = ~/more.cfg\n')
    write(home, "more.cfg", "[filter.Old]\n\tsmudge = x\n")
    write(home, ".config/git/config", '[filter "a \\"q\\""]\n\tclean = y\n')
    _plant_config(repo, "filter.local.clean", "z")
    env = {**os.environ, "GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "filter.envset.clean",
           "GIT_CONFIG_VALUE_0": "w"}
    assert filter_drivers(str(repo / "sub" / "dir"), env) == {"lfs", "old", 'a "q"', "local", "envset"}


def test_hostile_config_files_never_block(repo: Path, tmp_path: Path) -> None:
    """A FIFO or /dev/zero named as an included config file is skipped, not read."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with (repo / ".git" / "config").open("a", encoding="utf-8") as fh:  # git itself would block on these
        fh.write(f"[include]\n\tpath = {fifo}\n\tpath = /dev/zero\n")
    assert stat.S_ISFIFO(fifo.stat().st_mode)
    assert filter_drivers(str(repo), dict(os.environ)) == set()


def test_user_config_pairs_are_kept(repo: Path) -> None:
    env = neutral_env(str(repo), {"GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "user.name",
                                  "GIT_CONFIG_VALUE_0": "someone"})
    assert env["GIT_CONFIG_KEY_0"] == "user.name"
    assert env["GIT_CONFIG_KEY_1"] == "core.fsmonitor"
    proc = subprocess.run(["git", "config", "user.name"], cwd=repo, env=env, capture_output=True, text=True,
                          check=False)
    assert proc.stdout.strip() == "someone"


def test_a_linked_user_config_is_read(repo: Path, tmp_path: Path) -> None:
    """~/.gitconfig linked from a dotfiles repository is the user's config: its filters are found (and switched
    off) like any other's; cache files are never read through links, config files are."""
    home = Path(os.environ["HOME"])
    dotfiles = write(tmp_path, "dotfiles/gitconfig", '[filter "lfs"]\n\tclean = git-lfs clean -- %f\n')
    (home / ".gitconfig").symlink_to(dotfiles)
    assert "lfs" in filter_drivers(str(repo), dict(os.environ))


def test_file_mode_off_read_as_git_reads_it(repo: Path, tmp_path: Path) -> None:
    from dun.core.gitsafe import file_mode_off

    env = {"HOME": str(tmp_path / "home"), "GIT_CONFIG_NOSYSTEM": "1"}
    assert not file_mode_off(str(repo), env)  # `git init` wrote core.filemode = true
    git(repo, "config", "core.fileMode", "false")
    assert file_mode_off(str(repo), env)
    write(tmp_path, "inc", "[core]\n  filemode  # a bare key is true\n")
    git(repo, "config", "include.path", str(tmp_path / "inc"))  # read where it stands: after the line above
    assert not file_mode_off(str(repo), env)
    env.update({"GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "core.fileMode", "GIT_CONFIG_VALUE_0": "off"})
    assert file_mode_off(str(repo), env)
