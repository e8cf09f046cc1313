"""The loop's live record (`.dun/live.json`): rewritten at every change of phase, by both drivers, so that `dun
watch` (and a fleet registry's heartbeat) can show what a loop is doing without reading its logs.

A display, never a decision: nothing here is read back by the loop except the last decisions, which a new process
of the same run (`dun respond --decide` runs one step per process) carries forward.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from dun.core.kinds import LivePhase
from dun.store.records import LIVE_SCHEMA_VERSION, LiveDecision, LiveRecord, LoopState
from dun.store.store import Store

MAX_DECISIONS = 5


def mission_boxes(root: Path) -> tuple[int, int] | None:
    """(ticked, total) of the mission's boxes as the files hold them now; None when the run has no mission file."""
    from dun.trust import tasks

    ledger = tasks.load(root)
    if ledger is None or not ledger[0]:
        return None
    found = tasks.scan(root, ledger[0])
    return sum(1 for box in found if box["checked"]), len(found)


def record_live(store: Store, state: LoopState, cfg: dict[str, Any], phase: LivePhase,
                decision: LiveDecision | None = None, wait_until: float | None = None,
                wait_reason: str | None = None) -> LiveRecord:
    """Write the live record of the run in `state`, now in `phase`; `decision` joins the last few."""
    previous = store.read_live()
    decisions = list(previous["decisions"]) if previous and previous.get("run_id") == state["run_id"] else []
    last = decisions[-1] if decisions else None
    repeated = decision is not None and decision["iteration"] is None and last is not None and \
        (last["action"], last["reason"]) == (decision["action"], decision["reason"])  # the stop its iteration decided
    if decision is not None and not repeated:
        decisions = [*decisions, decision][-MAX_DECISIONS:]
    n = state["in_progress"]
    shown = n or state["iteration"]  # between iterations, the last one's output stays in view
    boxes = mission_boxes(store.root)
    cap = cfg["loop"]["max_budget_usd"]
    record: LiveRecord = {
        "schema_version": LIVE_SCHEMA_VERSION, "run_id": state["run_id"], "pid": os.getpid(),
        "agent": str(cfg["agent"]["name"]), "phase": str(phase), "iteration": state["iteration"],
        "max_iterations": int(cfg["loop"]["max_iterations"]), "in_progress": n,
        "call_started": state["call_started"] if n else None,
        "out_file": store.iteration_file(shown, ".out").name if shown else None,
        "boxes_done": boxes[0] if boxes else None, "boxes_total": boxes[1] if boxes else None,
        "cost_usd": round(float(state["cost_usd_total"]), 6), "budget_usd": float(cap) if cap > 0 else None,
        "decisions": decisions, "wait_until": wait_until, "wait_reason": wait_reason,
        "stop_reason": state["stop_reason"], "started_epoch": state["started_epoch"], "updated": time.time()}
    store.write_live(record)
    return record


def decision_entry(iteration: int | None, action: str, reason: str) -> LiveDecision:
    return {"iteration": iteration, "action": action, "reason": reason, "at": time.time()}
