"""Which process ids can belong to a command: those given out since it started. The reaper (dun/core/reaper.py)
finds a finished command's escaped processes by reading every process's environment (3-20 ms, a read per process
on the machine); a process created by the command got its id after the command's own, and Linux gives ids out in
a cycle (the next free one after the last, from 300 again after pid_max), so only the ids from the command's to the
last one given out need reading, unless the cycle could have come round since: it passes every id, each one either
given out since (counted by the kernel's forks since boot) or held by a task, whose number is at most the tasks
when the command started plus the forks since. Where that cannot be told (no /proc, another pid namespace's /proc,
the cycle could have come round), every process is read, as before.

Import-light (os only): dun/engine/launch.py takes its mark before the rest of dun loads.
"""

from __future__ import annotations

import os

Mark = tuple[int, int]  # forks since boot, tasks (threads included) at the mark
RESERVED = 300  # the ids Linux gives out again after a wrap start here
MARGIN = 1000


def _forks() -> int | None:
    try:
        with open("/proc/stat", "rb") as fh:
            for line in fh:
                if line.startswith(b"processes "):
                    return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return None


def _tasks_and_last() -> tuple[int, int] | None:
    """The tasks now and the last process id given out, from /proc/loadavg (`... running/tasks last`)."""
    try:
        with open("/proc/loadavg", "rb") as fh:
            fields = fh.read().split()
        return int(fields[3].split(b"/")[1]), int(fields[4])
    except (OSError, ValueError, IndexError):
        return None


def mark() -> Mark | None:
    """Taken before a command starts; None where /proc cannot tell."""
    forks, now = _forks(), _tasks_and_last()
    return (forks, now[0]) if forks is not None and now is not None else None


def newer(leader: int, since: Mark | None) -> tuple[int, int, int] | None:
    """(leader, last, pid_max): the ids given out since `since` (the mark taken before `leader` started) are those
    from `leader` to `last`, through a wrap when `last` is below it (`may_be`); None when any id may be (module doc).
    Asked after /proc was listed: every id listed had been given out by then."""
    if since is None:
        return None
    try:
        if os.readlink("/proc/self") != str(os.getpid()):
            return None  # /proc of another pid namespace: its ids are not ours
        with open("/proc/sys/kernel/pid_max", "rb") as fh:
            pid_max = int(fh.read())
    except (OSError, ValueError):
        return None
    forks, now = _forks(), _tasks_and_last()
    if forks is None or now is None:
        return None
    given = forks - since[0]
    if given < 0 or 2 * given + since[1] + MARGIN >= pid_max - RESERVED:
        return None  # the cycle could have come round to the leader again
    return leader, now[1], pid_max


def may_be(pid: int, window: tuple[int, int, int] | None) -> bool:
    """Whether process `pid` may have been created since the mark `window` came from (`newer`)."""
    if window is None:
        return True
    leader, last, _ = window
    if last >= leader:
        return leader <= pid <= last
    return pid >= leader or pid <= last  # wrapped once
