"""`.dun/.gitignore`: every file dun writes under `.dun/` stays out of `git status`, temporary files included; an
older dun's file is refreshed (the lines a person added are kept); a link there is refused, never written through."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import git, write

from dun.core.atomic import write_text_atomic
from dun.core.errors import DunError
from dun.store.store import Store, gitignore_text, refresh_gitignore

OLD = ("logs/\ncache/\narchive/\nstate.json\nstate.json.corrupt-*\nhandoff.json\niterate.json\ntasks.json\n"
       "fingerprint.json\nREPORT.md\nloop.lock\nSTOP\nhistory.db\nhistory.db-*\nhistory.db.corrupt-*\nreports/\n"
       "review.json\nreview.lock\nreport.html\n")


def status(repo: Path) -> list[str]:
    return git(repo, "status", "--porcelain", "--untracked-files=all").splitlines()


def test_nothing_dun_writes_shows_in_git_status(repo: Path) -> None:
    store = Store(repo)
    store.ensure()
    git(repo, "add", ".dun/.gitignore")
    git(repo, "commit", "-qm", "dun's gitignore")
    write(repo, ".dun/config.yaml", "loop: {}\n")
    git(repo, "add", ".dun/config.yaml")
    git(repo, "commit", "-qm", "config")
    from dun.store.state import LoopState

    store.write_state(LoopState())
    store.write_prompt(1, "prompt")
    for name in (".state.json.k2j3h.tmp", "some-future-record.json", "history.db-wal", "tasks.json"):
        (store.dir / name).write_text("x\n")  # e.g. an atomic write caught half-way by the agent's `git add -A`
    write_text_atomic(store.dir / "cache" / "x.json", "{}")
    assert status(repo) == []
    write(repo, ".dun/plugins/mine.yaml", "id: mine\nchecks: []\n")  # what a person writes is seen
    assert status(repo) == ["?? .dun/plugins/mine.yaml"]


def test_an_older_gitignore_is_refreshed_and_a_persons_lines_are_kept(repo: Path) -> None:
    path = repo / ".dun" / ".gitignore"
    write(repo, ".dun/.gitignore", OLD + "notes/\n")
    assert refresh_gitignore(path)
    text = path.read_text()
    assert text.startswith("# dun-gitignore 2:") and text.endswith("# kept from the previous file\nnotes/\n")
    assert "state.json\n" not in text  # the old lines are dun's, covered by the new rules
    assert not refresh_gitignore(path)  # current: left alone
    assert path.read_text() == text and (path.stat().st_mode & 0o777) == 0o644
    assert gitignore_text(None) == gitignore_text("")


def test_a_link_in_place_of_the_gitignore_is_refused(repo: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("mine\n")
    (repo / ".dun").mkdir()
    (repo / ".dun" / ".gitignore").symlink_to(outside)
    with pytest.raises(DunError, match="is a link"):
        refresh_gitignore(repo / ".dun" / ".gitignore")
    assert outside.read_text() == "mine\n"
