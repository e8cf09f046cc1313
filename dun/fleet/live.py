"""What `dun watch` shows, as data: one snapshot per loop, from a source that is only a function returning them.

The local source finds the loops of this machine: those of the fleet store's registry that run on this host (every
loop writes its record there, dun/fleet/store.py) and every work tree of the repository the watch was started in.
A fleet source (another machine's loops, from the same registry) is another function of the same type.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dun.agents.stream import output_tail
from dun.fleet.store import FleetStore, StoreUnavailable
from dun.store.layout import WORKTREES, dun_dir
from dun.store.lock import lock_holder
from dun.store.records import LiveDecision, LiveRecord
from dun.store.store import Store

RECENT_S = 3600.0  # a loop that stopped within the last hour is still shown
OUTPUT_LINES = 8


@dataclass(frozen=True)
class LoopSnapshot:
    """One loop as a watcher sees it now."""

    label: str  # `repo` for a main tree, `repo/NAME` for a worktree
    root: str
    status: str  # running | not running (the loop died) | stopped | complete
    pid: int | None = None
    host: str | None = None  # None: this machine
    run_id: str | None = None
    agent: str | None = None
    phase: str | None = None  # LivePhase
    iteration: int = 0
    max_iterations: int | None = None
    in_progress: int | None = None
    call_started: float | None = None
    boxes: tuple[int, int] | None = None  # (done, total)
    cost_usd: float = 0.0
    budget_usd: float | None = None
    decisions: tuple[LiveDecision, ...] = ()
    wait_until: float | None = None
    wait_reason: str | None = None
    stop_reason: str | None = None
    output: tuple[str, ...] = field(default=())  # the last lines of the agent's output, readable
    updated: float | None = None


LoopSource = Callable[[], list[LoopSnapshot]]


# -- where this machine's loops run ----------------------------------------------------------------------------
def registered_roots(store: FleetStore) -> list[Path]:
    """The work trees of this machine's loops, from the fleet store's registry (every loop writes its record there
    as it runs; a record names its host and work tree), those whose `.dun/` still exists."""
    from dun.fleet.identity import host

    here = host()
    try:
        records = store.loops()
    except StoreUnavailable:
        return []  # the watch still shows the repository's own work trees
    roots = []
    for record in records:
        root = Path(str(record.get("worktree") or ""))
        if record.get("host") == here and root.is_absolute() and dun_dir(root).is_dir():
            roots.append(root)
    return roots


# -- snapshots ------------------------------------------------------------------------------------------------
def label_for(root: Path) -> str:
    """`repo/NAME` for a worktree under a repository's `.dun/worktrees/`, else the directory's name."""
    parts = root.parts
    if len(parts) >= 4 and parts[-3:-1] == tuple(WORKTREES.split("/")):
        return f"{parts[-4]}/{parts[-1]}"
    return root.name or str(root)


def snapshot(root: Path, label: str | None = None, output_lines: int = OUTPUT_LINES) -> LoopSnapshot | None:
    """The loop of `root` now; None when no loop ever ran there."""
    store = Store(root)
    state = store.peek_state()
    live = store.read_live()
    if state is None and live is None:
        return None
    raw: dict[str, Any] = dict(state.to_record()) if state is not None else {}
    same_run = live is not None and (state is None or live["run_id"] == state.run_id)
    lv = live if same_run and live is not None else None
    pid = loop_pid(store, raw.get("status") == "running", lv)
    if pid:
        status = "running"
    elif raw.get("status") == "running":
        status = "not running"
    else:
        status = str(raw.get("status") or "stopped")
    n = raw.get("in_progress") if pid else None
    output: tuple[str, ...] = ()
    if lv is not None and lv.get("out_file") and output_lines > 0:
        output = tuple(output_tail(store.logs_dir / str(lv["out_file"]), output_lines))
    boxes = (lv["boxes_done"] or 0, lv["boxes_total"]) if lv and lv["boxes_total"] is not None else None
    return LoopSnapshot(
        label=label or label_for(root), root=str(root), status=status, pid=pid or None,
        run_id=raw.get("run_id") or (lv["run_id"] if lv else None), agent=lv["agent"] if lv else None,
        phase=(lv["phase"] if pid else None) if lv else None,
        iteration=int(raw.get("iteration") or (lv["iteration"] if lv else 0)),
        max_iterations=lv["max_iterations"] if lv else None, in_progress=n,
        call_started=(raw.get("call_started") if n else None), boxes=boxes,
        cost_usd=float(raw.get("cost_usd_total") or (lv["cost_usd"] if lv else 0.0)),
        budget_usd=lv["budget_usd"] if lv else None, decisions=tuple(lv["decisions"]) if lv else (),
        wait_until=lv["wait_until"] if lv and pid and lv["phase"] == "waiting" else None,
        wait_reason=lv["wait_reason"] if lv and pid and lv["phase"] == "waiting" else None,
        stop_reason=raw.get("stop_reason"), output=output, updated=lv["updated"] if lv else None)


def loop_pid(store: Store, run_open: bool, live: LiveRecord | None) -> int | None:
    """The process of the loop running in `store`'s repository, or None: the holder of the lock, else (the run
    still open) the script of the shell driver, which holds the lock only during its steps."""
    return lock_holder(store) or (_shell_driver(live) if run_open else None)


def _shell_driver(live: LiveRecord | None) -> int | None:
    """The script driving a loop one `dun respond --decide` step at a time, while it runs: no process holds the
    lock between its steps (while its agent works), so its own process says whether the loop lives."""
    from dun.core.reaper import process_start_time

    if live is None or live.get("driver") != "shell" or not live.get("pid_started"):
        return None
    return live["pid"] if process_start_time(live["pid"]) == live["pid_started"] else None


def _recent(snap: LoopSnapshot, now: float) -> bool:
    return snap.status in ("running", "not running") or (snap.updated or 0) > now - RECENT_S


class LocalLoops:
    """The loops of this machine: those in the registry of `store` and the work trees of the repository at `start`
    (None: only the registry's). The roots are looked up again every `rediscover_s`; the snapshots are read at every
    call."""

    def __init__(self, start: Path | None, store: FleetStore, output_lines: int = OUTPUT_LINES,
                 rediscover_s: float = 3.0) -> None:
        self.start = start
        self.store = store
        self.output_lines = output_lines
        self.rediscover_s = rediscover_s
        self._roots: list[Path] = []
        self._mine: set[Path] = set()
        self._found_at = -rediscover_s

    def roots(self) -> list[Path]:
        now = time.monotonic()
        if now - self._found_at >= self.rediscover_s:
            self._found_at = now
            mine: list[Path] = []
            if self.start is not None:
                from dun.core.errors import UsageError
                from dun.fleet.worktrees import list_worktrees

                with contextlib.suppress(UsageError):
                    mine = [wt.path for wt in list_worktrees(self.start)]
                mine = mine or [self.start]
            seen: dict[str, Path] = {}
            for root in [*mine, *registered_roots(self.store)]:
                seen.setdefault(os.path.realpath(root), root)
            self._roots = list(seen.values())
            self._mine = {Path(os.path.realpath(p)) for p in mine}
        return self._roots

    def __call__(self) -> list[LoopSnapshot]:
        now = time.time()
        found = []
        for root in self.roots():
            snap = snapshot(root, output_lines=self.output_lines)
            if snap is not None and (Path(os.path.realpath(root)) in self._mine or _recent(snap, now)):
                found.append(snap)
        return found
