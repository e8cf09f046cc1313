"""`dun watch`'s source of the other machines' loops: the fleet store's registry (dun/fleet/store.py) as snapshots,
beside this machine's own loops (dun/fleet/live.py, which reads their files and shows more)."""

from __future__ import annotations

import os
import time
from typing import Any

from dun.fleet.live import LoopSnapshot, LoopSource
from dun.fleet.status import LIVE, is_stale
from dun.fleet.store import FleetStore, StoreUnavailable

ASK_EVERY_S = 1.0  # the watch polls four times a second; the store is asked at most once a second


def snapshot(record: dict[str, Any], now: float, stale_after_s: float) -> LoopSnapshot:
    """One registry record as the watch shows it: a loop whose heartbeat is older than `stale_after_s` is `stale`."""
    repository = str(record.get("repository") or "?")
    where = os.path.basename(str(record.get("worktree") or ""))
    label = repository if where in ("", "repo", repository.rsplit("/", 1)[-1]) else f"{repository}/{where}"
    status = str(record.get("status") or "stopped")
    age = now - float(record.get("heartbeat") or 0)
    waiting = status == "waiting"
    live = status in LIVE
    stale = is_stale(record, now, stale_after_s)
    n = record.get("in_progress") if live and not stale else None
    return LoopSnapshot(
        label=label, root=str(record.get("worktree") or ""),
        status="stale" if stale else "running" if live else status, host=str(record.get("host") or "?"),
        run_id=record.get("run_id"), agent=record.get("agent"),
        phase=None if stale or not live else "waiting" if waiting else "agent" if n else None,
        iteration=int(record.get("iteration") or 0), in_progress=n,
        call_started=record.get("call_started") if n else None, cost_usd=float(record.get("cost_usd") or 0.0),
        wait_until=record.get("resume_at") if waiting and not stale else None,
        wait_reason=record.get("wait_reason") if waiting and not stale else None,
        stop_reason=f"no heartbeat for {age / 60:.0f} min, last seen {status}" if stale else
        record.get("stop_reason"), updated=record.get("heartbeat"))


class FleetLoops:
    """The loops of the fleet store not running on `skip_host` (this machine's come from its own source)."""

    def __init__(self, store: FleetStore, stale_after_s: float, skip_host: str | None) -> None:
        self.store, self.stale_after_s, self.skip_host = store, stale_after_s, skip_host
        self.asked = -ASK_EVERY_S
        self.last: list[LoopSnapshot] = []

    def __call__(self) -> list[LoopSnapshot]:
        if time.monotonic() - self.asked < ASK_EVERY_S:
            return self.last
        self.asked, now = time.monotonic(), time.time()
        try:
            records = self.store.loops()
        except StoreUnavailable as exc:
            self.last = [LoopSnapshot(label=f"fleet store {self.store.where}", root="", status="unreachable",
                                      stop_reason=str(exc).split(": ", 1)[-1][:160])]
            return self.last
        self.last = [snapshot(r, now, self.stale_after_s) for r in records if r.get("host") != self.skip_host]
        return self.last


def together(*sources: LoopSource) -> LoopSource:
    """One source of several."""
    return lambda: [snap for source in sources for snap in source()]
