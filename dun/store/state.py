"""`.dun/state.json` (atomic, schema-versioned) and the one-loop-per-repo lock."""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import time
import uuid
from pathlib import Path
from typing import Any

from dun.answer.handoff import ensure_runtime_dir, now, read_json
from dun.core.atomic import write_json_atomic
from dun.core.errors import DunError
from dun.loop.circuit import new_circuit

STATE_SCHEMA_VERSION = 1


def state_path(root: Path) -> Path:
    return root / ".dun" / "state.json"


def logs_dir(root: Path) -> Path:
    return root / ".dun" / "logs"


def new_state() -> dict[str, Any]:
    return {"schema_version": STATE_SCHEMA_VERSION, "run_id": uuid.uuid4().hex[:12], "status": "running",
            "stop_reason": None, "iteration": 0, "started_at": now(), "started_epoch": time.time(),
            "updated_at": now(), "ended_at": None, "cost_usd_total": 0.0, "calls": [], "resume_at": None,
            "circuit": new_circuit(), "errors_total": 0, "in_progress": None, "agent_pgid": None,
            "confirmations": 0, "blocked": None, "last_exit_signal": None, "checks_at_start": None}


def load_state(root: Path) -> dict[str, Any] | None:
    state = read_json(state_path(root))
    if state is None:
        return None
    return {**new_state(), **state}  # files from older versions gain the new keys


def save_state(root: Path, state: dict[str, Any]) -> None:
    state["updated_at"] = now()
    ensure_runtime_dir(root)
    write_json_atomic(state_path(root), state)


def archive_run(root: Path, state: dict[str, Any] | None) -> Path | None:
    """`--fresh`: move the previous run's logs, state and report aside, never deleting them."""
    dun = root / ".dun"
    if state is None and not logs_dir(root).exists():
        return None
    run_id = (state or {}).get("run_id") or time.strftime("%Y%m%dT%H%M%S")
    target = dun / "archive" / str(run_id)
    target.mkdir(parents=True, exist_ok=True)
    for name in ("logs", "state.json", "REPORT.md", "handoff.json", "iterate.json"):
        if (dun / name).exists():
            shutil.move(str(dun / name), str(target / name))
    return target


class LoopBusy(DunError):
    """Another loop holds the lock."""


class LoopLock:
    """flock on `.dun/loop.lock` holding our pid. The kernel drops the lock when a process dies, so the lock of a
    killed loop is simply taken over."""

    def __init__(self, root: Path) -> None:
        self.path = ensure_runtime_dir(root) / "loop.lock"
        self.fd: int | None = None

    def __enter__(self) -> LoopLock:
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 64, 0).decode(errors="replace").strip() or "unknown"
            os.close(fd)
            raise LoopBusy(f"another dun loop is running in this repository (pid {holder}); "
                           "`dun stop` asks it to finish") from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        self.fd = fd
        return self

    def __exit__(self, *exc: object) -> None:
        if self.fd is not None:
            with contextlib.suppress(OSError):
                os.ftruncate(self.fd, 0)
            os.close(self.fd)  # closing releases the flock
            self.fd = None


def lock_holder(root: Path) -> int | None:
    """The pid of a running loop, or None when no loop holds the lock."""
    path = root / ".dun" / "loop.lock"
    if not path.exists():
        return None
    fd = os.open(path, os.O_RDONLY)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            text = os.pread(fd, 64, 0).decode(errors="replace").strip()
            return int(text) if text.isdigit() else -1
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)
