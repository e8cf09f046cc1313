"""The one-loop-per-repository lock: flock on `.dun/loop.lock`, holding the loop's pid."""

from __future__ import annotations

import contextlib
import fcntl
import os

from dun.core.errors import DunError
from dun.store.store import Store


class LoopBusy(DunError):
    """Another loop holds the lock."""


class LoopLock:
    """flock on `.dun/loop.lock` holding our pid. The kernel drops the lock when a process dies, so the lock of a
    killed loop is simply taken over."""

    def __init__(self, store: Store) -> None:
        store.ensure()
        self.path = store.lock_path
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
        with contextlib.suppress(OSError):  # the pid is for display; on a full disk the lock still holds
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


def lock_holder(store: Store) -> int | None:
    """The pid of a running loop, or None when no loop holds the lock."""
    path = store.lock_path
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
