"""Timestamps as dun writes them: UTC, ISO 8601, to the second."""

from __future__ import annotations

import datetime


def now_iso() -> str:
    return datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
