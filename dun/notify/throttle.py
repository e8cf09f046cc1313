"""At most one notification per event kind per `notify.interval_min`: the rest are held and go out as a digest
with the next notification of that kind once the interval has passed, or with the run's stop notification,
whichever comes first. The stop events (complete, stopped, circuit_open) always go: they end the run's story.

The record is `.dun/notify.json`: per event kind, when it was last sent and the titles held since."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from dun.core.atomic import write_json_atomic
from dun.core.kinds import NotifyEvent
from dun.store.store import Store, read_json

FINAL = (NotifyEvent.COMPLETE, NotifyEvent.STOPPED, NotifyEvent.CIRCUIT_OPEN)
MAX_HELD = 50  # titles kept per kind; beyond it only the count grows


def _path(root: Path) -> Path:
    return Store(root).notify_path


def _load(root: Path) -> dict[str, Any]:
    data = read_json(_path(root)) or {}
    return data if isinstance(data.get("kinds"), dict) else {"kinds": {}}


def admit(root: Path, event: str, title: str, interval_s: float, now: float | None = None) -> list[str] | None:
    """None: hold this notification (recorded for the digest). Else the held titles to add to it as a digest
    (of this kind; of every kind for a stop event), which are then forgotten."""
    now = time.time() if now is None else now
    data = _load(root)
    kinds: dict[str, Any] = data["kinds"]
    entry = kinds.setdefault(event, {"last_sent": None, "held": [], "count": 0})
    final = event in FINAL
    last = entry.get("last_sent")
    if not final and interval_s > 0 and isinstance(last, int | float) and now - last < interval_s:
        entry["held"] = [*entry.get("held", []), title][-MAX_HELD:]
        entry["count"] = int(entry.get("count") or 0) + 1
        write_json_atomic(_path(root), data)
        return None
    digest: list[str] = []
    for kind, other in kinds.items():
        if kind == event or final:
            count = int(other.get("count") or 0)
            held = list(other.get("held") or [])
            digest += held + ([f"... and {count - len(held)} more"] if count > len(held) else [])
            other.update({"held": [], "count": 0})
    entry["last_sent"] = now
    write_json_atomic(_path(root), data)
    return digest


def with_digest(body: str, digest: list[str]) -> str:
    if not digest:
        return body
    return body + f"\n\nAlso since the last notification ({len(digest)} held back):\n" + "\n".join(
        f"- {title}" for title in digest[:20]) + (f"\n- ... and {len(digest) - 20} more" if len(digest) > 20 else "")
