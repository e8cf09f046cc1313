"""One agent account's limits, shared by every loop on this machine: the rolling hourly call window, the spend of
the last 24 hours, and a pause when one loop hits a usage limit (the subscription's limit is global, so the others
must wait too).

A JSON file per agent under the user's state directory: the default fleet store (dun/fleet/store.py), with a file
per loop under `loops/` for the registry. Every change happens under an exclusive flock on a separate lock file and
is written atomically, so concurrent loops never lose each other's calls and a reader never sees a torn file.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from dun.core.atomic import write_json_atomic
from dun.core.ratewindow import prune, wait_needed
from dun.core.resources import user_state_dir
from dun.fleet.store import DAY_S, FORGET_AFTER_S, FleetStore, Limits, Reservation
from dun.store.store import read_json

SCHEMA_VERSION = 1


def limits_dir() -> Path:
    return user_state_dir() / "fleet"


def _empty(agent: str) -> dict[str, object]:
    return {"schema_version": SCHEMA_VERSION, "agent": agent, "calls": [], "costs": [], "paused_until": None,
            "pause_reason": None, "clock_high": 0.0}


class SharedLimits(Limits):
    """This machine's shared limits of one agent. `clock` is injectable (tests share a simulated one between
    processes); it is read under the lock, so the times of granted calls are ordered like the grants themselves."""

    def __init__(self, agent: str, directory: Path | None = None, clock: Callable[[], float] = time.time) -> None:
        self.agent = agent
        safe = re.sub(r"[^A-Za-z0-9_.-]", "_", agent) or "_"
        self.directory = directory or limits_dir()
        self.path = self.directory / f"{safe}.json"
        self.lock_path = self.directory / f"{safe}.lock"
        self.clock = clock

    @contextlib.contextmanager
    def _update(self) -> Iterator[dict[str, Any]]:
        """The store, locked for this process until the block ends, then written back."""
        with locked(self.directory, self.lock_path):
            data = self._read()
            yield data
            write_json_atomic(self.path, data)

    def _read(self) -> dict[str, Any]:
        return {**_empty(self.agent), **(read_json(self.path) or {})}

    def _now(self, data: dict[str, Any], now: float | None) -> float:
        # never earlier than a time already recorded: a slow clock must not reopen a window another loop filled
        current = max(self.clock() if now is None else now, float(data["clock_high"]))
        data["clock_high"] = current
        return current

    def reserve(self, max_per_hour: int, budget_usd: float, member: str, now: float | None = None,
                epoch: str | None = None) -> Reservation:
        with self._update() as data:
            now = self._now(data, now)
            paused = data["paused_until"]
            if paused is not None and paused > now:
                return Reservation("pause", float(paused) - now)
            if budget_usd > 0 and _spent(data["costs"], DAY_S, now) >= budget_usd:
                return Reservation("budget")
            calls = prune(data["calls"], now)
            wait = wait_needed(calls, max_per_hour, now)
            if wait == 0.0:
                calls.append(now)
            data["calls"] = calls
            return Reservation("granted", 0.0, now) if wait == 0.0 else Reservation("window", wait)

    def record_cost(self, usd: float, member: str = "", now: float | None = None) -> None:
        if usd <= 0:
            return
        with self._update() as data:
            now = self._now(data, now)
            data["costs"] = [c for c in data["costs"] if now - c[0] < DAY_S] + [[now, round(usd, 6)]]

    def pause_until(self, until: float, reason: str, now: float | None = None) -> float:
        with self._update() as data:
            now = self._now(data, now)
            current = data["paused_until"]
            if current is None or current <= now or until > current:
                data["paused_until"], data["pause_reason"] = until, reason
            return float(data["paused_until"])

    def pause(self, now: float | None = None) -> tuple[float, str] | None:
        """A plain read: the file is only ever replaced whole."""
        data = self._read()
        paused = data["paused_until"]
        now = self.clock() if now is None else now
        return (float(paused), str(data["pause_reason"])) if paused is not None and paused > now else None

    def spent_usd(self, window_s: float = DAY_S, now: float | None = None) -> float:
        return _spent(self._read()["costs"], window_s, self.clock() if now is None else now)

    def calls_in_window(self, now: float | None = None) -> int:
        return len(prune(self._read()["calls"], self.clock() if now is None else now))

    def restore(self, calls: list[tuple[float, str]], costs: list[tuple[float, float, str]]) -> None:
        """The file is never lost with its loops; what is missing (by time) is added all the same."""
        with self._update() as data:
            data["calls"] = sorted({*data["calls"], *(t for t, _ in calls)})
            held = {(c[0], c[1]) for c in data["costs"]}
            data["costs"] += [[t, round(usd, 6)] for t, usd, _ in costs if (t, round(usd, 6)) not in held]


def _spent(costs: list[list[float]], window_s: float, now: float) -> float:
    return round(sum(float(usd) for at, usd in costs if now - at < window_s), 6)


@contextlib.contextmanager
def locked(directory: Path, lock_path: Path) -> Iterator[None]:
    """An exclusive flock on `lock_path`, released by close, or by the kernel if this process dies."""
    directory.mkdir(parents=True, exist_ok=True)
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def known_agents(directory: Path | None = None) -> list[str]:
    """Agents with a shared store on this machine."""
    base = directory or limits_dir()
    found = []
    for path in sorted(base.glob("*.json")):
        data = read_json(path)
        if data is not None:
            found.append(str(data.get("agent") or path.stem))
    return found


class LocalStore(FleetStore):
    """The fleet store of one machine: a file per agent, and a file per loop in `loops/` for the registry."""

    def __init__(self, directory: Path | None = None, clock: Callable[[], float] = time.time) -> None:
        self.directory = directory or limits_dir()
        self.clock = clock
        self.where = "local"

    def limits(self, agent: str) -> SharedLimits:
        return SharedLimits(agent, self.directory, self.clock)

    def agents(self) -> list[str]:
        return known_agents(self.directory)

    def epoch(self) -> str:
        return "local"

    def beat(self, record: dict[str, object]) -> None:
        safe = re.sub(r"[^A-Za-z0-9_.-]", "_", str(record["loop_id"]))
        write_json_atomic(self.directory / "loops" / f"{safe}.json", record)

    def loops(self) -> list[dict[str, object]]:
        out, now = [], self.clock()
        for path in sorted((self.directory / "loops").glob("*.json")):
            record = read_json(path)
            if record is None or not record.get("loop_id") or now - float(record.get("heartbeat") or 0) > \
                    FORGET_AFTER_S:
                path.unlink(missing_ok=True)
            else:
                out.append(record)
        return out

    def close(self) -> None:
        """Nothing held open: each change opens and closes its file."""
