"""The co-change index (dun/hints/index.py) on real git repositories: built from history, brought up to date with
only the new commits, built again after a rewrite, learning from the loop's iteration logs, and never trusting the
file it keeps in `.dun/`."""

from __future__ import annotations

import dataclasses
import marshal
import os
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import git, write

from dun.config.loader import load_config
from dun.config.sections import Hints
from dun.core.cache import VERSION
from dun.core.cache.code import CODE
from dun.core.cache.file import MAGIC
from dun.hints import index as index_mod
from dun.hints.graph import CHECK_PREFIX
from dun.hints.index import update
from dun.store.state import LoopState
from dun.store.store import COCHANGE_KIND, Store


def commit(root: Path, message: str, *files: str) -> None:
    for f in files:
        path = root / f
        write(root, f, (path.read_text() if path.exists() else "") + f"{message}\n")
    git(root, "add", "--", *files)
    git(root, "commit", "-q", "-m", message)


def settings(root: Path, **changes: Any) -> Hints:
    return dataclasses.replace(load_config(root).settings.hints, **changes)


def hinted(root: Path, seed: str, **changes: Any) -> list[str]:
    return [h.path for h in update(Store(root), settings(root, **changes)).graph.hints([seed], 10)]


@pytest.fixture
def spied(monkeypatch: pytest.MonkeyPatch) -> list[str | None]:
    """The `since` of every history read."""
    calls: list[str | None] = []
    real = index_mod.read_commits

    def spy(root: Path, since: str | None, limit: int) -> Any:
        calls.append(since)
        return real(root, since, limit)

    monkeypatch.setattr(index_mod, "read_commits", spy)
    return calls


def test_built_from_history_then_only_the_new_commits_are_read(repo: Path, spied: list[str | None]) -> None:
    commit(repo, "one", "src/a.py", "tests/test_a.py")
    commit(repo, "two", "src/a.py", "tests/test_a.py")
    commit(repo, "three", "src/b.py", "docs/b.md")
    assert hinted(repo, "src/a.py") == ["tests/test_a.py"]
    assert spied == [None]
    assert Store(repo).cochange_path.is_file()
    first = git(repo, "rev-parse", "HEAD").strip()
    commit(repo, "four", "src/a.py", "src/b.py")
    assert hinted(repo, "src/a.py")[:2] == ["tests/test_a.py", "src/b.py"]
    assert "docs/b.md" in hinted(repo, "src/a.py")  # two hops: a -> b -> docs
    assert spied == [None, first]
    hinted(repo, "src/a.py")
    assert spied == [None, first]  # nothing new: git history is not read again


def test_a_rewritten_history_is_learned_again(repo: Path, spied: list[str | None]) -> None:
    commit(repo, "one", "a.py", "b.py")
    assert hinted(repo, "a.py") == ["b.py"]
    git(repo, "reset", "-q", "--hard", "HEAD~1")
    commit(repo, "other", "a.py", "c.py")
    assert hinted(repo, "a.py") == ["c.py"]  # b's link was in the commit that is gone
    assert spied == [None, None]


def test_a_huge_commit_links_nothing(repo: Path) -> None:
    commit(repo, "small", "a.py", "b.py")
    commit(repo, "format everything", "a.py", *(f"mod{n}.py" for n in range(12)))
    assert hinted(repo, "a.py", max_commit_files=10) == ["b.py"]
    # another setting builds the index again: with room for the big commit, its files are linked
    assert len(hinted(repo, "a.py", max_commit_files=20)) == 10


def test_a_renamed_file_keeps_its_links(repo: Path) -> None:
    commit(repo, "one", "old_name.py", "test_it.py")
    git(repo, "mv", "old_name.py", "new_name.py")
    git(repo, "commit", "-q", "-m", "rename")
    assert hinted(repo, "new_name.py") == ["test_it.py"]
    assert hinted(repo, "test_it.py") == ["new_name.py"]


def test_a_deleted_file_is_no_hint(repo: Path) -> None:
    commit(repo, "one", "a.py", "gone.py", "kept.py")
    git(repo, "rm", "-q", "gone.py")
    git(repo, "commit", "-q", "-m", "remove")
    assert hinted(repo, "a.py") == ["kept.py"]


def iteration_log(store: Store, n: int, paths: list[str], **extra: Any) -> None:
    log: dict[str, Any] = {"schema_version": 1, "iteration": n, "run_id": "run1", "ended_at": "2026-11-27T10:00:00Z",
                           "progress": {"paths": paths, "commits": [], "newly_passing": ["pytest"]},
                           "checks_before": {"actionable": 1, "ids": ["pytest"]}, **extra}
    store.write_log(log)  # type: ignore[arg-type]


def test_the_iteration_logs_link_files_and_the_checks_they_were_for_once(repo: Path) -> None:
    store = Store(repo)
    store.write_state(LoopState(run_id="run1"))
    iteration_log(store, 1, ["src/x.py", "tests/test_x.py"])
    iteration_log(store, 2, ["src/y.py"], ended_at=None)  # still running: learned once it has ended
    s = settings(repo)
    index = update(Store(repo), s)
    assert [h.path for h in index.graph.hints(["src/x.py"])] == ["tests/test_x.py"]
    assert {h.path for h in index.graph.hints([CHECK_PREFIX + "pytest"])} == {"src/x.py", "tests/test_x.py"}
    seq = index.graph.seq
    assert update(Store(repo), s).graph.seq == seq  # the same logs are not learned twice
    iteration_log(store, 2, ["src/y.py"])
    assert update(Store(repo), s).graph.seq == seq + 1
    store.archive_run("run1")  # a new run: the logs move to the archive, already learned
    again = update(Store(repo), s)
    assert again.graph.seq == seq + 1
    assert {h.path for h in again.graph.hints([CHECK_PREFIX + "pytest"])} == {"src/x.py", "tests/test_x.py",
                                                                                "src/y.py"}
    rebuilt = update(Store(repo), s, rebuild=True)  # built again: the archived logs are read again, once
    assert {h.path for h in rebuilt.graph.hints([CHECK_PREFIX + "pytest"])} == {"src/x.py", "tests/test_x.py",
                                                                                 "src/y.py"}


def hostile_payloads(good: tuple[Any, ...]) -> list[Any]:
    fmt, key, head, seq, base, paths, count, edges, dead, seen = good
    n = len(paths)
    return [
        (fmt, key, "--output=/tmp/x", seq, base, paths, count, edges, dead, seen),  # an option, not a commit
        (fmt, key, head, seq, base, paths, count, [{n + 5: 1.0}, *edges[1:]], dead, seen),  # an id out of range
        (fmt, key, head, seq, base, paths, [float("nan"), *count[1:]], edges, dead, seen),
        (fmt, key, head, seq, base, paths, count, [{1: float("inf")}, *edges[1:]], dead, seen),
        (fmt, key, head, seq, base, paths, count, [{1: -1.0}, *edges[1:]], dead, seen),
        (fmt, key, head, seq, base, paths[:-1], count, edges, dead, seen),  # lengths differ
        (fmt, key, head, 10**9, 0, paths, count, edges, dead, seen),  # an exponent that overflows
        (fmt, key, head, seq, base, [paths[0]] * n, count, edges, dead, seen),  # one path twice
        (fmt, key, head, seq, base, paths, count, edges, [n], seen),
        (fmt, key, head, seq, base, paths, count, edges, dead, [1]),
        (fmt, key, head, seq, base, paths, count, edges, dead),  # a field short
        "not a tuple",
    ]


def test_a_damaged_or_hostile_index_file_is_built_again(repo: Path) -> None:
    commit(repo, "one", "a.py", "b.py")
    s = settings(repo)
    store = Store(repo)
    good = update(Store(repo), s).payload(s)
    path = store.cochange_path
    for payload in hostile_payloads(good):
        path.write_bytes(marshal.dumps((MAGIC, (VERSION, CODE), COCHANGE_KIND, payload)))
        assert hinted(repo, "a.py") == ["b.py"], payload
        assert store.read_cochange(lambda p: p) == good  # written again, whole
    for data in (b"", b"garbage", marshal.dumps((MAGIC, (VERSION - 1, CODE), COCHANGE_KIND, good)),
                 marshal.dumps((MAGIC, (VERSION, "other code"), COCHANGE_KIND, good))):
        path.write_bytes(data)
        assert hinted(repo, "a.py") == ["b.py"]
    path.unlink()
    path.symlink_to("/dev/zero")  # a link is never read, and is replaced by the file
    assert hinted(repo, "a.py") == ["b.py"]
    assert not path.is_symlink()
    path.unlink()
    os.mkfifo(path)  # never opened for a blocking read
    started = time.monotonic()
    assert hinted(repo, "a.py") == ["b.py"]
    assert time.monotonic() - started < 10
    path.unlink()
    path.mkdir()  # cannot even be written: the hints still come, from memory
    assert hinted(repo, "a.py") == ["b.py"]
