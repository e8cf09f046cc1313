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

