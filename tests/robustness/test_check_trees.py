"""`dun check` takes its checks' whole process trees with it: children in sessions of their own (setsid, daemons)
are killed when their check ends, when it times out, and when `dun check` itself is terminated."""

from __future__ import annotations

import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import git, write
from loop_support import until
from robust_support import dead, dun, kill_all, pids_in, start


def escaping(pids: Path, then: str) -> str:
    """A shell command that starts a setsid'd process and a double-forked daemon (both record their pid), then
    runs `then`."""
    return (f"setsid sh -c 'echo $$ >> {pids}; exec sleep 300' </dev/null >/dev/null 2>&1 & "
            f"(sh -c 'echo $$ >> {pids}; exec sleep 300' </dev/null >/dev/null 2>&1 &) ; {then}")


@pytest.fixture
def pids(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "escaped.pids"
    yield path
    kill_all(pids_in(path))


def manifest(repo: Path, command: str, timeout: float = 60) -> None:
    write(repo, ".dun/plugins/esc.yaml", f"id: esc\nchecks:\n  - id: escape\n    type: command\n"
                                         f"    command: \"{command}\"\n    timeout: {timeout}\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "manifest")


def test_a_finished_checks_escaped_children_are_killed(repo: Path, pids: Path) -> None:
    manifest(repo, escaping(pids, f"until test $(cat {pids} 2>/dev/null | wc -l) -ge 2; do sleep 0.05; done"))
    done = dun(repo, "check", "--only", "escape")
    assert done.returncode == 0, done.stdout + done.stderr
    assert len(pids_in(pids)) == 2
    assert all(dead(pid) for pid in pids_in(pids))


def test_a_timed_out_checks_escaped_children_are_killed(repo: Path, pids: Path) -> None:
    manifest(repo, escaping(pids, "sleep 300"), timeout=1)
    started = time.monotonic()
    done = dun(repo, "check", "--only", "escape")
    assert done.returncode == 1 and "timed out after 1s" in done.stdout
    assert time.monotonic() - started < 15
    assert all(dead(pid) for pid in pids_in(pids))


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGTERM, -signal.SIGTERM), (signal.SIGHUP, -signal.SIGHUP),
                                           (signal.SIGINT, 130)])
def test_a_terminated_dun_check_kills_its_checks_trees(repo: Path, tmp_path: Path, pids: Path, sig: int,
                                                       code: int) -> None:
    manifest(repo, escaping(pids, "sleep 300"))
    check = start(repo, tmp_path / "check", "check", "--only", "escape")
    until(lambda: len(pids_in(pids)) == 2, "the check's escaped children")
    check.send_signal(sig)
    assert check.wait(timeout=15) == code
    assert all(dead(pid) for pid in pids_in(pids))
