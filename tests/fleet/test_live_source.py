"""`dun watch`'s local source: the loops of this machine from the registry and the work trees, each loop's status
from its lock and state, and the registry keeping only loops whose `.dun/` still exists."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from conftest import git
from loop_support import make_repo, until

from dun.fleet.identity import host
from dun.fleet.limits import LocalStore
from dun.fleet.live import LocalLoops, label_for, snapshot
from dun.store.lock import LoopLock
from dun.store.records import LIVE_SCHEMA_VERSION, LiveRecord
from dun.store.state import LoopState
from dun.store.store import Store


def ran(root: Path, status: str = "running", updated: float | None = None, iteration: int = 2) -> Store:
    """A loop's files as a run leaves them (the state and the live record), without running one."""
    store = Store(root)
    state = LoopState(status=status, iteration=iteration, cost_usd_total=0.75,
                      stop_reason=None if status == "running" else "complete")
    store.write_state(state)
    record: LiveRecord = {
        "schema_version": LIVE_SCHEMA_VERSION, "run_id": state.run_id, "pid": os.getpid(), "agent": "codex",
        "pid_started": None, "driver": "loop",
        "phase": "decided", "iteration": iteration, "max_iterations": 10, "in_progress": None, "call_started": None,
        "out_file": None, "boxes_done": 1, "boxes_total": 3, "cost_usd": 0.75, "budget_usd": 5.0,
        "decisions": [{"iteration": 2, "action": "continue", "reason": "work_remains", "at": 1.0}],
        "wait_until": None, "wait_reason": None, "stop_reason": state.stop_reason,
        "started_epoch": state.started_epoch, "updated": time.time() if updated is None else updated}
    store.write_live(record)
    return store


def test_a_loop_holding_its_lock_is_running_one_that_died_says_so(tmp_path: Path) -> None:
    store = ran(tmp_path / "a")
    with LoopLock(store):
        snap = snapshot(store.root)
        assert snap is not None
        assert (snap.status, snap.pid, snap.phase) == ("running", os.getpid(), "decided")
        assert (snap.iteration, snap.max_iterations, snap.boxes, snap.cost_usd, snap.budget_usd) == (2, 10, (1, 3),
                                                                                                      0.75, 5.0)
        assert [d["reason"] for d in snap.decisions] == ["work_remains"]
    died = snapshot(store.root)
    assert died is not None and (died.status, died.pid, died.phase) == ("not running", None, None)
    assert snapshot(tmp_path / "never") is None


def test_the_machines_loops_are_found_from_the_fleet_registry(tmp_path: Path) -> None:
    """Every loop writes its record into the fleet store's registry: the watch shows this host's, wherever it was
    started, except one stopped long ago, one whose repository is gone and another host's."""
    fresh = ran(tmp_path / "fresh", status="complete")
    old = ran(tmp_path / "old", status="complete", updated=time.time() - 7200)
    gone = ran(tmp_path / "gone")
    elsewhere = ran(tmp_path / "elsewhere")
    registry = LocalStore()
    for store in (fresh, old, gone, elsewhere):
        registry.beat({"loop_id": store.root.name, "host": "pod-7" if store is elsewhere else host(),
                       "worktree": str(store.root), "heartbeat": time.time()})
    shutil.rmtree(gone.root)
    loops = LocalLoops(None, registry)()
    assert [snap.label for snap in loops] == ["fresh"]


def test_every_work_tree_of_the_repository_is_shown_however_old(repo: Path, tmp_path: Path) -> None:
    wt = repo / ".dun" / "worktrees" / "w1"
    git(repo, "worktree", "add", "-q", "-b", "dun/w1", str(wt))
    ran(repo, status="complete", updated=time.time() - 7200)
    ran(wt)
    loops = {snap.label: snap for snap in LocalLoops(wt, LocalStore())()}
    assert set(loops) == {"repo", "repo/w1"}
    assert loops["repo"].status == "complete" and loops["repo/w1"].status == "not running"
    assert label_for(Path("/srv/app/.dun/worktrees/feature-a")) == "app/feature-a"


def test_a_loop_the_shell_driver_runs_is_running_while_its_script_lives(repo: Path, tmp_path: Path) -> None:
    """No process holds the lock while scripts/dun-loop.sh's agent works: the script itself is the loop."""
    make_repo(repo, boxes=("alpha",))
    gate = tmp_path / "gate"
    step = f"{sys.executable} -m dun respond --decide --before"
    script = subprocess.Popen(["sh", "-c", f"{step} > {tmp_path / 'said'}; while [ ! -e {gate} ]; do sleep 0.05; done"],
                              cwd=repo, stdin=subprocess.DEVNULL)
    try:
        until(lambda: (tmp_path / "said").is_file() and (tmp_path / "said").read_text().strip() == "go 1", "go 1")
        snap = snapshot(repo)
        assert snap is not None and (snap.status, snap.pid, snap.in_progress) == ("running", script.pid, 1)
        status = subprocess.run([sys.executable, "-m", "dun", "status"], cwd=repo, capture_output=True, text=True)
        assert f"running (pid {script.pid})" in status.stdout, status.stdout
        logs = subprocess.run([sys.executable, "-m", "dun", "logs"], cwd=repo, capture_output=True, text=True)
        assert "running: the agent has been working" in logs.stdout, logs.stdout
    finally:
        gate.touch()
        script.wait(timeout=10)
    snap = snapshot(repo)
    assert snap is not None and (snap.status, snap.pid) == ("not running", None)


def test_a_live_record_naming_a_file_outside_the_logs_shows_no_output(tmp_path: Path) -> None:
    """The record is a display, but an agent that could write it must not make a watcher print another file."""
    store = ran(tmp_path / "a")
    secret = tmp_path / "secret.txt"
    secret.write_text("TOKEN=abc\n", encoding="utf-8")
    record = store.read_live()
    assert record is not None
    store.write_live({**record, "out_file": "../../../secret.txt"})
    snap = snapshot(store.root)
    assert snap is not None and snap.output == ()
    assert store.read_live() is not None and store.read_live()["out_file"] is None  # type: ignore[index]
