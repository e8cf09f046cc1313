"""One loop's link to the fleet store: its calls, costs and pauses, its record in the registry, and what it does
when the store cannot be reached.

Losing the store never loses a run. Every call and cost this loop makes is first written to its own journal
(`.dun/fleet.json`, with the last hour's calls and the last day's costs); when the store cannot be reached the
loop says so once and either waits for it (`fleet.on_store_lost: wait`, asking again every
`fleet.store_retry_s`) or goes on under this machine's local limits (`local`). When the store answers again, or
answers with another epoch (a Redis restarted without its data), the loop puts its journal back into it: the
store's members are unique per call, so what it still held is not counted twice.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from dun.core.atomic import write_json_atomic
from dun.core.ratewindow import WINDOW_S
from dun.fleet import identity
from dun.fleet.limits import SharedLimits
from dun.fleet.store import DAY_S, LOCAL, FleetStore, Limits, Reservation, StoreUnavailable
from dun.store.store import read_json

JOURNAL_VERSION = 1


class FleetLink:
    def __init__(self, store: FleetStore, agent: str, root: Path, journal_path: Path, on_lost: str = "wait",
                 retry_s: float = 30.0, say: Callable[[str], None] | None = None,
                 clock: Callable[[], float] = time.time) -> None:
        self.store, self.agent, self.root = store, agent, root
        self.limits: Limits = store.limits(agent)
        self.path = journal_path
        self.on_lost, self.retry_s = on_lost, retry_s
        self.say = say or (lambda text: None)
        self.clock = clock
        self.host = identity.host()
        self.repository = identity.repository(root)
        self.lost: str | None = None  # why the store cannot be reached, while it cannot
        # `local`: this machine's file stands in while a store elsewhere cannot be reached
        self.fallback = SharedLimits(agent) if on_lost == "local" and store.where != LOCAL else None
        journal = read_json(journal_path) or {}
        self.journal: dict[str, Any] = {
            "schema_version": JOURNAL_VERSION, "loop_id": journal.get("loop_id") or identity.loop_id(self.host, root),
            "epoch": journal.get("epoch"), "calls": list(journal.get("calls") or []),
            "costs": list(journal.get("costs") or []), "pause": journal.get("pause"),
            "behind": bool(journal.get("behind"))}  # the store missed something: put the journal back first

    @property
    def loop_id(self) -> str:
        return str(self.journal["loop_id"])

    def _member(self) -> str:
        return f"{self.loop_id}:{uuid.uuid4().hex[:16]}"

    def _save(self) -> None:
        now = self.clock()
        self.journal["calls"] = [c for c in self.journal["calls"] if now - c[0] < WINDOW_S]
        self.journal["costs"] = [c for c in self.journal["costs"] if now - c[0] < DAY_S]
        write_json_atomic(self.path, self.journal)

    # -- the outage ----------------------------------------------------------------------------------------
    def _lose(self, exc: StoreUnavailable) -> None:
        if self.lost is None:
            then = ("waiting for it (fleet.on_store_lost: wait)" if self.fallback is None else
                    "going on under this machine's limits until it is back (fleet.on_store_lost: local)")
            self.say(f"{exc}; {then}")
        self.lost = str(exc)
        if not self.journal["behind"]:  # kept across processes: the next run of this loop catches the store up
            self.journal["behind"] = True
            self._save()

    def _sync(self, ask_epoch: bool = False) -> None:
        """Before anything else: after an outage, or with a store that lost its data (asked with `ask_epoch`; a
        reservation learns it from its answer), put the journal back."""
        behind = self.lost is not None or self.journal["behind"]
        if not behind and self.journal["epoch"] is not None and not ask_epoch:
            return
        epoch = self.store.epoch()
        if behind or epoch != self.journal["epoch"]:
            self._restore(epoch)

    def _restore(self, epoch: str) -> None:
        calls = [(float(t), str(m)) for t, m in self.journal["calls"]]
        costs = [(float(t), float(usd), str(m)) for t, usd, m in self.journal["costs"]]
        self.limits.restore(calls, costs)
        pause = self.journal["pause"]
        if pause and float(pause[0]) > self.clock():
            self.limits.pause_until(float(pause[0]), str(pause[1]))
        was_lost, first = self.lost is not None or self.journal["behind"], self.journal["epoch"] is None
        self.journal["epoch"], self.lost, self.journal["behind"] = epoch, None, False
        self._save()
        if was_lost or not first:
            spent = sum(usd for _, usd, _ in costs)
            self.say(f"fleet store {self.store.where} is back: caught up with this loop's {len(calls)} call(s) of "
                     f"the last hour and ${spent:.2f} of the last day")

    # -- what the loop asks --------------------------------------------------------------------------------
    def reserve(self, max_per_hour: int, budget_usd: float) -> Reservation:
        """A call of the shared window (recorded in the journal when granted); `unreachable` with the seconds to
        wait when the store cannot be reached and the loop waits for it."""
        member = self._member()
        try:
            self._sync()
            answer = self.limits.reserve(max_per_hour, budget_usd, member, epoch=self.journal["epoch"])
            if answer.why == "stale":
                self._restore(answer.epoch)
                answer = self.limits.reserve(max_per_hour, budget_usd, member, epoch=self.journal["epoch"])
        except StoreUnavailable as exc:
            self._lose(exc)
            if self.fallback is None:
                return Reservation("unreachable", self.retry_s)
            answer = self.fallback.reserve(max_per_hour, budget_usd, member)
        if answer.granted:
            self.journal["calls"].append([answer.at, member])
            self._save()
        return answer

    def record_cost(self, usd: float) -> None:
        if usd <= 0:
            return
        member, now = self._member(), self.clock()
        self.journal["costs"].append([now, round(usd, 6), member])
        self._save()  # first: a cost the store did not take is put back when it returns
        try:
            self._sync()
            self.limits.record_cost(usd, member, now)
        except StoreUnavailable as exc:
            self._lose(exc)
            if self.fallback is not None:
                self.fallback.record_cost(usd, member, now)

    def pause_until(self, until: float, reason: str) -> None:
        """Every loop of this agent waits until `until` (a usage limit met by this one)."""
        self.journal["pause"] = [until, reason]
        self._save()
        try:
            self._sync()
            self.limits.pause_until(until, reason)
        except StoreUnavailable as exc:
            self._lose(exc)
            if self.fallback is not None:
                self.fallback.pause_until(until, reason)

    def spent_usd(self) -> float | None:
        """The shared spend of the last day, or None while the store cannot be reached."""
        try:
            return self.limits.spent_usd()
        except StoreUnavailable as exc:
            self._lose(exc)
            return None

    def beat(self, record: dict[str, object]) -> bool:
        """Write this loop's registry record (its id, host, repository and the time added); a store that is back
        is caught up first. False when the store cannot be reached."""
        full = {**record, "loop_id": self.loop_id, "host": self.host, "repository": self.repository,
                "worktree": str(self.root), "agent": self.agent, "heartbeat": round(self.clock(), 3)}
        try:
            self._sync(ask_epoch=True)  # a Redis restarted between two calls is caught up within a heartbeat
            self.store.beat(full)
        except StoreUnavailable as exc:
            self._lose(exc)
            return False
        return True
