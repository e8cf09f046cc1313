"""Run one agent call: its own process group, stdin closed (or the prompt file), CLAUDECODE removed, TERM=dumb,
stdout and stderr copied to two files in bounded space, and the whole tree killed on timeout, stop or a full disk.

The tree is known three ways, so that a later `dun loop` can kill it too after this one was killed -9: the process
group, a random token in every descendant's environment (dun/core/reaper.py), and the [pid, start time] of each
descendant, reported to `on_tree` whenever it changes (the engine keeps them in the state).
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from dun.agents.base import Invocation
from dun.core.errors import is_disk_full
from dun.core.proc import kill_group
from dun.core.reaper import (
    become_subreaper,
    descendants,
    kill_recorded,
    kill_tree,
    new_token,
    process_start_time,
    processes_with,
    reap,
    tagged_env,
    with_start_times,
)
from dun.core.redact import WITHHELD_ENV
from dun.core.tailfile import TailFile

TAIL_BYTES = 4096
POLL_S = 0.5

__all__ = ["AgentRun", "output_tail", "process_start_time", "run_agent", "stop_recorded_agent"]


@dataclass
class AgentRun:
    exit_code: int | None
    timed_out: bool
    duration_s: float
    start_error: str | None = None
    interrupted: bool = False
    disk_full: OSError | None = None  # writing the output failed for lack of space: the agent was stopped
    write_error: OSError | None = None  # writing the output failed otherwise (the agent was stopped too)
    dropped_bytes: int = 0  # output beyond loop.max_output_mb, cut from the front


def agent_env(extra: dict[str, str]) -> dict[str, str]:
    # a nested Claude would act as a subagent; the fleet store's address and credentials are dun's, not the agent's
    env = {k: v for k, v in os.environ.items() if k != "CLAUDECODE" and k not in WITHHELD_ENV}
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


def run_agent(inv: Invocation, cwd: Path, out_path: Path, err_path: Path, timeout: float, grace: float,
              on_start: Callable[[int, str], None] | None = None,
              should_stop: Callable[[], bool] | None = None, max_output: int = 50 << 20,
              on_tree: Callable[[list[list[float]]], None] | None = None, token: str | None = None) -> AgentRun:
    """Run the agent to completion, timeout, a full disk, or until `should_stop()` says so (checked every 0.5 s).
    Its stdout (the answer) and stderr (warnings, errors) go to two files of at most `max_output` bytes each: a
    warning must never break the answer's shape. `token` is put in the tree's environment (recorded by the caller
    before the start, so that no kill -9 can fall between the start and the record)."""
    out_path.parent.mkdir(parents=True, exist_ok=True)
    subreaper = become_subreaper()
    before = set(descendants(os.getpid())) if subreaper else set()
    token = token or new_token()
    start = time.monotonic()
    sinks = [TailFile(out_path, max_output), TailFile(err_path, max_output)]
    with contextlib.ExitStack() as stack:
        for sink in sinks:
            stack.callback(sink.close)
        stdin = stack.enter_context(inv.stdin_file.open("rb")) if inv.stdin_file else subprocess.DEVNULL
        try:
            proc = subprocess.Popen(inv.argv, cwd=cwd, env=tagged_env(agent_env(inv.env), token), stdin=stdin,
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
        except OSError as exc:
            return AgentRun(None, False, 0.0, start_error=f"{inv.argv[0]}: {exc.strerror or exc}")
        pumps = [threading.Thread(target=sink.pump, args=(_own_fd(pipe),), daemon=True)
                 for sink, pipe in zip(sinks, (proc.stdout, proc.stderr), strict=True)]
        for pump in pumps:
            pump.start()
        if on_start is not None:
            on_start(proc.pid, token)
        deadline = start + timeout
        timed_out = interrupted = False
        known: list[int] = []
        waiter = _ExitWaiter(proc)
        stack.callback(waiter.close)
        while True:
            try:
                waiter.wait(min(POLL_S, max(0.0, deadline - time.monotonic())))
                break
            except subprocess.TimeoutExpired:
                tree = _tree(proc.pid, before, subreaper)
                if on_tree is not None and sorted(tree) != known:
                    known = sorted(tree)
                    on_tree(with_start_times(known))
                if time.monotonic() >= deadline:
                    timed_out = True
                elif (should_stop is not None and should_stop()) or any(s.error for s in sinks):
                    interrupted = True
                else:
                    continue
                kill_group(proc, grace)
                break
        # whatever the agent left running (servers, watchers), in its group, in sessions of its own (re-parented to
        # us, the subreaper) or anywhere its token went, goes with it
        leftovers = _tree(proc.pid, before, subreaper)
        kill_tree(token, proc.pid)
        kill_recorded(with_start_times(leftovers))
        reap(leftovers)
        for pump in pumps:
            pump.join(timeout=max(grace, 1.0))  # a pipe held by a process we could not kill is left to its pump
    error = next((s.error for s in sinks if s.error is not None), None)
    full = error if error is not None and is_disk_full(error) else None
    return AgentRun(proc.returncode, timed_out, time.monotonic() - start, interrupted=interrupted and not full,
                    disk_full=full, write_error=error if full is None else None,
                    dropped_bytes=sum(s.dropped for s in sinks))


class _ExitWaiter:
    """Waits for the agent's exit and wakes the moment it exits: `Popen.wait(timeout)` polls with sleeps of up to
    50 ms, a pidfd (Linux 5.3+) turns readable at the exit itself. Elsewhere, the polling wait."""

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        self.proc = proc
        self.poller: select.poll | None = None
        try:
            self.fd = os.pidfd_open(proc.pid)
        except (AttributeError, OSError):
            self.fd = -1
            return
        self.poller = select.poll()
        self.poller.register(self.fd, select.POLLIN)

    def wait(self, timeout: float) -> None:
        """Return once the agent exited (and is reaped); TimeoutExpired after `timeout` seconds otherwise."""
        if self.poller is None:
            self.proc.wait(timeout=timeout)
            return
        if not self.poller.poll(timeout * 1000) and self.proc.poll() is None:
            raise subprocess.TimeoutExpired(self.proc.args, timeout)
        self.proc.wait()

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


def _own_fd(pipe: IO[bytes] | None) -> int:
    """A descriptor of the pipe that the pump owns (and closes); the file object is closed now."""
    assert pipe is not None
    fd = os.dup(pipe.fileno())
    pipe.close()
    return fd


def _tree(pid: int, before: set[int], subreaper: bool) -> list[int]:
    """The agent's descendants: below it, or below us when they re-parented to us (the subreaper)."""
    below = descendants(os.getpid()) if subreaper else [pid, *descendants(pid)]
    return [p for p in below if p not in before]


def stop_recorded_agent(pgid: int | None, started: float | None, tree: list[list[float]] | None = None,
                        token: str | None = None) -> bool:
    """Kill what a killed loop left running, but only processes provably its agent's: the group when its leader
    has the recorded start time, each recorded [pid, start time] that still matches, and every process carrying the
    agent's token. A reused id belongs to someone else and is left alone."""
    killed = False
    if pgid and started is not None and process_start_time(pgid) == started:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, signal.SIGKILL)
            killed = True
    killed = kill_recorded(tree or []) > 0 or killed
    if token:
        carriers = processes_with(token)
        kill_tree(token)
        killed = killed or bool(carriers)
    return killed
