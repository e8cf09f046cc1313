"""The shared look at a git work tree: the file listing every check reuses, and the fingerprint of the tree."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from conftest import git, write

from dun.core.snapshot import Snapshot, start_early


def listing(root: Path) -> list[str]:
    out = git(root, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
    return sorted(p for p in out.split("\0") if p)


def test_the_listing_is_tracked_plus_untracked_not_ignored(repo: Path) -> None:
    write(repo, ".gitignore", "build/\n")
    write(repo, "build/out.o", "x")
    write(repo, "new/deep/file.txt", "x")
    write(repo, "README.md", "# changed\n")
    (repo / "gone.txt").write_text("x")
    git(repo, "add", "gone.txt")
    (repo / "gone.txt").unlink()  # tracked, deleted from the work tree: still listed, as by ls-files
    assert sorted(Snapshot(repo).files().paths()) == listing(repo)


def test_the_fingerprint_follows_content_head_and_index(repo: Path) -> None:
    def fp() -> str | None:
        return Snapshot(repo).fingerprint()

    seen = [fp()]
    write(repo, "a.txt", "one\n")  # untracked
    seen.append(fp())
    write(repo, "a.txt", "two\n")  # same size, other content
    seen.append(fp())
    git(repo, "add", "a.txt")  # staged
    seen.append(fp())
    git(repo, "commit", "-qm", "a")  # HEAD
    seen.append(fp())
    write(repo, "README.md", "# demo, edited\n")  # tracked, modified
    seen.append(fp())
    assert len(set(seen)) == len(seen)
    assert fp() == seen[-1]  # and unchanged means equal


def test_a_rename_and_a_name_with_spaces_are_hashed_by_their_content(repo: Path) -> None:
    git(repo, "mv", "README.md", "1 read me.md")
    before = Snapshot(repo).fingerprint()
    write(repo, "1 read me.md", "# other\n")
    assert Snapshot(repo).fingerprint() != before
    assert "1 read me.md" in Snapshot(repo).files().paths()


def test_a_failing_git_gives_no_fingerprint(plain_dir: Path) -> None:
    snapshot = Snapshot(plain_dir)
    assert snapshot.fingerprint() is None
    with pytest.raises(subprocess.CalledProcessError):
        snapshot.files().paths()


def test_the_early_status_is_claimed_only_by_its_own_repository(repo: Path, tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    write(repo, "sub/x.txt", "x")
    monkeypatch.chdir(repo / "sub")  # git status from a subdirectory still sees the whole repository
    early = start_early()
    assert early is not None
    snapshot = early.claim(repo)
    assert snapshot is not None and "sub/x.txt" in snapshot.files().paths()
    assert early.claim(repo) is None  # claimed once
    other = tmp_path / "other"
    other.mkdir()
    git(other, "init", "-q")
    early = start_early()
    assert early is not None and early.claim(other) is None
    assert early.claim(repo) is None  # given up, not kept for another repository


def test_deleted_names_tracked_files_missing_from_the_work_tree(repo: Path) -> None:
    write(repo, "keep.txt", "x")
    write(repo, "gone.txt", "x")
    write(repo, "staged-gone.txt", "x")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "files")
    (repo / "gone.txt").unlink()
    git(repo, "rm", "-q", "staged-gone.txt")  # out of the index too: not listed, so not "deleted"
    snapshot = Snapshot(repo)
    assert snapshot.deleted() == {"gone.txt"}
    assert "gone.txt" in snapshot.files().paths() and "staged-gone.txt" not in snapshot.files().paths()


def test_head_and_tree_from_one_status_equal_what_git_computes(repo: Path) -> None:
    """The loop reads HEAD and the work-tree hash from its look at the tree: they must be git's own answers, clean
    (HEAD's tree) or not (a copy of the index with everything added)."""
    from dun.core.git import head, worktree_tree

    clean = Snapshot(repo)
    assert clean.head() == head(repo)
    assert clean.tree() == git(repo, "rev-parse", "HEAD^{tree}").strip() == worktree_tree(repo)
    write(repo, "README.md", "# changed\n")
    write(repo, "new dir/untracked.txt", "x\n")
    dirty = Snapshot(repo)
    assert dirty.head() == head(repo)
    assert dirty.tree() == worktree_tree(repo) != clean.tree()
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "second")
    after = Snapshot(repo)
    assert after.head() == head(repo) != clean.head()
    assert after.tree() == dirty.tree()  # the same content, now committed


def test_no_head_before_the_first_commit(tmp_path: Path) -> None:
    from dun.core.git import worktree_tree

    root = tmp_path / "empty"
    root.mkdir()
    git(root, "init", "-q")
    write(root, "a.txt", "a\n")
    snapshot = Snapshot(root)
    assert snapshot.head() is None
    assert snapshot.tree() == worktree_tree(root) is not None


def test_diff_stat_counts_changed_and_untracked_files_as_git_lists_them(repo: Path) -> None:
    from dun.core.git import diff_stat

    base = git(repo, "rev-parse", "HEAD").strip()
    assert diff_stat(repo, base) == ("", 0)
    write(repo, "one.txt", "1\n")
    git(repo, "add", "one.txt")
    git(repo, "commit", "-q", "-m", "one")
    write(repo, "README.md", "# edited\n")
    write(repo, "a file changed.txt", "untracked, with spaces\n")
    text, count = diff_stat(repo, base)
    names = git(repo, "diff", "--name-only", base).split("\n")
    assert "2 files changed" in text and count == len([n for n in names if n]) + 1 == 3
    assert diff_stat(repo, base, untracked=[]) == (text, 2)


def test_an_index_out_of_str_order_is_matched_all_the_same(repo: Path) -> None:
    """git sorts the index bytewise; a name that is not UTF-8 (byte 0xff) sorts after U+E000 there and before it
    as a str. Such a listing is not trusted to be in order, and matching still finds every file."""
    from dun.core.globs import match_files

    for name in (b"d/x\xff.txt", "d/x\ue000.txt".encode()):
        path = os.path.join(os.fsencode(repo), name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as fh:
            fh.write(b"x\n")
    git(repo, "add", "-A")
    listing = Snapshot(repo).files()
    assert not listing.in_order
    assert sorted(match_files(listing, ["d/*.txt"])) == sorted(["d/x\udcff.txt", "d/x\ue000.txt"])
    assert len(match_files(listing, ["*.txt"])) == 2


def test_the_early_listing_from_a_subdirectory_is_the_whole_repository(repo: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    write(repo, "sub/x.txt", "x")
    write(repo, "top.txt", "x")
    git(repo, "add", "-A")
    monkeypatch.chdir(repo / "sub")
    early = start_early()
    snapshot = early.claim(repo.resolve()) if early is not None else None
    assert snapshot is not None and {"top.txt", "sub/x.txt", "README.md"} <= set(snapshot.files().paths())


def test_untracked_files_fold_as_git_status_normal_folds_them(repo: Path) -> None:
    """The git-status check names untracked files as `--untracked-files=normal` does, without running it."""
    from dun.core.snapshot import fold_untracked

    for name in ("src/a.py", "src/sub/b.py", "docs/x.md", "gone/y.txt", "keep/deep/t.txt"):
        write(repo, name, "tracked\n")
    write(repo, ".gitignore", "build/\n*.log\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "tree")
    (repo / "gone" / "y.txt").unlink()  # deleted from the tree, still in the index: its directory is not new
    for name in ("new.txt", "src/c.py", "src/newdir/d.py", "src/newdir/deep/e.py", "fresh/f.txt",
                 "fresh/deeper/g.txt", "gone/z.txt", "docs-x/file", "a b/c d.txt", "keep/deep/new/u.txt",
                 "keep/v.txt", "build/out.o", "only-ignored/x.log", "src/sub/w.log"):
        write(repo, name, "new\n")
    (repo / "empty" / "dir").mkdir(parents=True)
    (repo / "nested").mkdir()
    git(repo / "nested", "init", "-q")  # a repository inside: one entry in either mode
    write(repo, "nested/inner.txt", "x\n")

    def untracked(mode: str) -> list[str]:
        out = git(repo, "status", "--porcelain=v2", "-z", f"--untracked-files={mode}")
        return [r[2:] for r in out.split("\0") if r.startswith("? ")]

    tracked = git(repo, "ls-files", "-z", "--cached")
    assert fold_untracked(untracked("all"), tracked) == untracked("normal")
    assert "src/newdir/" in untracked("normal") and "nested/" in untracked("normal")  # the layout folds at all


def test_ignored_records_leave_the_status_and_a_renames_original_path_stays() -> None:
    from dun.core.fingerprint import entries, split_ignored

    status = (b"# branch.oid abc\0001 .M N... 100644 100644 100644 a b x.py\0"
              b"2 R. N... 100644 100644 100644 a b R100 new.py\0! old\0! gen/_version.py\0! .venv/\0? u.py\0")
    kept, ignored = split_ignored(status)
    assert ignored == [b"gen/_version.py", b".venv/"]
    assert [name for _, name in entries(kept)] == [b"x.py", b"new.py", b"u.py"]
    assert b"! old" in kept  # a file once named "! old", renamed: a path, not an ignored record


def test_git_names_what_it_ignores_in_a_python_project_only(repo: Path) -> None:
    """From the root or any directory below it alike; a C project's objects are not listed one by one."""
    from dun.core.spawn import IGNORED_ARG, status_args

    (repo / "src/deep").mkdir(parents=True)
    assert IGNORED_ARG not in status_args(str(repo)) and IGNORED_ARG not in status_args(str(repo / "src/deep"))
    write(repo, "pyproject.toml", "[project]\nname = 'x'\n")
    assert IGNORED_ARG in status_args(str(repo)) and IGNORED_ARG in status_args(str(repo / "src/deep"))
