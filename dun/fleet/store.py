"""The fleet store: what the loops of one agent account share (the rolling hourly call window, a usage-limit pause,
the spend of the last 24 hours) and the registry of running loops. One interface, two implementations: a file per
agent on this machine (dun/fleet/limits.py, the default) and Redis, for loops on several machines
(dun/fleet/redisstore.py, `fleet.store: redis://...`).

Where the store is: `DUN_FLEET_STORE` in the environment wins over `fleet.store` in the config (a URL with a
password belongs there, never in the repository's config, which the agent reads); `DUN_FLEET_PASSWORD` adds a
password to a URL without one. Both variables are withheld from the agent (dun/core/redact.WITHHELD_ENV).
"""

from __future__ import annotations

import abc
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from dun.core.redact import WITHHELD_ENV

DAY_S = 86400.0
STORE_ENV, PASSWORD_ENV = WITHHELD_ENV
LOCAL = "local"
FORGET_AFTER_S = 7 * DAY_S  # a registry record with no heartbeat for a week is dropped


class StoreUnavailable(Exception):
    """The fleet store cannot be reached; the message says where and why, in one line."""


@dataclass(frozen=True)
class Reservation:
    """The answer to one call asked of the window: `why` is granted, window, pause, budget (then `wait_s` is 0:
    the shared budget is spent, the loop stops) or stale (the store lost its data since the caller's `epoch`)."""

    why: str
    wait_s: float = 0.0
    at: float = 0.0  # the time the granted call was recorded at
    epoch: str = ""  # stale: the store's epoch now

    @property
    def granted(self) -> bool:
        return self.why == "granted"


class Limits(abc.ABC):
    """One agent account's shared limits. Every change is atomic in the store: N loops asking at once never get
    more than the window's calls in any rolling hour. `member` names a call or a cost uniquely (the loop's id and a
    counter), so that `restore` can put back what a store lost without counting anything twice."""

    agent: str

    @abc.abstractmethod
    def reserve(self, max_per_hour: int, budget_usd: float, member: str, now: float | None = None,
                epoch: str | None = None) -> Reservation:
        """Take one call of the rolling hour unless a pause holds, the window is full or `budget_usd` (> 0) is
        spent in the last 24 hours; nothing is recorded when the answer is not a grant. `epoch`: the store's epoch
        the caller last caught up with (another one answers `stale`); None: whatever it is."""

    @abc.abstractmethod
    def record_cost(self, usd: float, member: str, now: float | None = None) -> None: ...

    @abc.abstractmethod
    def pause_until(self, until: float, reason: str, now: float | None = None) -> float:
        """Pause every loop of this agent until `until` (a later pause already set wins); returns the pause end."""

    @abc.abstractmethod
    def pause(self, now: float | None = None) -> tuple[float, str] | None:
        """The pause still ahead (its end and reason), or None."""

    @abc.abstractmethod
    def spent_usd(self, window_s: float = DAY_S, now: float | None = None) -> float: ...

    @abc.abstractmethod
    def calls_in_window(self, now: float | None = None) -> int: ...

    @abc.abstractmethod
    def restore(self, calls: list[tuple[float, str]], costs: list[tuple[float, float, str]]) -> None:
        """Put back calls and costs a store lost (a Redis restarted empty); those it still holds are kept once."""

    def reserve_call(self, max_per_hour: int, now: float | None = None) -> float:
        """0.0 when a call is granted (and recorded), else the seconds to wait."""
        import uuid

        return self.reserve(max_per_hour, 0.0, uuid.uuid4().hex, now).wait_s

    def paused_until(self, now: float | None = None) -> float | None:
        pause = self.pause(now)
        return pause[0] if pause else None

    def snapshot(self, now: float | None = None) -> dict[str, object]:
        pause = self.pause(now)
        return {"agent": self.agent, "calls_last_hour": self.calls_in_window(now),
                "spent_usd_24h": self.spent_usd(DAY_S, now), "paused_until": pause[0] if pause else None,
                "pause_reason": pause[1] if pause else None}


class FleetStore(abc.ABC):
    """The limits of every agent and the registry of loops, in one place."""

    where: str  # for messages: "local", or the URL without its password

    @abc.abstractmethod
    def limits(self, agent: str) -> Limits: ...

    @abc.abstractmethod
    def agents(self) -> list[str]:
        """Agents with shared limits in the store."""

    @abc.abstractmethod
    def epoch(self) -> str:
        """Changes when the store lost what it held (a Redis restarted without its data): then every loop puts
        back its own calls and costs (`Limits.restore`)."""

    @abc.abstractmethod
    def beat(self, record: dict[str, object]) -> None:
        """Write a loop's registry record (`loop_id` names it; `heartbeat` is when)."""

    @abc.abstractmethod
    def loops(self) -> list[dict[str, Any]]:
        """Every loop's registry record (those without a heartbeat for FORGET_AFTER_S are dropped)."""

    @abc.abstractmethod
    def close(self) -> None:
        """Let go of connections."""


def public_url(url: str) -> str:
    """The URL with its password replaced by `***`: what messages and `dun fleet status` show."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit(parts._replace(netloc=f"{parts.username or ''}:***@{host}"))


def check_configured(value: str) -> str | None:
    """What is wrong with `fleet.store` as written in a config file, or None."""
    if value == LOCAL:
        return None
    parts = urlsplit(value)
    if parts.scheme not in ("redis", "rediss", "unix"):
        return f"'{public_url(value)}' is neither 'local' nor a redis://, rediss:// or unix:// URL"
    if parts.password and parts.password != "***":
        return (f"holds a password: the agent can read the repository's config; give it in ${PASSWORD_ENV} or "
                f"the whole URL in ${STORE_ENV}")
    return None
