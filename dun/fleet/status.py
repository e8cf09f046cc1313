"""The data behind `dun fleet status`: every loop of the repository (one per worktree), and every loop of the fleet
store (on this machine or, with Redis, on all of them) with the limits its agents share."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from dun.fleet.store import FleetStore
from dun.fleet.worktrees import Worktree, list_worktrees, main_root, worktrees_dir
from dun.store.lock import lock_holder
from dun.store.store import Store

LIVE = ("running", "waiting")  # a loop in these states beats; a stopped one does not
STATE_KEYS = ("run_id", "stop_reason", "iteration", "cost_usd_total", "errors_total", "resume_at", "started_at",
              "updated_at")


def loop_info(worktree: Worktree, name: str) -> dict[str, object]:
    """One worktree's loop: `running` when a process holds its lock, `died` when the state says running but
    nobody holds it, else the state's own status (or `never run`)."""
    present = worktree.path.is_dir()
    store = Store(worktree.path)
    state = store.peek_state() if present else None
    pid = lock_holder(store) if present else None
    if pid:
        status = "running"
    elif state is None:
        status = "never run" if present else "missing"
    else:
        status = "died" if state.status == "running" else state.status
    info: dict[str, object] = {"name": name, "path": str(worktree.path), "branch": worktree.branch,
                            "head": worktree.head, "status": status, "pid": pid}
    raw: dict[str, Any] = dict(state.to_record()) if state is not None else {}
    info.update({key: raw.get(key) for key in STATE_KEYS})
    info["circuit"] = (raw.get("circuit") or {}).get("state")
    return info


def running_elsewhere(root: Path) -> list[dict[str, object]]:
    """The loops running in the other work trees of the repository at `root` (`dun loop --worktree`, or the main
    tree's seen from a worktree), as `dun fleet status` has them; none outside a git repository."""
    from dun.core.errors import UsageError

    here = root.resolve()
    try:
        trees = list_worktrees(root)
    except UsageError:  # not a git repository, or git missing
        return []
    found = [loop_info(wt, "(main)" if wt.main else wt.path.name) for wt in trees if wt.path.resolve() != here]
    return [loop for loop in found if loop["status"] == "running"]


def fleet_status(root: Path, configured_dir: str | None = None) -> dict[str, object]:
    main = main_root(root)
    base = worktrees_dir(main, configured_dir)
    loops = []
    for wt in list_worktrees(main):
        path = wt.path.resolve()
        if wt.main:
            name = "(main)"
        elif path.parent == base:
            name = path.name
        else:
            name = str(path)
        loops.append(loop_info(wt, name))
    return {"repository": str(main), "worktrees_dir": str(base), "loops": loops}


def is_stale(record: dict[str, Any], now: float, stale_after_s: float) -> bool:
    """A running or waiting loop not heard from for `stale_after_s`, past the time it said it would be quiet until
    (`quiet_until`: the shell driver's loop has no process of dun's while its agent runs or it waits)."""
    if record.get("status") not in LIVE:
        return False
    quiet = float(record.get("quiet_until") or 0)
    return now - float(record.get("heartbeat") or 0) > stale_after_s and now > quiet + stale_after_s


def store_status(store: FleetStore, stale_after_s: float, now: float | None = None) -> dict[str, object]:
    """Every loop in the store's registry (a running or waiting one whose heartbeat is older than `stale_after_s`
    marked stale) and every agent's shared limits. Raises StoreUnavailable."""
    now = time.time() if now is None else now
    loops = []
    for record in sorted(store.loops(), key=lambda r: (str(r.get("repository")), str(r.get("host")),
                                                        str(r.get("worktree")))):
        age = now - float(record.get("heartbeat") or 0)
        loops.append({**record, "heartbeat_age_s": round(age, 1), "stale": is_stale(record, now, stale_after_s)})
    shared = [store.limits(agent).snapshot(now) for agent in store.agents()]
    return {"fleet": {"store": store.where, "loops": loops}, "shared_limits": shared}
