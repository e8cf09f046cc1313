"""Which process ids can belong to a command (dun/core/pidmark.py): the reaper reads only the processes created since
the command started, and every process again when that cannot be told."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from dun.core import pidmark
from dun.core.reaper import processes_with

linux = pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="Linux /proc")


def test_the_ids_given_out_since_run_from_the_leader_to_the_last_through_a_wrap() -> None:
    window = (500, 900, 32768)
    assert [pidmark.may_be(p, window) for p in (499, 500, 700, 900, 901)] == [False, True, True, True, False]
    wrapped = (32000, 400, 32768)  # given out up to pid_max, then from 300 again
    assert [pidmark.may_be(p, wrapped) for p in (31999, 32000, 32767, 300, 400, 401)] == [
        False, True, True, True, True, False]
    assert pidmark.may_be(1, None)


@linux
def test_when_the_cycle_could_have_come_round_every_id_may_be() -> None:
    since = pidmark.mark()
    assert since is not None
    assert pidmark.newer(os.getpid(), since) is not None
    assert pidmark.newer(os.getpid(), (since[0] - 10**9, since[1])) is None  # a billion forks since
    assert pidmark.newer(os.getpid(), None) is None


@linux
def test_only_processes_created_since_the_mark_are_read() -> None:
    """A process carrying the token that was running before the command started is not the command's: with the
    mark it is not read; without, it is found (the full scan)."""
    token = os.urandom(12).hex()
    env = {**os.environ, "DUN_PROC_TOKENS": token}
    sleep = [sys.executable, "-c", "import time; time.sleep(60)"]
    older = subprocess.Popen(sleep, env=env)
    try:
        since = pidmark.mark()
        leader = subprocess.Popen(sleep, env=env)
        try:
            assert sorted(processes_with(token)) == sorted([older.pid, leader.pid])
            assert processes_with(token, (leader.pid, since)) == [leader.pid]
        finally:
            leader.kill()
            leader.wait()
    finally:
        older.kill()
        older.wait()
