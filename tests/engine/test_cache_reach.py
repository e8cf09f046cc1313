"""Cache truth for inputs reached from outside the work tree: a cached run agrees with a fresh one after an edit to a
file that a check reads through a link to a directory (a declared `dir/**` glob) or through an editable install
outside the repository (`pip install -e ../lib`, a `.pth` line in the project's virtual environment). Both were
stale before: the walk did not follow links to directories, and only site-packages' listing was looked at. Also
through git's config: where the hooks live (core.hooksPath)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import git, write

from dun.engine.model import CheckResult
from dun.engine.session import open_session

DISABLED = "plugins: {disabled: [python, go, git, mission, hooks, beads, helix, javascript, rust, test-suites]}\n"


def age(*bases: Path) -> None:
    for base in bases:
        for dirpath, dirnames, filenames in os.walk(base):
            dirnames[:] = [d for d in dirnames if d != ".git"]
            for name in [*filenames, *dirnames, "."]:
                os.utime(os.path.join(dirpath, name), ns=(1_600_000_000_000_000_000,) * 2, follow_symlinks=False)


def result(repo: Path, check: str, fresh: bool = False) -> CheckResult:
    return next(r for r in open_session(repo, fresh=fresh).report().results if r.id == check)


def agree(repo: Path, check: str) -> None:
    cached, fresh = result(repo, check), result(repo, check, fresh=True)
    assert (cached.status, cached.signal) == (fresh.status, fresh.signal)


def project(repo: Path, command: str, inputs: str) -> None:
    write(repo, ".dun/config.yaml", DISABLED)
    write(repo, ".gitignore", ".venv/\ndata/\n")
    write(repo, ".dun/plugins/r.yaml", f"id: r\nchecks:\n  - id: reads\n    type: command\n"
                                       f"    command: '{command}'\n    inputs: {inputs}\n")
    git(repo, "add", "-A")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "plugin")


def test_a_declared_glob_follows_a_link_to_a_directory_outside(repo: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    write(outside, "x.txt", "ok\n")
    project(repo, "grep -q ok data/linked/x.txt", "{files: ['data/**']}")
    (repo / "data").mkdir()
    (repo / "data/linked").symlink_to(outside)
    age(repo, outside)
    open_session(repo).report()
    assert result(repo, "reads").cached  # reused while unchanged
    write(outside, "x.txt", "no\n")
    age(outside)
    agree(repo, "reads")


def test_an_editable_install_outside_the_repository_is_an_input(repo: Path, tmp_path: Path) -> None:
    lib = tmp_path / "lib"
    write(lib, "extlib.py", "X = 1\n")
    project(repo, '{python} -c "import extlib; assert extlib.X == 1"', "{}")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(repo / ".venv")], check=True)
    (site,) = (repo / ".venv/lib").glob("python*/site-packages")
    (site / "lib.pth").write_text(f"{lib}\n")
    age(repo, lib)
    open_session(repo).report()
    assert result(repo, "reads").cached  # reused while unchanged
    write(lib, "extlib.py", "X = 2\n")
    age(lib)
    agree(repo, "reads")


def test_where_git_looks_for_hooks_is_an_input_of_the_hooks_check(repo: Path) -> None:
    """git-hooks read the hooks where core.hooksPath says: setting it (here, in the repository's config) moves them."""
    write(repo, ".dun/config.yaml", DISABLED.replace(" hooks,", ""))
    write(repo, ".pre-commit-config.yaml", "repos: []\n")
    git(repo, "add", "-A")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "hooks")
    hook = write(repo, ".git/hooks/pre-commit", "#!/bin/sh\n# pre-commit\n")
    age(repo, hook.parent)
    open_session(repo).report()
    assert result(repo, "git-hooks").cached
    git(repo, "config", "core.hooksPath", ".elsewhere")
    agree(repo, "git-hooks")



def test_what_a_link_to_a_directory_outside_holds_is_part_of_the_work_tree(repo: Path, tmp_path: Path) -> None:
    """git sees a link's text, not what it points at: a file edited beneath a linked directory outside the
    repository, reached through a tracked link, an untracked one, or the check's `cwd:`, changes what the check reads
    (before, only the directory's own stamp, its listing, was looked at)."""
    outside = tmp_path / "outside"
    write(outside, "lib/x.txt", "ok\n")
    write(outside, "other/x.txt", "ok\n")
    write(outside, "run/x.txt", "ok\n")
    write(repo, ".dun/config.yaml", DISABLED)
    write(repo, ".dun/plugins/r.yaml", "id: r\nchecks:\n"
          "  - {id: tracked, type: command, command: 'grep -q ok vendor/x.txt', inputs: {}}\n"
          "  - {id: untracked, type: command, command: 'grep -q ok loose/x.txt', inputs: {}}\n"
          "  - {id: cwd, type: command, command: 'grep -q ok x.txt', cwd: sub, inputs: {}}\n")
    (repo / "vendor").symlink_to(outside / "lib")
    (repo / "sub").symlink_to(outside / "run")
    git(repo, "add", "-A")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "links")
    (repo / "loose").symlink_to(outside / "other")
    age(repo, outside)
    open_session(repo).report()
    assert all(result(repo, c).cached for c in ("tracked", "untracked", "cwd"))  # reused while unchanged
    for name in ("lib", "other", "run"):
        write(outside, f"{name}/x.txt", "no\n")  # same size, rewritten in place: no directory changes
    for check in ("tracked", "untracked", "cwd"):
        agree(repo, check)
        assert result(repo, check).status.value == "fail"


def test_an_untracked_link_to_a_file_outside_is_looked_through(repo: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    write(outside, "settings.txt", "ok\n")
    project(repo, "grep -q ok settings.txt", "{}")
    (repo / "settings.txt").symlink_to(outside / "settings.txt")
    age(repo, outside)
    open_session(repo).report()
    assert result(repo, "reads").cached
    write(outside, "settings.txt", "no\n")
    agree(repo, "reads")


def test_a_linked_directory_too_large_to_walk_is_never_vouched_for(repo: Path, tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Past the walk's limit what the directory holds is unknown: the check runs every time."""
    from dun.core import walk

    monkeypatch.setattr(walk, "WALK_LIMIT", 3)  # the one walk's bound (indexlook.tree_hash takes it as it walks)
    outside = tmp_path / "outside"
    for n in range(5):
        write(outside, f"f{n}.txt", "ok\n")
    project(repo, "grep -q ok vendor/f0.txt", "{}")
    (repo / "vendor").symlink_to(outside)
    git(repo, "add", "-A")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "link")
    age(repo, outside)
    open_session(repo).report()
    assert not result(repo, "reads").cached


def test_a_pythonpath_directory_outside_the_repository_is_an_input(repo: Path, tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """PYTHONPATH puts a directory first on the import path (set for the whole night, the same in every run): a
    module edited there changes what `{python}` imports, though no variable changed."""
    lib = tmp_path / "lib"
    write(lib, "extlib.py", "X = 1\n")
    monkeypatch.setenv("PYTHONPATH", str(lib))
    project(repo, '{python} -c "import extlib; assert extlib.X == 1"', "{}")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(repo / ".venv")], check=True)
    age(repo, lib)
    open_session(repo).report()
    assert result(repo, "reads").cached  # reused while unchanged
    write(lib, "extlib.py", "X = 2\n")
    age(lib)
    agree(repo, "reads")
