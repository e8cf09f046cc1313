"""dun/core/indexlook.py: the index entries git status does not fully look at."""

from __future__ import annotations

import os
from pathlib import Path

from conftest import git, write

from dun.core.indexlook import LINK, index_extras


def test_a_repository_without_an_index_has_nothing_to_list_until_something_is_added(tmp_path: Path) -> None:
    """`git init` and untracked files only (no index yet): nothing is tracked, so nothing is listed (no git is
    started for it, on every run); once a link is added, the index exists and the link is listed."""
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    write(root, "target.txt", "data\n")
    os.symlink("target.txt", root / "link")
    assert not (root / ".git" / "index").exists()
    assert index_extras(str(root)) == []
    git(root, "add", "link")
    assert index_extras(str(root)) == [(LINK, b"link")]
