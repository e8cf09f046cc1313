"""`.dun` made a link (a cloned repository can carry one): no command of dun writes through it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from conftest import git, write

from dun.core.errors import UnsafePathError
from dun.store.store import Store


def linked(repo: Path, tmp_path: Path) -> Path:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (repo / ".dun").symlink_to(elsewhere)
    return elsewhere


def test_the_store_refuses_a_linked_dun_dir(repo: Path, tmp_path: Path) -> None:
    elsewhere = linked(repo, tmp_path)
    with pytest.raises(UnsafePathError, match=r"\.dun: a link where dun expects"):
        Store(repo).ensure()
    assert list(elsewhere.iterdir()) == []


def test_hints_and_papers_write_nothing_through_a_linked_dun_dir(repo: Path, tmp_path: Path) -> None:
    write(repo, "a.py", "a\n")
    write(repo, "b.py", "b\n")
    git(repo, "add", "a.py", "b.py")
    git(repo, "commit", "-qm", "a and b")
    elsewhere = linked(repo, tmp_path)
    hints = subprocess.run([sys.executable, "-m", "dun", "hints", "a.py"], cwd=repo, capture_output=True, text=True,
                           timeout=60, stdin=subprocess.DEVNULL)
    assert hints.returncode == 0 and "b.py" in hints.stdout, hints.stderr  # advice still given, from memory
    papers = subprocess.run([sys.executable, "-m", "dun", "papers", "read", "arxiv:2501.00001"], cwd=repo,
                            capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert papers.returncode == 2 and "Traceback" not in papers.stderr and papers.stderr.count("\n") == 1, papers
    assert list(elsewhere.iterdir()) == []
