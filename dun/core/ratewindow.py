"""The hourly call limit over a rolling window of call times (persisted, so a restart gives no burst)."""

from __future__ import annotations

WINDOW_S = 3600.0


def prune(calls: list[float], now: float) -> list[float]:
    return sorted(t for t in calls if now - t < WINDOW_S)


def wait_needed(calls: list[float], limit: int, now: float) -> float:
    """Seconds until one more call fits in the window (0 when it fits now)."""
    recent = prune(calls, now)
    if len(recent) < limit:
        return 0.0
    return max(0.0, recent[len(recent) - limit] + WINDOW_S - now)


def calls_left(calls: list[float], limit: int, now: float) -> int:
    return max(0, limit - len(prune(calls, now)))
