"""The loop's side of the fleet store (dun/fleet/): the shared call window and budget asked before each agent call,
the cost and a usage-limit pause told after it, and the loop's record in the registry, written at every change of
its state and every `fleet.heartbeat_s` while it waits."""

from __future__ import annotations

import os
import time
from collections.abc import Callable

from dun.config.sections import Fleet
from dun.core.kinds import LIMIT_KINDS, Action, StopReason, WaitReason
from dun.fleet.connect import open_store
from dun.fleet.link import FleetLink
from dun.loop.policy import Decision, stop
from dun.store.state import LoopState
from dun.store.store import Store

WAITS = {"pause": WaitReason.USAGE_LIMIT, "window": WaitReason.SHARED_CALL_LIMIT,
         "unreachable": WaitReason.FLEET_STORE}


class FleetSide:
    def __init__(self, store: Store, fleet: Fleet, agent: str, say: Callable[[str], None],
                 quiet_s: float | None = None) -> None:
        """`store`: the loop's (the fleet store's password joins what its redactor hides). `quiet_s`: the shell
        driver's, whose loop has no dun process while its agent runs (at most this long) or it waits, so no
        heartbeat then: its record says until when it may be quiet."""
        self.quiet_s = quiet_s
        self.link = FleetLink(open_store(fleet.store, redactor=store.redactor), agent, store.root, store.fleet_path,
                              fleet.on_store_lost, fleet.store_retry_s, say)
        self.fleet = fleet
        self.shared = fleet.shared_limits
        self.heartbeat_s = fleet.heartbeat_s
        self.last: tuple[float, tuple[object, ...]] = (0.0, ())  # the last heartbeat: when, and what it said
        self.wait: tuple[str, float] | None = None  # the wait in progress: its reason and end

    def reserve(self, max_calls_per_hour: int) -> Decision | None:
        """None when the call is granted (and recorded), else the stop or the wait."""
        if not self.shared:
            return None
        answer = self.link.reserve(max_calls_per_hour, self.fleet.budget_usd_per_day)
        if answer.granted:
            return None
        if answer.why == "budget":
            return stop(StopReason.SHARED_BUDGET)
        return Decision(Action.WAIT, WAITS[answer.why], answer.wait_s)

    def concluded(self, cost_usd: float, decision: Decision, resume_at: float | None) -> None:
        """After an iteration: its cost, and the pause every loop of this agent waits for when it met a limit."""
        if not self.shared:
            return
        self.link.record_cost(cost_usd)
        if decision.action == Action.WAIT and decision.reason in LIMIT_KINDS and resume_at:
            self.link.pause_until(resume_at, str(decision.reason))

    def waiting(self, state: LoopState, reason: str, wait_s: float) -> None:
        self.wait = (reason, time.time() + wait_s)
        self.beat(state)

    def beat(self, state: LoopState, force: bool = False) -> None:
        """The registry record, when what it says changed or `fleet.heartbeat_s` passed since the last one."""
        status = str(state.status)
        if status == "running":
            if state.in_progress:
                self.wait = None
            status = "waiting" if self.wait else "running"
        said = (status, state.iteration, state.in_progress, self.wait)
        if not force and said == self.last[1] and time.time() - self.last[0] < self.heartbeat_s:
            return
        record = {"run_id": state.run_id, "status": status, "iteration": state.iteration,
                  "in_progress": state.in_progress, "call_started": state.call_started,
                  "cost_usd": state.cost_usd_total,
                  "stop_reason": state.stop_reason, "started_at": state.started_at, "pid": os.getpid(),
                  "wait_reason": self.wait[0] if self.wait and status == "waiting" else None,
                  "resume_at": round(self.wait[1], 3) if self.wait and status == "waiting" else None,
                  "driver": "loop" if self.quiet_s is None else "shell"}
        if self.quiet_s is not None and status in ("running", "waiting"):
            record["quiet_until"] = round(self.wait[1] if status == "waiting" and self.wait else
                                          time.time() + self.quiet_s, 3)
        self.link.beat(record)
        self.last = (time.time(), said)
