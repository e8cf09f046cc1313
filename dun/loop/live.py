"""The loop's live record (`.dun/live.json`): rewritten at every change of phase, by both drivers, so that `dun
watch` (and a fleet registry's heartbeat) can show what a loop is doing without reading its logs.

A display, never a decision: nothing here is read back by the loop except the last decisions, which a new process
of the same run (`dun respond --decide` runs one step per process) carries forward.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

from dun.core.errors import DunError
from dun.core.kinds import LivePhase
from dun.store.records import LIVE_SCHEMA_VERSION, LiveDecision, LiveRecord
from dun.store.state import LoopState
from dun.store.store import Store

if TYPE_CHECKING:
    from dun.config.sections import Settings

MAX_DECISIONS = 5


def _stamp(path: Path) -> tuple[object, ...]:
    try:
        st = os.stat(path)
    except OSError:
        return (str(path),)
    return (str(path), st.st_mtime_ns, st.st_size, st.st_ino)


class BoxCounter:
    """The mission's ticked and total boxes, read again only when the ledger's or a mission file's stamp changed
    (counting 50 boxes costs 5 ms; a loop asks 4 times per iteration). One per live writer: the run's own."""

    def __init__(self) -> None:
        self._key: tuple[object, ...] | None = None
        self._files: list[str] = []
        self._count: tuple[int, int] | None = None

    def count(self, root: Path) -> tuple[int, int] | None:
        """(ticked, total) of the mission's boxes as the files hold them now; None when the run has no mission
        file."""
        from dun.trust import tasks

        ledger_key = _stamp(tasks.ledger_path(root))
        if self._key is not None and self._key[0] == ledger_key:
            files = self._files
        else:
            ledger = tasks.load(root)
            files = ledger[0] if ledger is not None else []
        key = (ledger_key, *(_stamp(root / rel) for rel in files))
        if key != self._key:
            boxes = tasks.scan(root, files) if files else None
            self._key, self._files = key, files
            self._count = (sum(1 for b in boxes if b["checked"]), len(boxes)) if boxes is not None else None
        return self._count


class LiveWriter:
    """Writes the live records of one store in a thread of its own, the latest one first: a rename costs a loop
    4-10 ms on some disks (ext4 flushes a file renamed over another), and a display must not slow the loop. The
    thread ends when it has nothing to write and is not a daemon: a process (a `dun respond --decide` step) exits
    only once its last record is written."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.boxes = BoxCounter()
        self._pending: LiveRecord | None = None
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def put(self, record: LiveRecord) -> None:
        with self._lock:
            self._pending = record  # a record not yet written is replaced: only the latest matters
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="dun-live", daemon=False)
                self._thread.start()

    def _run(self) -> None:
        while True:
            with self._lock:
                record, self._pending = self._pending, None
                if record is None:
                    self._thread = None
                    return
            with contextlib.suppress(OSError, DunError):  # a display: a full disk or a planted link is the loop's to
                # report (its own writes meet them), never this thread's
                self.store.write_live(record)

    def flush(self) -> None:
        """Wait until every record put is written (tests, and before reading the file back)."""
        while (thread := self._thread) is not None:
            thread.join()


def record_live(writer: LiveWriter, state: LoopState, settings: Settings, phase: LivePhase,
                decision: LiveDecision | None = None, wait_until: float | None = None,
                wait_reason: str | None = None, previous: LiveRecord | None = None,
                shell: bool = False) -> LiveRecord:
    """The live record of the run in `state`, now in `phase`, handed to `writer`; `decision` joins the last few of
    `previous` (the record this process wrote last; read from the file when it wrote none). `shell`: the loop is
    the script that runs this `dun respond --decide` step (its parent), which outlives the step."""
    from dun.core.reaper import process_start_time

    store = writer.store
    previous = previous or store.read_live()
    decisions = list(previous["decisions"]) if previous and previous.get("run_id") == state.run_id else []
    last = decisions[-1] if decisions else None
    repeated = decision is not None and decision["iteration"] is None and last is not None and \
        (last["action"], last["reason"]) == (decision["action"], decision["reason"])  # the stop its iteration decided
    if decision is not None and not repeated:
        decisions = [*decisions, decision][-MAX_DECISIONS:]
    driver = os.getppid() if shell else os.getpid()
    n = state.in_progress
    shown = n or state.iteration  # between iterations, the last one's output stays in view
    boxes = writer.boxes.count(store.root)
    cap = settings.loop.max_budget_usd
    record: LiveRecord = {
        "schema_version": LIVE_SCHEMA_VERSION, "run_id": state.run_id, "pid": driver,
        "pid_started": process_start_time(driver), "driver": "shell" if shell else "loop",
        "agent": settings.agent.name, "phase": str(phase), "iteration": state.iteration,
        "max_iterations": settings.loop.max_iterations, "in_progress": n,
        "call_started": state.call_started if n else None,
        "out_file": store.iteration_file(shown, ".out").name if shown else None,
        "boxes_done": boxes[0] if boxes else None, "boxes_total": boxes[1] if boxes else None,
        "cost_usd": round(float(state.cost_usd_total), 6), "budget_usd": float(cap) if cap > 0 else None,
        "decisions": decisions, "wait_until": wait_until, "wait_reason": wait_reason,
        "stop_reason": state.stop_reason, "started_epoch": state.started_epoch, "updated": time.time()}
    writer.put(record)
    return record


def decision_entry(iteration: int | None, action: str, reason: str) -> LiveDecision:
    return {"iteration": iteration, "action": action, "reason": reason, "at": time.time()}
