"""One agent account's limits, shared by every loop on this machine: the rolling hourly call window, the spend of
the last 24 hours, and a pause when one loop hits a usage limit (the subscription's limit is global, so the others
must wait too).

A JSON file per agent under the user's state directory. Every change happens under an exclusive flock on a
separate lock file and is written atomically, so concurrent loops never lose each other's calls and a reader
never sees a torn file.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dun.core.atomic import write_json_atomic
from dun.core.ratewindow import prune, wait_needed
from dun.core.resources import user_state_dir
from dun.store.store import read_json

if TYPE_CHECKING:
    from dun.config.sections import Settings

DAY_S = 86400.0
SCHEMA_VERSION = 1


def limits_dir() -> Path:
    return user_state_dir() / "fleet"


def _empty(agent: str) -> dict[str, Any]:
    return {"schema_version": SCHEMA_VERSION, "agent": agent, "calls": [], "costs": [], "paused_until": None,
            "pause_reason": None, "clock_high": 0.0}


class SharedLimits:
    """`clock` is injectable (tests share a simulated one between processes); it is read under the lock, so the
    times of granted calls are ordered like the grants themselves."""

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
        self.directory.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)  # released by close, or by the kernel if this process dies
            data = self._read()
            yield data
            write_json_atomic(self.path, data)
        finally:
            os.close(fd)

    def _read(self) -> dict[str, Any]:
        return {**_empty(self.agent), **(read_json(self.path) or {})}

    def _now(self, data: dict[str, Any], now: float | None) -> float:
        # never earlier than a time already recorded: a slow clock must not reopen a window another loop filled
        current = max(self.clock() if now is None else now, float(data["clock_high"]))
        data["clock_high"] = current
        return current

    def reserve_call(self, max_per_hour: int, now: float | None = None) -> float:
        """Take one call of the rolling hour: 0.0 when granted (and recorded), else the seconds to wait, for the
        window or for a pause. Nothing is recorded when the answer is a wait."""
        with self._update() as data:
            now = self._now(data, now)
            paused = data["paused_until"]
            if paused is not None and paused > now:
                return float(paused) - now
            calls = prune(data["calls"], now)
            wait = wait_needed(calls, max_per_hour, now)
            if wait == 0.0:
                calls.append(now)
            data["calls"] = calls
            return wait

    def record_cost(self, usd: float, now: float | None = None) -> None:
        if usd <= 0:
            return
        with self._update() as data:
            now = self._now(data, now)
            data["costs"] = [c for c in data["costs"] if now - c[0] < DAY_S] + [[now, round(usd, 6)]]

    def pause_until(self, until: float, reason: str, now: float | None = None) -> float:
        """Pause every loop of this agent until `until` (a later pause already set wins); returns the pause end."""
        with self._update() as data:
            now = self._now(data, now)
            current = data["paused_until"]
            if current is None or current <= now or until > current:
                data["paused_until"], data["pause_reason"] = until, reason
            return float(data["paused_until"])

    def paused_until(self, now: float | None = None) -> float | None:
        """The end of a pause still ahead, or None. A plain read: the file is only ever replaced whole."""
        paused = self._read()["paused_until"]
        now = self.clock() if now is None else now
        return float(paused) if paused is not None and paused > now else None

    def spent_usd(self, window_s: float = DAY_S, now: float | None = None) -> float:
        now = self.clock() if now is None else now
        return round(sum(float(usd) for at, usd in self._read()["costs"] if now - at < window_s), 6)

    def snapshot(self, now: float | None = None) -> dict[str, Any]:
        now = self.clock() if now is None else now
        data = self._read()
        paused = self.paused_until(now)
        return {"agent": self.agent, "calls_last_hour": len(prune(data["calls"], now)),
                "spent_usd_24h": self.spent_usd(DAY_S, now), "paused_until": paused,
                "pause_reason": data["pause_reason"] if paused else None}


def known_agents(directory: Path | None = None) -> list[str]:
    """Agents with a shared store on this machine."""
    base = directory or limits_dir()
    found = []
    for path in sorted(base.glob("*.json")):
        data = read_json(path)
        if data is not None:
            found.append(str(data.get("agent") or path.stem))
    return found


def shared_limits_for(settings: Settings) -> SharedLimits | None:
    """The store for the run's agent, or None when `fleet.shared_limits` is off."""
    if not settings.fleet.shared_limits:
        return None
    return SharedLimits(settings.agent.name)
