"""The `git-status` check type against real repositories, plus the porcelain v2 parser."""

from __future__ import annotations

import subprocess

import pytest
from checks_support import check, git, write

from dun.checks.git_status import parse_porcelain_v2
from dun.engine.model import Item, Status

GS = "type: git-status"


def test_clean_tree_passes(repo):
    result = check(repo, GS)
    assert result.status is Status.PASS
    assert result.signal == "clean working tree on main"
    assert result.items == []


def test_each_kind_of_change_is_one_item_per_path(repo):
    write(repo, "keep.txt", "keep\n")
    write(repo, "old name.txt", "rename me\n")
    write(repo, "doomed.txt", "bye\n")
    write(repo, "both.txt", "1\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "files")
    write(repo, "README.md", "# changed\n")  # modified, unstaged
    write(repo, "staged.txt", "new\n")
    git(repo, "add", "staged.txt")  # added, staged
    write(repo, "both.txt", "2\n")
    git(repo, "add", "both.txt")
    write(repo, "both.txt", "3\n")  # staged and modified again
    (repo / "doomed.txt").unlink()  # deleted, unstaged
    git(repo, "mv", "old name.txt", "new name.txt")  # renamed, staged
    write(repo, "untracked file.txt", "?\n")
    result = check(repo, GS)
    assert result.status is Status.FAIL
    assert result.signal == "5 uncommitted, 1 untracked"
    assert sorted(result.items, key=lambda i: i.file or "") == [
        Item("uncommitted: modified", "README.md"),
        Item("uncommitted: modified (staged), modified", "both.txt"),
        Item("uncommitted: deleted", "doomed.txt"),
        Item("uncommitted: renamed (staged)", "new name.txt"),
        Item("uncommitted: added (staged)", "staged.txt"),
        Item("untracked", "untracked file.txt"),
    ]
    assert "git add" in (result.next or "")


def test_ignored_files_are_not_reported(repo):
    write(repo, ".gitignore", "*.log\n")
    git(repo, "add", ".gitignore")
    git(repo, "commit", "-q", "-m", "ignore")
    write(repo, "debug.log", "noise\n")
    assert check(repo, GS).status is Status.PASS


def test_untracked_can_be_turned_off(repo):
    write(repo, "scratch.txt", "x\n")
    assert check(repo, GS).status is Status.FAIL
    result = check(repo, GS + "\nuntracked: false")
    assert result.status is Status.PASS


def test_ignore_globs_leave_paths_out(repo):
    write(repo, "src/a.py", "a\n")
    write(repo, "gen/out.py", "g\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "src")
    write(repo, "src/a.py", "changed\n")
    write(repo, "gen/out.py", "regenerated\n")
    write(repo, "notes.tmp", "scratch\n")
    result = check(repo, GS + "\nignore: ['gen/**', '*.tmp']")
    assert result.status is Status.FAIL
    assert result.items == [Item("uncommitted: modified", "src/a.py")]
    everything = check(repo, GS + "\nignore: ['gen/**', '*.tmp', 'src/*.py']")
    assert everything.status is Status.PASS


def test_merge_conflict_is_reported_per_path(repo):
    write(repo, "shared.txt", "base\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    git(repo, "switch", "-q", "-c", "other")
    write(repo, "shared.txt", "theirs\n")
    git(repo, "commit", "-q", "-am", "theirs")
    git(repo, "switch", "-q", "main")
    write(repo, "shared.txt", "ours\n")
    git(repo, "commit", "-q", "-am", "ours")
    proc = subprocess.run(["git", "merge", "-q", "other"], cwd=repo, capture_output=True)
    assert proc.returncode != 0  # the merge stopped on the conflict
    result = check(repo, GS)
    assert result.status is Status.FAIL
    assert result.signal.startswith("1 merge conflict(s)")
    assert result.items == [Item("merge conflict: shared.txt", "shared.txt")]
    assert "git add shared.txt" in (result.next or "")


def test_detached_head_warns(repo):
    write(repo, "second.txt", "2\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "second")
    git(repo, "checkout", "-q", "--detach", "HEAD~1")
    result = check(repo, GS)
    assert result.status is Status.WARN
    assert result.signal == "detached HEAD"
    assert "git switch -c" in (result.next or "")
    assert check(repo, GS + "\ndetached: false").status is Status.PASS


def test_detached_head_with_changes_fails(repo):
    git(repo, "checkout", "-q", "--detach")
    write(repo, "README.md", "changed\n")
    result = check(repo, GS)
    assert result.status is Status.FAIL
    assert "detached HEAD" in result.signal


@pytest.fixture
def pushed(repo, tmp_path):
    """`repo` with a bare `origin` that has main pushed and set as upstream."""
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    git(repo, "remote", "add", "origin", str(remote))
    git(repo, "push", "-q", "-u", "origin", "main")
    return repo


def test_in_sync_with_upstream_passes(pushed):
    assert check(pushed, GS).status is Status.PASS


def test_unpushed_commits_warn(pushed):
    for n in range(2):
        write(pushed, f"c{n}.txt", f"{n}\n")
        git(pushed, "add", "-A")
        git(pushed, "commit", "-q", "-m", f"c{n}")
    result = check(pushed, GS)
    assert result.status is Status.WARN
    assert result.signal == "2 commit(s) not pushed to origin/main"
    assert result.items == [Item("2 unpushed commit(s) on main")]
    assert result.next == "git push"
    assert check(pushed, GS + "\nunpushed: false").status is Status.PASS


def test_unpushed_and_uncommitted_fails_listing_both(pushed):
    write(pushed, "c.txt", "c\n")
    git(pushed, "add", "-A")
    git(pushed, "commit", "-q", "-m", "c")
    write(pushed, "README.md", "dirty\n")
    result = check(pushed, GS)
    assert result.status is Status.FAIL
    assert "not pushed" in result.signal
    assert Item("uncommitted: modified", "README.md") in result.items
    assert Item("1 unpushed commit(s) on main") in result.items


def test_no_upstream_is_not_a_warning(repo):
    write(repo, "local.txt", "l\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "local only")
    assert check(repo, GS).status is Status.PASS


def test_repo_without_commits_lists_untracked(tmp_path):
    root = tmp_path / "fresh"
    root.mkdir()
    git(root, "init", "-q", "-b", "trunk")
    write(root, "a.txt", "a\n")
    result = check(root, GS)
    assert result.status is Status.FAIL
    assert result.items == [Item("untracked", "a.txt")]


def test_not_a_git_repo_is_an_error(plain_dir):
    result = check(plain_dir, GS)
    assert result.status is Status.ERROR
    assert result.signal.startswith("not a git repository")


def test_max_items_caps_the_list(repo):
    for n in range(7):
        write(repo, f"u{n}.txt", "x\n")
    result = check(repo, GS + "\nmax_items: 3")
    assert result.signal == "0 uncommitted, 7 untracked"
    assert [i.text for i in result.items] == ["untracked", "untracked", "untracked", "... and 4 more"]


def test_many_changed_files_with_ignore_globs(repo):
    (repo / "data").mkdir()
    count = 2000
    for n in range(count):
        (repo / "data" / f"f{n}.txt").write_text("a\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "many")
    for n in range(count):
        (repo / "data" / f"f{n}.txt").write_text("b\n")
    result = check(repo, GS + "\nignore: ['*.log']\nmax_items: 5")
    assert result.signal == f"{count} uncommitted, 0 untracked"
    assert len(result.items) == 6 and result.items[-1].text == f"... and {count - 5} more"


# --- parse_porcelain_v2 -----------------------------------------------------------------------------------------


def test_parse_rename_record_takes_new_path_and_skips_original():
    data = (
        b"# branch.oid 0123456789abcdef0123456789abcdef01234567\0"
        b"# branch.head main\0"
        b"# branch.upstream origin/main\0"
        b"# branch.ab +3 -1\0"
        b"2 R. N... 100644 100644 100644 aaaaaaa bbbbbbb R100 new dir/new name.txt\0old dir/old name.txt\0"
        b"1 .M N... 100644 100644 100644 ccccccc ccccccc after.txt\0"
        b"? untracked.txt\0"
    )
    parsed = parse_porcelain_v2(data)
    assert parsed["head"] == "main"
    assert parsed["upstream"] == "origin/main"
    assert parsed["ahead"] == 3
    assert parsed["changed"] == [("new dir/new name.txt", "renamed (staged)"), ("after.txt", "modified")]
    assert parsed["untracked"] == ["untracked.txt"]
    assert parsed["conflicts"] == []


def test_parse_unmerged_and_detached_records():
    data = (
        b"# branch.oid 0123456789abcdef0123456789abcdef01234567\0"
        b"# branch.head (detached)\0"
        b"u UU N... 100644 100644 100644 100644 aaaaaaa bbbbbbb ccccccc path with spaces.txt\0"
    )
    parsed = parse_porcelain_v2(data)
    assert parsed["head"] == "(detached)"
    assert parsed["conflicts"] == ["path with spaces.txt"]
    assert parsed["ahead"] == 0


def test_untracked_directory_is_one_item(repo):
    write(repo, "newpkg/a.py", "a\n")
    write(repo, "newpkg/b.py", "b\n")
    result = check(repo, GS)
    assert result.items == [Item("untracked", "newpkg/")]
    assert check(repo, GS + "\nignore: ['newpkg/**']").status is Status.PASS


def test_ignore_glob_covers_files_inside_an_untracked_directory(repo):
    write(repo, "cache/x.pyc", "bytecode\n")
    write(repo, "cache/deeper/y.pyc", "bytecode\n")
    result = check(repo, GS + "\nignore: ['*.pyc']")
    assert result.status is Status.PASS


def test_ignore_glob_naming_an_untracked_directory_by_suffix(repo):
    # gitignore semantics: `*.egg-info` matches the directory, hence everything in it
    write(repo, "dun.egg-info/PKG-INFO", "Name: dun\n")
    write(repo, "dun.egg-info/SOURCES.txt", "dun/__init__.py\n")
    result = check(repo, GS + "\nignore: ['*.egg-info']")
    assert result.status is Status.PASS, result.items
