"""Whole process trees, found by a token in their environment, killed when their command ends or dun is terminated.

A process that moves to a session of its own (setsid, a daemon's double fork) leaves its process group, and its
parent may be gone; what still ties it to the command dun started is its environment. Every command gets a random
token appended to `DUN_PROC_TOKENS` (so the commands of a nested dun stay findable by the outer one), and its tree is
every process whose environment holds that token: proof enough that a process is ours to kill.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Callable, Iterator
from types import FrameType

TOKEN_ENV = "DUN_PROC_TOKENS"
_live: dict[str, int] = {}  # token -> process group of the commands running now
_live_lock = threading.RLock()  # re-entrant: a signal handler may run while this thread holds it
_installed: list[bool] = []


def tagged_env(env: dict[str, str] | None, token: str) -> dict[str, str]:
    """`env` (or ours) with `token` added to DUN_PROC_TOKENS."""
    base = dict(os.environ if env is None else env)
    base[TOKEN_ENV] = f"{base[TOKEN_ENV]}:{token}" if base.get(TOKEN_ENV) else token
    return base


def new_token() -> str:
    return os.urandom(12).hex()


def processes_with(token: str) -> list[int]:
    """Every live process whose environment holds `token` (Linux /proc; empty elsewhere)."""
    needle = token.encode()
    found = []
    for entry in os.scandir("/proc") if os.path.isdir("/proc") else []:
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry.name}/environ", "rb") as fh:
                environ = fh.read(1 << 20)
        except OSError:  # gone, or another user's
            continue
        for var in environ.split(b"\0"):
            if var.startswith(TOKEN_ENV.encode() + b"=") and needle in var:
                found.append(int(entry.name))
                break
    return found


def kill_tree(token: str, pgid: int | None = None) -> None:
    """SIGKILL the process group `pgid` and every process carrying `token`; reap the ones that are our children."""
    if pgid:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, signal.SIGKILL)
    for pid in processes_with(token):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)


def kill_live() -> None:
    """Kill every command still running (dun is being terminated): their trees must not outlive us."""
    with _live_lock:
        live = dict(_live)
    for token, pgid in live.items():
        kill_tree(token, pgid)


def install_termination_handlers() -> None:
    """On SIGTERM, SIGHUP and SIGINT, kill the running commands' trees first, then do what the signal did before
    (SIGINT: KeyboardInterrupt; the others: die of the signal). `dun loop` installs its own while it runs."""
    if _installed:
        return
    _installed.append(True)
    for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        previous = signal.getsignal(sig)

        def handler(signum: int, frame: FrameType | None, previous: object = previous) -> None:
            kill_live()
            if callable(previous):
                previous(signum, frame)
                return
            if previous == signal.SIG_IGN:
                return
            signal.signal(signum, signal.SIG_DFL)
            os.kill(os.getpid(), signum)

        with contextlib.suppress(ValueError, OSError):  # not the main thread, or no such signal here
            signal.signal(sig, handler)




@contextlib.contextmanager
def registered(token: str) -> Iterator[Callable[[int], None]]:
    """While the block runs, the command of `token` (its group given to the callable) is killed on termination."""
    with _live_lock:
        _live[token] = 0

    def register(pgid: int) -> None:
        with _live_lock:
            _live[token] = pgid

    try:
        yield register
    finally:
        with _live_lock:
            _live.pop(token, None)
