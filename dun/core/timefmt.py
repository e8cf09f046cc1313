"""Timestamps as dun writes them: UTC, ISO 8601, to the second."""

from __future__ import annotations

import datetime


def now_iso() -> str:
    return datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")


def clock(seconds: float) -> str:
    """An elapsed time or a countdown as a person reads it: 45s, 3m07s, 2h05m."""
    total = max(0, int(seconds))
    if total < 60:
        return f"{total}s"
    if total < 3600:
        return f"{total // 60}m{total % 60:02d}s"
    return f"{total // 3600}h{total % 3600 // 60:02d}m"
