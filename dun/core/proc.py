"""Run a command in its own process group, stream its output in bounded memory, and kill its whole tree (setsid
children included, dun/core/reaper.py) on timeout, at its end, and when dun itself is terminated."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from dun.core.reaper import kill_tree, new_token, registered, tagged_env

KILL_GRACE_S = 2.0
MAX_LINE_BYTES = 8192


@dataclass
class ProcResult:
    exit_code: int | None  # None when the command could not start
    timed_out: bool
    tail: list[str]  # last lines of combined stdout+stderr
    duration_s: float
    start_error: str | None = None


def kill_group(proc: subprocess.Popen[bytes], grace_s: float = KILL_GRACE_S) -> None:
    """SIGTERM the whole process group, then SIGKILL whatever is still alive after `grace_s`."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, sig)
        if sig is signal.SIGTERM:
            try:
                proc.wait(timeout=grace_s)
            except subprocess.TimeoutExpired:
                continue
            # The leader is gone; children that ignored SIGTERM may still hold the group.
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=grace_s)


def run_streaming(
    argv: list[str],
    cwd: Path,
    timeout: float,
    on_line: Callable[[str], None] | None = None,
    tail_lines: int = 40,
    env: dict[str, str] | None = None,
) -> ProcResult:
    """Run `argv`, feeding each output line to `on_line` and keeping only the last `tail_lines`."""
    start = time.monotonic()
    token = new_token()
    with registered(token) as register:  # registered before it can start children: a signal finds them
        try:
            proc = subprocess.Popen(
                argv, cwd=cwd, env=tagged_env(env, token), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT, start_new_session=True,
            )
        except OSError as exc:
            return ProcResult(None, False, [], time.monotonic() - start, start_error=exc.strerror or str(exc))
        register(proc.pid)
        return _follow(proc, token, timeout, on_line, tail_lines, start)


def _follow(proc: subprocess.Popen[bytes], token: str, timeout: float, on_line: Callable[[str], None] | None,
            tail_lines: int, start: float) -> ProcResult:
    tail: deque[str] = deque(maxlen=max(tail_lines, 1))

    def pump() -> None:
        assert proc.stdout is not None
        # readline with a size cap keeps memory bounded even for output without newlines
        for raw in iter(lambda: proc.stdout.readline(MAX_LINE_BYTES), b""):  # type: ignore[union-attr]
            line = raw.decode("utf-8", "replace").rstrip("\r\n")
            tail.append(line)
            if on_line is not None:
                on_line(line)

    reader = threading.Thread(target=pump, daemon=True)
    reader.start()
    timed_out = False
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
    if timed_out:
        kill_group(proc)
    # The leader exited or was killed; background children of the command, in its group or in sessions of their
    # own, must not outlive it either.
    kill_tree(token, proc.pid)
    reader.join(timeout=KILL_GRACE_S)
    # A process that left the group (setsid) may still hold the pipe; the blocked reader then owns the file
    # object, and closing it would block too. The daemon reader ends when that process does.
    if proc.stdout is not None and not reader.is_alive():
        proc.stdout.close()
    return ProcResult(proc.returncode, timed_out, list(tail), time.monotonic() - start)
