"""Run a command in its own process group, stream its output in bounded memory, and kill its whole tree (setsid
children included, dun/core/reaper.py) on timeout, at its end, and when dun itself is terminated."""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from dun.core.pidmark import Mark, mark
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
    begun = time.monotonic()
    try:
        started = Started(argv, cwd, env, tail_lines)
    except OSError as exc:
        return ProcResult(None, False, [], time.monotonic() - begun, start_error=exc.strerror or str(exc))
    return started.finish(timeout, on_line)


class Started:
    """A command started in its own session and process group, its output read into lines from the start:
    `finish` hands them to a reader (those read before it first) and waits; `stop` kills it unread. Raises OSError
    when it cannot start. `adopt` takes one started by other means (dun/engine/launch.py starts a test runner as
    `dun check` starts, before this module loads)."""

    def __init__(self, argv: list[str], cwd: Path | str, env: dict[str, str] | None = None,
                 tail_lines: int = 40) -> None:
        token = new_token()
        registration = registered(token)  # registered before it can start children: a signal finds them
        register = registration.__enter__()
        since = mark()  # its processes are those created since (the reaper reads only theirs)
        try:
            popen = subprocess.Popen(
                argv, cwd=cwd, env=tagged_env(env, token), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT, start_new_session=True,
            )
        except BaseException:
            registration.__exit__(None, None, None)
            raise
        register(popen.pid)
        assert popen.stdout is not None
        self._popen: subprocess.Popen[bytes] | None = popen
        self._setup(popen.pid, popen.stdout, token, time.monotonic(), registration, tail_lines, since)

    @classmethod
    def adopt(cls, pid: int, output_fd: int, token: str, started: float, tail_lines: int = 40,
              since: Mark | None = None) -> Started:
        """The command `pid` (a child of this process, leading its own process group and session, its processes'
        environment tagged with `token`, `reaper.tagged_env`), whose output is read from `output_fd`, started at
        `started` (`time.monotonic`); `since`: the mark taken before it started (dun/core/pidmark.py)."""
        self = cls.__new__(cls)
        self._popen = None
        registration = registered(token)
        registration.__enter__()(pid)
        self._setup(pid, os.fdopen(output_fd, "rb"), token, started, registration, tail_lines, since)
        return self

    def _setup(self, pid: int, stdout: IO[bytes], token: str, started: float,
               registration: contextlib.AbstractContextManager[Callable[[int], None]], tail_lines: int,
               since: Mark | None) -> None:
        self.pid = pid
        self.since = since
        self.stdout = stdout
        self.token = token
        self.start = started
        self.returncode: int | None = None
        self._registration = registration
        self.tail: deque[str] = deque(maxlen=max(tail_lines, 1))
        self._lock = threading.Lock()
        self._held: list[str] = []  # lines read before a reader was given (a few: it is given within moments)
        self._on_line: Callable[[str], None] | None = None
        self._given = False
        self._reader = threading.Thread(target=self._pump, daemon=True)
        self._reader.start()

    def _pump(self) -> None:
        stdout = self.stdout
        # readline with a size cap keeps memory bounded even for output without newlines
        for raw in iter(lambda: stdout.readline(MAX_LINE_BYTES), b""):
            line = raw.decode("utf-8", "replace").rstrip("\r\n")
            with self._lock:
                self.tail.append(line)
                if not self._given:
                    self._held.append(line)
                    continue
                held, self._held = self._held, []
                on_line = self._on_line
            if on_line is not None:  # only this thread calls it while the command runs: lines stay in order
                for earlier in held:
                    on_line(earlier)
                on_line(line)

    def _wait(self, timeout: float | None) -> bool:
        """Whether the command exited (and was reaped) within `timeout` seconds (None: wait for it)."""
        if self.returncode is not None:
            return True
        if timeout is not None and not _exits_within(self.pid, timeout):
            return False
        if self._popen is not None:
            self.returncode = self._popen.wait()
        else:
            self.returncode = os.waitstatus_to_exitcode(os.waitpid(self.pid, 0)[1])
        return True

    def _end_group(self, grace_s: float = KILL_GRACE_S) -> None:
        """SIGTERM the whole process group, then SIGKILL whatever is still alive after `grace_s`."""
        for sig in (signal.SIGTERM, signal.SIGKILL):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.pid, sig)
            if sig is signal.SIGTERM and self._wait(grace_s):
                continue  # the leader is gone; children that ignored SIGTERM may still hold the group
        self._wait(grace_s)

    def finish(self, timeout: float, on_line: Callable[[str], None] | None = None) -> ProcResult:
        """Give the output lines to `on_line` and wait for the command, at most `timeout` seconds from its start;
        then kill whatever of its tree is left."""
        with self._lock:
            self._on_line, self._given = on_line, True
        try:
            timed_out = not self._wait(max(0.0, timeout - (time.monotonic() - self.start)))
            if timed_out:
                self._end_group()
            # The leader exited or was killed; background children of the command, in its group or in sessions of
            # their own, must not outlive it either.
            kill_tree(self.token, self.pid, self.since)
            self._reader.join(timeout=KILL_GRACE_S)
        finally:
            self._registration.__exit__(None, None, None)
        self._close()
        if not self._reader.is_alive():
            with self._lock:
                held, self._held = self._held, []  # the output ended before the reader was given
            if on_line is not None:
                for line in held:
                    on_line(line)
        return ProcResult(self.returncode, timed_out, list(self.tail), time.monotonic() - self.start)

    def stop(self) -> None:
        """Kill the command's whole tree, its output unread (it was started for a check that did not run it)."""
        try:
            kill_tree(self.token, self.pid, self.since)
            self._wait(KILL_GRACE_S)
            self._reader.join(timeout=KILL_GRACE_S)
        finally:
            self._registration.__exit__(None, None, None)
        self._close()

    def _close(self) -> None:
        # A process that left the group (setsid) may still hold the pipe; the blocked reader then owns the file
        # object, and closing it would block too. The daemon reader ends when that process does.
        if not self._reader.is_alive():
            self.stdout.close()


def _exits_within(pid: int, timeout: float) -> bool:
    """Whether child `pid` has exited within `timeout` seconds, known the moment it does (a pidfd, Linux), not at
    the next turn of a polling loop (Popen.wait's sleeps grow to 50 ms); not reaped."""
    try:
        fd = os.pidfd_open(pid)
    except (AttributeError, OSError):
        deadline = time.monotonic() + timeout
        delay = 0.0005
        while True:
            try:
                if os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None:
                    return True
            except ChildProcessError:
                return True
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            time.sleep(min(delay, remaining))
            delay = min(delay * 2, 0.01)
    try:
        return bool(select.select([fd], [], [], timeout)[0])
    finally:
        os.close(fd)
