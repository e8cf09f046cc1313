"""Run one agent call: its own process group, stdin closed (or the prompt file), CLAUDECODE removed, TERM=dumb,
output streamed straight to a file, and the whole group killed on timeout."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from dun.agents.base import Invocation
from dun.core.proc import kill_group

TAIL_BYTES = 4096


@dataclass
class AgentRun:
    exit_code: int | None
    timed_out: bool
    duration_s: float
    start_error: str | None = None
    interrupted: bool = False


def agent_env(extra: dict[str, str]) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "CLAUDECODE"}  # a nested Claude would act as a subagent
    env["TERM"] = "dumb"
    env.update(extra)
    return env


def output_tail(path: Path, size: int = TAIL_BYTES) -> str:
    try:
        with path.open("rb") as fh:
            fh.seek(max(0, path.stat().st_size - size))
            return fh.read().decode("utf-8", "replace")
    except OSError:
        return ""


def become_subreaper() -> bool:
    """Linux: orphans of the agent (tools it started in sessions of their own) re-parent to dun, not to init,
    so dun can still find and kill them."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return bool(libc.prctl(36, 1, 0, 0, 0) == 0)  # PR_SET_CHILD_SUBREAPER
    except (OSError, AttributeError):
        return False


def _parents() -> dict[int, int]:
    out: dict[int, int] = {}
    for entry in os.scandir("/proc") if os.path.isdir("/proc") else []:
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as fh:
                stat = fh.read()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2:].split()  # the command name may hold spaces and parentheses
        out[int(entry.name)] = int(fields[1])
    return out


def descendants(pid: int) -> list[int]:
    """Every live process below `pid`, whatever process group or session it moved to."""
    parents = _parents()
    children: dict[int, list[int]] = {}
    for child, parent in parents.items():
        children.setdefault(parent, []).append(child)
    found, todo = [], list(children.get(pid, []))
    while todo:
        p = todo.pop()
        found.append(p)
        todo.extend(children.get(p, []))
    return found


def kill_tree(pids: list[int]) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(os.getpgid(pid), signal.SIGKILL)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
    for pid in pids:  # they may be our children now (subreaper): reap, or they stay as zombies
        with contextlib.suppress(ChildProcessError, OSError):
            os.waitpid(pid, os.WNOHANG)


def run_agent(inv: Invocation, cwd: Path, out_path: Path, err_path: Path, timeout: float, grace: float,
              on_start: Callable[[int], None] | None = None,
              should_stop: Callable[[], bool] | None = None) -> AgentRun:
    """Run the agent to completion, timeout, or until `should_stop()` says so (checked every 0.5 s). Its stdout
    (the answer) and stderr (warnings, errors) go to two files: a warning must never break the answer's shape."""
    out_path.parent.mkdir(parents=True, exist_ok=True)
    subreaper = become_subreaper()
    before = set(descendants(os.getpid())) if subreaper else set()
    start = time.monotonic()
    with out_path.open("wb") as out, err_path.open("wb") as err, contextlib.ExitStack() as stack:
        stdin = stack.enter_context(inv.stdin_file.open("rb")) if inv.stdin_file else subprocess.DEVNULL
        try:
            proc = subprocess.Popen(inv.argv, cwd=cwd, env=agent_env(inv.env), stdin=stdin, stdout=out,
                                    stderr=err, start_new_session=True)
        except OSError as exc:
            return AgentRun(None, False, 0.0, start_error=f"{inv.argv[0]}: {exc.strerror or exc}")
        if on_start is not None:
            on_start(proc.pid)
        deadline = start + timeout
        timed_out = interrupted = False
        while True:
            try:
                proc.wait(timeout=min(0.5, max(0.0, deadline - time.monotonic())))
                break
            except subprocess.TimeoutExpired:
                if time.monotonic() >= deadline:
                    timed_out = True
                elif should_stop is not None and should_stop():
                    interrupted = True
                else:
                    continue
                tree = descendants(proc.pid)  # before the kill: afterwards the orphans are harder to find
                kill_group(proc, grace)
                kill_tree(tree)
                break
        # whatever the agent left running in its group (servers, watchers) goes with it, and so do processes it
        # moved to sessions of their own, which re-parented to us (the subreaper)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        if subreaper:
            kill_tree([p for p in descendants(os.getpid()) if p not in before])
    return AgentRun(proc.returncode, timed_out, time.monotonic() - start, interrupted=interrupted)


def process_start_time(pid: int) -> float | None:
    """The start time of `pid` in clock ticks since boot (Linux), to tell a process from a later one that reused
    its id; None where /proc is not available."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            stat = fh.read()
    except OSError:
        return None
    fields = stat[stat.rfind(b")") + 2:].split()
    try:
        return float(fields[19])
    except (IndexError, ValueError):
        return None


def stop_recorded_agent(pgid: int | None, started: float | None) -> bool:
    """Kill the agent a killed loop left running, but only when the recorded group is provably still that agent:
    its leader alive with the recorded start time. A reused id belongs to someone else and is left alone."""
    if not pgid or not group_alive(pgid):
        return False
    now_started = process_start_time(pgid)
    if started is None or now_started is None or now_started != started:
        return False
    with contextlib.suppress(ProcessLookupError, PermissionError):
        tree = descendants(pgid)
        os.killpg(pgid, signal.SIGKILL)
        kill_tree(tree)
    return True


def group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
