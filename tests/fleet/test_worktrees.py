"""`dun loop --worktree NAME [--branch B]`'s helpers on real git repositories."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest import git, write

from dun.core.errors import UsageError
from dun.fleet.worktrees import ensure_worktree, list_worktrees, main_root, prepare


def test_creates_once_then_finds_it(repo: Path) -> None:
    first, created = ensure_worktree(repo, "auth")
    assert created and first.path == (repo / ".dun/worktrees/auth").resolve() and first.branch == "dun/auth"
    assert (first.path / "README.md").read_text() == "# demo\n"
    again, created = ensure_worktree(repo, "auth")
    assert not created and again == first
    assert [wt.branch for wt in list_worktrees(repo)] == ["main", "dun/auth"]


def test_main_tree_stays_clean_and_exclude_is_written_once(repo: Path) -> None:
    ensure_worktree(repo, "a")
    ensure_worktree(repo, "b")
    assert git(repo, "status", "--porcelain") == ""
    exclude = (repo / ".git/info/exclude").read_text()
    assert exclude.count("/.dun/worktrees/\n") == 1


def test_uses_an_existing_branch_and_refuses_a_different_one_later(repo: Path) -> None:
    git(repo, "branch", "topic")
    wt, _ = ensure_worktree(repo, "t", "topic")
    assert wt.branch == "topic"
    with pytest.raises(UsageError, match="worktree t is on topic, not dun/other"):
        ensure_worktree(repo, "t", "dun/other")


def test_a_branch_checked_out_elsewhere_is_a_one_line_error(repo: Path) -> None:
    with pytest.raises(UsageError) as info:
        ensure_worktree(repo, "m", "main")
    assert str(info.value).startswith("git worktree: ") and "\n" not in str(info.value)
    assert "main" in str(info.value)


@pytest.mark.parametrize("name", ["../x", ".hidden", "a b", "x.lock", "", "a/b"])
def test_invalid_names_are_refused(repo: Path, name: str) -> None:
    with pytest.raises(UsageError, match="invalid worktree name"):
        ensure_worktree(repo, name)


def test_invalid_branch_is_refused(repo: Path) -> None:
    with pytest.raises(UsageError):
        ensure_worktree(repo, "x", "bad..branch")


def test_a_deleted_worktree_directory_is_recreated(repo: Path) -> None:
    wt, _ = ensure_worktree(repo, "gone")
    write(wt.path, "note.txt", "x\n")
    shutil.rmtree(wt.path)
    again, created = ensure_worktree(repo, "gone")
    assert created and again.path.is_dir() and again.branch == "dun/gone"


def test_a_foreign_directory_in_the_way_is_refused(repo: Path) -> None:
    write(repo, ".dun/worktrees/busy/file.txt", "mine\n")
    with pytest.raises(UsageError, match="exists and is not a worktree"):
        ensure_worktree(repo, "busy")


def test_prepare_from_inside_a_worktree_uses_the_main_tree_and_its_config(repo: Path, tmp_path: Path) -> None:
    write(repo, ".dun/config.yaml", "fleet:\n  worktrees_dir: ../trees\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "config")
    first = prepare(repo, "one")
    assert first.path == (tmp_path / "trees" / "one").resolve()
    assert main_root(first.path) == repo.resolve()
    second = prepare(first.path, "two")  # run from inside the first worktree
    assert second.path == (tmp_path / "trees" / "two").resolve()
    assert "/../trees/" not in (repo / ".git/info/exclude").read_text()


def test_prepare_needs_git_and_a_commit(plain_dir: Path, tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="not a git repository"):
        prepare(plain_dir, "x")
    empty = tmp_path / "empty"
    empty.mkdir()
    git(empty, "init", "-q")
    with pytest.raises(UsageError, match=r"^git worktree: "):
        prepare(empty, "x")
