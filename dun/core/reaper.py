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

from dun.core.pidmark import Mark, may_be, newer

TOKEN_ENV = "DUN_PROC_TOKENS"


class _Registry:
    """The commands this process is running now (token -> process group; 0 until the group is known) and whether
    the termination handlers are installed."""

    def __init__(self) -> None:
        self.lock = threading.RLock()  # re-entrant: a signal handler may run while this thread holds it
        self.live: dict[str, int] = {}
        self.installed = False


# The one module-level state dun keeps, on purpose: a signal handler receives only (signum, frame), so what it must
# kill (every command this process started, whichever session, check or loop started it) has to be reachable
# without an object. It is the process's own fact, guarded by its lock, and each entry leaves as its command ends.
_REGISTRY = _Registry()


def tagged_env(env: dict[str, str] | None, token: str) -> dict[str, str]:
    """`env` (or ours) with `token` added to DUN_PROC_TOKENS."""
    base = dict(os.environ if env is None else env)
    base[TOKEN_ENV] = f"{base[TOKEN_ENV]}:{token}" if base.get(TOKEN_ENV) else token
    return base


def new_token() -> str:
    return os.urandom(12).hex()


def processes_with(token: str, since: tuple[int, Mark | None] | None = None) -> list[int]:
    """Every live process whose environment holds `token` (Linux /proc; empty elsewhere). `since`: the command's
    process id and the mark taken before it started (dun/core/pidmark.py): only the processes created since are
    read, when that can be told."""
    needle = token.encode()
    found = []
    names = [e.name for e in os.scandir("/proc") if e.name.isdigit()] if os.path.isdir("/proc") else []
    window = newer(*since) if since is not None else None  # after the listing: it names no later id
    for name in names:
        pid = int(name)
        if pid == os.getpid() or not may_be(pid, window):
            continue
        try:
            with open(f"/proc/{name}/environ", "rb") as fh:
                environ = fh.read(1 << 20)
        except OSError:  # gone, or another user's
            continue
        for var in environ.split(b"\0"):
            if var.startswith(TOKEN_ENV.encode() + b"=") and needle in var:
                found.append(pid)
                break
    return found


def kill_tree(token: str, pgid: int | None = None, since: Mark | None = None) -> None:
    """SIGKILL the process group `pgid` and every process carrying `token`; reap the ones that are our children.
    `since`: the mark taken before the command `pgid` leads started (only processes created since are read)."""
    if pgid:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, signal.SIGKILL)
    for pid in processes_with(token, (pgid, since) if pgid and since is not None else None):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)


def kill_live() -> None:
    """Kill every command still running (dun is being terminated): their trees must not outlive us."""
    with _REGISTRY.lock:
        live = dict(_REGISTRY.live)
    for token, pgid in live.items():
        kill_tree(token, pgid)


def install_termination_handlers() -> None:
    """On SIGTERM, SIGHUP and SIGINT, kill the running commands' trees first, then do what the signal did before
    (SIGINT: KeyboardInterrupt; the others: die of the signal). `dun loop` installs its own while it runs."""
    with _REGISTRY.lock:
        if _REGISTRY.installed:
            return
        _REGISTRY.installed = True
    for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        previous = signal.getsignal(sig)
        if previous == signal.SIG_IGN:
            continue  # started ignoring it (nohup, a script's background job): dun and its commands go on

        def handler(signum: int, frame: FrameType | None, previous: object = previous) -> None:
            kill_live()
            if callable(previous):
                previous(signum, frame)
                return
            signal.signal(signum, signal.SIG_DFL)
            os.kill(os.getpid(), signum)

        with contextlib.suppress(ValueError, OSError):  # not the main thread, or no such signal here
            signal.signal(sig, handler)




@contextlib.contextmanager
def registered(token: str) -> Iterator[Callable[[int], None]]:
    """While the block runs, the command of `token` (its group given to the callable) is killed on termination."""
    with _REGISTRY.lock:
        _REGISTRY.live[token] = 0

    def register(pgid: int) -> None:
        with _REGISTRY.lock:
            _REGISTRY.live[token] = pgid

    try:
        yield register
    finally:
        with _REGISTRY.lock:
            _REGISTRY.live.pop(token, None)


def _stat_fields(pid: int) -> list[bytes] | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            stat = fh.read()
    except OSError:
        return None
    return stat[stat.rfind(b")") + 2:].split()  # the command name may hold spaces and parentheses


def process_start_time(pid: int) -> float | None:
    """The start time of `pid` in clock ticks since boot (Linux), to tell a process from a later one that reused
    its id; None where /proc is not available or the process is gone (a zombie is gone)."""
    fields = _stat_fields(pid)
    if not fields or fields[0] == b"Z":
        return None
    try:
        return float(fields[19])
    except (IndexError, ValueError):
        return None


def descendants(pid: int) -> list[int]:
    """Every live process below `pid`, whatever process group or session it moved to."""
    children: dict[int, list[int]] = {}
    for entry in os.scandir("/proc") if os.path.isdir("/proc") else []:
        fields = _stat_fields(int(entry.name)) if entry.name.isdigit() else None
        if fields and len(fields) > 1 and fields[0] != b"Z":
            children.setdefault(int(fields[1]), []).append(int(entry.name))
    found, todo = [], list(children.get(pid, []))
    while todo:
        p = todo.pop()
        found.append(p)
        todo.extend(children.get(p, []))
    return found


def become_subreaper() -> bool:
    """Linux: orphans of our children (processes they started in sessions of their own) re-parent to us, not to
    init, so they can still be found below us and reaped. Asked on every call: a forked child does not inherit it.
    prctl is reached through ctypes' own handle on the process (`pythonapi`, which keeps the function it looks up):
    a `ctypes.CDLL` made per call made a function-pointer class ctypes never frees, about 10-50 bytes per agent
    call."""
    try:
        import ctypes

        return bool(ctypes.pythonapi.prctl(36, 1, 0, 0, 0) == 0)  # PR_SET_CHILD_SUBREAPER
    except (OSError, AttributeError):
        return False


def with_start_times(pids: list[int]) -> list[list[float]]:
    """[pid, start time] of each live process, for a record another process can verify."""
    out = []
    for pid in pids:
        started = process_start_time(pid)
        if started is not None:
            out.append([float(pid), started])
    return out


def kill_recorded(tree: list[list[float]]) -> int:
    """SIGKILL each recorded [pid, start time] whose process is provably the same one (same start time); a reused
    id belongs to someone else and is left alone. Returns how many were killed."""
    killed = 0
    for pid, started in tree:
        if process_start_time(int(pid)) == started:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(int(pid), signal.SIGKILL)
                killed += 1
    return killed


def reap(pids: list[int]) -> None:
    """Collect the exit status of those that are our children now (subreaper), or they stay zombies."""
    for pid in pids:
        with contextlib.suppress(ChildProcessError, OSError):
            os.waitpid(pid, os.WNOHANG)
