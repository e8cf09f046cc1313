"""dun.core.reaper: process trees found by a token in their environment, and recorded pids killed only when their
start time proves them the same process."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from dun.core.reaper import (
    TOKEN_ENV,
    kill_recorded,
    kill_tree,
    new_token,
    process_start_time,
    processes_with,
    tagged_env,
)


def alive(pid: int) -> bool:
    start = process_start_time(pid)
    return start is not None


def wait_dead(pid: int, timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.02)
    return not alive(pid)


def test_tokens_accumulate_so_nested_runs_stay_findable() -> None:
    first = tagged_env({}, "aaa")
    assert tagged_env(first, "bbb")[TOKEN_ENV] == "aaa:bbb"
    assert new_token() != new_token()


def test_a_setsid_grandchild_carrying_the_token_is_found_and_killed(tmp_path: Path) -> None:
    token = new_token()
    pid_file = tmp_path / "pid"
    leader = subprocess.Popen(["sh", "-c", f"setsid sh -c 'echo $$ > {pid_file}; exec sleep 60' &"],
                              env=tagged_env(None, token), start_new_session=True)
    leader.wait()
    deadline = time.monotonic() + 5
    while not pid_file.exists() or not pid_file.read_text().strip():
        assert time.monotonic() < deadline
        time.sleep(0.02)
    escaped = int(pid_file.read_text())
    assert processes_with(token) == [escaped]
    kill_tree(token)
    assert wait_dead(escaped)


def test_a_recorded_pid_dies_only_with_its_recorded_start_time() -> None:
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        started = process_start_time(proc.pid)
        assert started is not None
        assert kill_recorded([[proc.pid, started + 1]]) == 0  # another process that reused the id: left alone
        assert proc.poll() is None
        assert kill_recorded([[proc.pid, started]]) == 1
        assert proc.wait(timeout=5) == -9
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert process_start_time(os.getpid()) is not None


def test_asking_to_be_a_subreaper_again_and_again_keeps_no_memory() -> None:
    """The agent runner asks before every agent call: a loop of thousands of calls must not grow by it."""
    import gc
    import tracemalloc

    from dun.core.reaper import become_subreaper

    first = become_subreaper()
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.take_snapshot()
        assert all(become_subreaper() == first for _ in range(2000))
        gc.collect()
        grown = sum(s.size_diff for s in tracemalloc.take_snapshot().compare_to(before, "filename")
                    if "tracemalloc" not in s.traceback[0].filename)
    finally:
        tracemalloc.stop()
    assert grown < 2000, f"{grown} bytes kept by 2,000 calls"  # was about 20 KB: a ctypes class per call
