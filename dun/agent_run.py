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
from dun.proc import kill_group

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


def run_agent(inv: Invocation, cwd: Path, out_path: Path, timeout: float, grace: float,
              on_start: Callable[[int], None] | None = None,
              should_stop: Callable[[], bool] | None = None) -> AgentRun:
    """Run the agent to completion, timeout, or until `should_stop()` says so (checked every 0.5 s)."""
    out_path.parent.mkdir(parents=True, exist_ok=True)
    start = time.monotonic()
    with out_path.open("wb") as out, contextlib.ExitStack() as stack:
        stdin = stack.enter_context(inv.stdin_file.open("rb")) if inv.stdin_file else subprocess.DEVNULL
        try:
            proc = subprocess.Popen(inv.argv, cwd=cwd, env=agent_env(inv.env), stdin=stdin, stdout=out,
                                    stderr=subprocess.STDOUT, start_new_session=True)
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
                kill_group(proc, grace)
                break
        # whatever the agent left running in its group (servers, watchers) goes with it
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
    return AgentRun(proc.returncode, timed_out, time.monotonic() - start, interrupted=interrupted)


def group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
