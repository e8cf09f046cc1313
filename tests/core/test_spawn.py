"""A program started with its output captured in memory (git's, at the start of `dun check`): all of it, stdout and
stderr apart, and its exit code, however much it writes and whether or not anyone reads before it exits."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

from dun.core.spawn import Spawned

WRITER = """
import os, sys
sys.stdout.buffer.write(b"x" * 3_000_000 + b"\\0end")  # far past a pipe's 64 KiB
sys.stderr.write("complaint\\n")
sys.exit(3)
"""


def test_every_byte_and_the_exit_code_of_a_program_that_writes_megabytes() -> None:
    started = Spawned([sys.executable, "-c", WRITER], dict(os.environ))
    code, out, err = started.collect()
    assert (code, len(out), out[-4:], err) == (3, 3_000_004, b"\0end", b"complaint\n")
    assert started.collect() == (code, out, err)  # asked again: the same answer


def test_a_program_that_does_not_exist_raises_and_leaks_no_descriptor() -> None:
    before = set(os.listdir("/proc/self/fd"))
    try:
        Spawned(["no-such-program-dun-test"], dict(os.environ))
    except OSError:
        pass
    else:
        raise AssertionError("expected OSError")
    assert set(os.listdir("/proc/self/fd")) <= before


def test_without_in_memory_files_pipes_carry_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    """Where `memfd_create` is missing (macOS), the output comes through pipes, whole all the same."""
    monkeypatch.delattr(os, "memfd_create")
    code, out, err = Spawned([sys.executable, "-c", WRITER], dict(os.environ)).collect()
    assert (code, len(out), out[-4:], err) == (3, 3_000_004, b"\0end", b"complaint\n")


def test_done_tells_whether_it_exited_without_waiting(tmp_path: os.PathLike[str]) -> None:
    """What a replay loads modules by while git walks the tree: `done` is False while the program runs, True once it
    exited, and the output collected afterwards is whole."""
    gate = os.path.join(str(tmp_path), "go")
    waiter = f"import os, sys, time\nwhile not os.path.exists({gate!r}): time.sleep(0.01)\nprint('out')\nsys.exit(4)"
    started = Spawned([sys.executable, "-c", waiter], dict(os.environ))
    assert not started.done()
    Path(gate).touch()  # the signal
    while not started.done():
        os.sched_yield()
    assert started.done() and started.collect() == (4, b"out\n", b"")


def _zombies() -> int:
    """This process's children that exited and were never reaped."""
    count = 0
    for pid in os.listdir("/proc"):
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            continue
        fields = stat.rpartition(")")[2].split()
        if fields[0] == "Z" and int(fields[1]) == os.getpid():
            count += 1
    return count


@pytest.mark.parametrize("in_memory", [True, False])
def test_a_look_nobody_reads_leaves_no_zombie_and_no_descriptor(in_memory: bool,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """A listing started in case a check needs it and never read (`dun iterate` on a small repository): once
    dropped, its program is reaped and its output files closed; a process running many commands in turn gathered a
    zombie and two descriptors per command."""
    if not in_memory:
        monkeypatch.delattr(os, "memfd_create")
    before_fds, before_zombies = set(os.listdir("/proc/self/fd")), _zombies()
    for _ in range(5):
        started = Spawned([sys.executable, "-c", "print('x' * 100)"], dict(os.environ))
        while not started.done():
            os.sched_yield()
        del started
    running = Spawned([sys.executable, "-c", "import time; time.sleep(60)"], dict(os.environ))
    del running  # still running when dropped: stopped, not waited for a minute
    assert _zombies() == before_zombies
    assert set(os.listdir("/proc/self/fd")) <= before_fds


def test_stop_ends_a_running_program_at_once_and_reaps_it() -> None:
    """`dun check -C PATH` starts git in the current directory before its options are read, then stops it."""
    before_fds, before_zombies = set(os.listdir("/proc/self/fd")), _zombies()
    running = Spawned([sys.executable, "-c", "import time; time.sleep(60)"], dict(os.environ))
    started = time.monotonic()
    running.stop()
    running.stop()  # twice: nothing left to do
    assert time.monotonic() - started < 30 and running.done() and running.collect()[0] == -9
    assert _zombies() == before_zombies
    assert set(os.listdir("/proc/self/fd")) <= before_fds
