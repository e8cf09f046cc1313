"""Glob matches remembered across runs (dun/core/cache/matches.py) agree with matching afresh, whatever changed."""

from __future__ import annotations

import marshal
from pathlib import Path

import pytest
from conftest import git, write

import dun.core.globs as globs
from dun.core.cache.session import Caches
from dun.core.cachedir import cache_dir_path
from dun.engine.checkapi import CheckContext

GLOBS = (["**/*.py"], ["src/**/*.py"], ["docs/*.md", "!docs/skip.md"], ["*.txt"])


def context(repo: Path, fresh: bool = False) -> CheckContext:
    ctx = CheckContext(repo.resolve(), True)
    ctx.caches = Caches(fresh)
    return ctx


def matches(repo: Path, fresh: bool = False) -> dict[tuple[str, ...], list[str]]:
    """Every glob list matched by a new context (as a new run would), then stored for the next."""
    ctx = context(repo, fresh)
    found = {tuple(g): ctx.match(g) for g in GLOBS}
    ctx.flush()
    return found


def afresh(repo: Path) -> dict[tuple[str, ...], list[str]]:
    files = context(repo).files()
    return {tuple(g): globs.match_files(files, g) for g in GLOBS}


def memo_file(repo: Path) -> Path:
    return Path(cache_dir_path(str(repo.resolve()))) / "matches.marshal"


@pytest.fixture
def project(repo: Path) -> Path:
    for rel in ("src/a.py", "src/pkg/b.py", "tools/c.py", "docs/one.md", "docs/skip.md", "notes.txt"):
        write(repo, rel, "x\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "project")
    return repo


def test_a_second_run_reads_the_matches_back(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first = matches(project)
    assert first[("**/*.py",)] == ["src/a.py", "src/pkg/b.py", "tools/c.py"]
    assert memo_file(project).is_file()

    def refuse(*args: object) -> list[str]:
        raise AssertionError("matched again on the same listing")

    monkeypatch.setattr(globs, "match_files", refuse)
    assert matches(project) == first


@pytest.mark.parametrize("change", ["tracked", "untracked", "removed", "renamed"])
def test_a_changed_listing_is_matched_afresh(project: Path, change: str) -> None:
    matches(project)
    if change == "tracked":
        write(project, "src/new.py", "y\n")
        git(project, "add", "src/new.py")
    elif change == "untracked":
        write(project, "src/loose.py", "y\n")
        write(project, "other.txt", "y\n")
    elif change == "removed":
        git(project, "rm", "-q", "tools/c.py")
    else:
        git(project, "mv", "docs/one.md", "docs/two.md")
    assert matches(project) == afresh(project)
    assert matches(project) == afresh(project)  # and read back as found


def test_a_tracked_file_deleted_from_the_tree_is_not_matched(project: Path) -> None:
    matches(project)
    (project / "src/a.py").unlink()  # still in the index: the listing is the same, the status is not
    assert matches(project)[("**/*.py",)] == ["src/pkg/b.py", "tools/c.py"]


def test_no_cache_reads_nothing_back_but_stores_what_it_found(project: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    matches(project)
    calls: list[object] = []
    real = globs.match_files

    def counting(*args: object) -> list[str]:
        calls.append(args)
        return real(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(globs, "match_files", counting)
    assert matches(project, fresh=True) == afresh(project)
    assert len(calls) >= len(GLOBS)
    assert memo_file(project).is_file()


def test_dun_no_cache_neither_reads_nor_stores(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DUN_NO_CACHE", "1")
    globs.matcher_version.cache_clear()
    try:
        assert matches(project) == afresh(project)
        assert not memo_file(project).exists()
    finally:
        globs.matcher_version.cache_clear()


@pytest.mark.parametrize("payload", [
    ("dun-cache", 7, "matches", "a string"),
    "not a tuple",
    {"another": "shape"},
])
def test_a_hostile_memo_is_a_miss(project: Path, payload: object) -> None:
    matches(project)
    memo_file(project).write_bytes(marshal.dumps(payload))
    assert matches(project) == afresh(project)


def test_a_forged_entry_for_another_listing_is_not_used(project: Path) -> None:
    """An entry is used only under the digest of the listing it was matched in: one stored under an old listing's
    key (or a made-up one) is never read for the current listing."""
    matches(project)
    from dun.core.cache import VERSION
    from dun.core.cache.file import MAGIC

    forged = {("**/*.py",): "evil.py"}
    memo_file(project).write_bytes(marshal.dumps((MAGIC, VERSION, "matches", ("0" * 64, forged))))
    assert matches(project)[("**/*.py",)] == ["src/a.py", "src/pkg/b.py", "tools/c.py"]


def test_an_unchanged_index_is_not_listed_again(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The index file's checksum names the listing: a run on the same index (edits to tracked files do not change
    it) reads the matches back without starting `git ls-files`."""
    first = matches(project)
    matches(project)  # the index key is confirmed by a run that listed the index unchanged around it
    (project / "src/a.py").write_text("edited\n")  # a tracked file edited: the index is the same
    ctx = context(project)
    assert {tuple(g): ctx.match(g) for g in GLOBS} == first
    ctx.prefetch()
    look = ctx._snapshot
    assert look is not None and not look.listing_started()


@pytest.mark.parametrize("change", ["staged", "untracked", "deleted-untracked"])
def test_an_index_or_status_that_moved_is_listed_afresh(project: Path, change: str) -> None:
    write(project, "scratch.py", "y\n")
    matches(project)
    matches(project)
    if change == "staged":
        write(project, "src/staged.py", "y\n")
        git(project, "add", "src/staged.py")
    elif change == "untracked":
        write(project, "src/loose.py", "y\n")
    else:
        (project / "scratch.py").unlink()
    assert matches(project) == afresh(project)
    assert matches(project) == afresh(project)


def test_an_index_that_moves_while_it_is_listed_is_not_vouched_for(project: Path) -> None:
    from dun.core.snapshot import Snapshot

    look = Snapshot(project.resolve())
    look.start_listing()
    write(project, "src/late.py", "y\n")
    git(project, "add", "src/late.py")  # a new index file, whichever of the two git read
    assert look.files().index is None
    assert Snapshot(project.resolve()).files().index is not None


def test_only_an_index_with_a_checksum_at_the_usual_place_is_trusted(project: Path, tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    from dun.core.cache.matches import index_identity

    assert index_identity(project) is not None
    monkeypatch.setenv("GIT_INDEX_FILE", str(tmp_path / "other-index"))
    assert index_identity(project) is None
    monkeypatch.delenv("GIT_INDEX_FILE")
    fake = tmp_path / "fake"
    (fake / ".git").mkdir(parents=True)
    (fake / ".git/index").write_bytes(b"DIRC" + b"\1" * 100 + bytes(20))  # index.skipHash: no checksum
    assert index_identity(fake) is None
    (fake / ".git/index").write_bytes(b"DIRC" + b"\1" * 120)
    assert index_identity(fake) is not None
    worktree = tmp_path / "wt"
    worktree.mkdir()
    (worktree / ".git").write_text("gitdir: /elsewhere\n")  # a linked worktree: its index is elsewhere
    assert index_identity(worktree) is None
