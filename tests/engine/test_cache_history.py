"""Cache truth when what HEAD's history is changes while HEAD's commit id does not (third cache-truth pass): a
replace ref (`git replace`, `git replace --graft`), a graft file or the shallow boundary of a shallow clone. git
status says nothing, HEAD is the same commit, yet `git log`, `git describe` and everything built on them (a version
from setuptools-scm, a changelog or commit-message check) read another history. A cached run is compared with a run
with every cache off (`fresh=True`)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from conftest import git
from test_cache_classes import age, commit, result

from dun.engine.model import Status

SUBJECT = "  - {id: subject, type: command, command: 'test \"$(git log -1 --format=%s)\" = good', inputs: {}}\n"
DEPTH = "  - {id: depth, type: command, command: 'test \"$(git rev-list --count HEAD)\" -ge 3', inputs: {}}\n"


def agree(repo: Path, check: str) -> Status:
    cached, fresh = result(repo, check), result(repo, check, fresh=True)
    assert (cached.status, cached.signal) == (fresh.status, fresh.signal)
    return cached.status


def test_a_replace_ref_on_head_is_seen(repo: Path) -> None:
    commit(repo, SUBJECT)
    git(repo, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "--allow-empty", "-m", "good")
    age(repo)
    assert result(repo, "subject").status is Status.PASS
    assert result(repo, "subject").cached
    tree = git(repo, "rev-parse", "HEAD^{tree}").strip()
    other = subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.com", "commit-tree", tree, "-m",
                            "bad"], cwd=repo, check=True, capture_output=True, text=True).stdout.strip()
    git(repo, "replace", "HEAD", other)
    age(repo)
    assert agree(repo, "subject") is Status.FAIL
    git(repo, "replace", "-d", git(repo, "rev-parse", "HEAD").strip())  # and back
    age(repo)
    assert agree(repo, "subject") is Status.PASS


def test_a_packed_replace_ref_and_a_graft_are_seen(repo: Path) -> None:
    commit(repo, DEPTH)
    for n in range(2):
        git(repo, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "--allow-empty", "-m", f"{n}")
    age(repo)
    assert result(repo, "depth").status is Status.PASS
    git(repo, "replace", "--graft", "HEAD")  # HEAD becomes a root commit
    git(repo, "pack-refs", "--all")  # the replace ref now lives in packed-refs only
    assert not list((repo / ".git/refs/replace").glob("*"))
    age(repo)
    assert agree(repo, "depth") is Status.FAIL


def test_the_shallow_boundary_of_a_clone_is_seen(repo: Path, tmp_path: Path) -> None:
    commit(repo, DEPTH)
    for n in range(3):
        git(repo, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "--allow-empty", "-m", f"{n}")
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", "--depth", "1", f"file://{repo}", str(clone)], check=True)
    age(clone)
    assert result(clone, "depth").status is Status.FAIL
    assert result(clone, "depth").cached
    git(clone, "fetch", "-q", "--deepen", "3")  # HEAD is the same commit, its history is longer
    age(clone)
    assert agree(clone, "depth") is Status.PASS
