"""A loop's side of the shared limits, run as a real process by test_shared_limits.py.

    limits_worker.py STORE CLOCK reserve ATTEMPTS LIMIT   -> prints the times of the granted calls (JSON)
    limits_worker.py STORE CLOCK pause UNTIL              -> pauses the agent
    limits_worker.py STORE CLOCK query LIMIT              -> prints paused_until and one reserve_call answer
    limits_worker.py STORE CLOCK spend ATTEMPTS BUDGET COST -> a call, then its cost, until the budget stops it;
                                                             prints the costs recorded (JSON)

STORE is a directory (this machine's file) or a redis:// URL (the fleet store of several machines).

Each waits for a line on stdin first, so the test can release all of them at once. The clock is shared through
the CLOCK file: each reading advances it by one minute, so simulated time passes only as calls are attempted.
"""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from dun.fleet.limits import SharedLimits
from dun.fleet.redisstore import RedisStore
from dun.fleet.store import Limits

BASE, STEP = 1_000_000.0, 60.0


class SharedClock:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.last = 0.0

    def __call__(self) -> float:
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            ticks = int(os.pread(fd, 32, 0).decode() or 0) + 1
            os.ftruncate(fd, 0)
            os.pwrite(fd, str(ticks).encode(), 0)
        finally:
            os.close(fd)
        self.last = BASE + ticks * STEP
        return self.last


def run_together(procs: list[subprocess.Popen[str]]) -> list[Any]:
    """For the tests that start workers: release every one at once, then collect their JSON answers."""
    for proc in procs:
        assert proc.stdin is not None
        proc.stdin.write("go\n")
        proc.stdin.flush()
    answers = []
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        answers.append(json.loads(out))
    return answers


def main() -> None:
    store, clock_file, mode, *rest = sys.argv[1:]
    clock = SharedClock(Path(clock_file))
    limits: Limits
    if store.startswith("redis://"):
        limits = RedisStore(store, clock=clock).limits("claude")
    else:
        limits = SharedLimits("claude", Path(store), clock)
    sys.stdin.readline()  # the starting gun
    if mode == "reserve":
        attempts, limit = int(rest[0]), int(rest[1])
        # the time the store recorded each grant at: a machine whose clock reading is behind the store's latest
        # is recorded at that latest time (the window is judged in the store's time, never backwards)
        answers = [limits.reserve(limit, 0.0, f"{os.getpid()}:{i}") for i in range(attempts)]
        print(json.dumps([r.at for r in answers if r.granted]))
    elif mode == "spend":
        attempts, budget, cost = int(rest[0]), float(rest[1]), float(rest[2])
        spent = []
        for i in range(attempts):
            if limits.reserve(10_000, budget, f"{os.getpid()}:{i}").why == "budget":
                break
            limits.record_cost(cost, f"{os.getpid()}:{i}")
            spent.append(cost)
        print(json.dumps(spent))
    elif mode == "pause":
        print(json.dumps(limits.pause_until(float(rest[0]), "usage_limit")))
    else:
        print(json.dumps([limits.paused_until(), limits.reserve_call(int(rest[0]))]))


if __name__ == "__main__":
    main()
