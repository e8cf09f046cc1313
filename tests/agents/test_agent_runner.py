"""The agent's process is awaited without polling sleeps, and a timeout still fires."""

from __future__ import annotations

import subprocess
import sys

import pytest

from dun.agents.runner import _ExitWaiter


def test_the_exit_waiter_returns_at_the_exit_and_times_out_while_running() -> None:
    proc = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE)
    waiter = _ExitWaiter(proc)
    try:
        with pytest.raises(subprocess.TimeoutExpired):
            waiter.wait(0.05)
        assert proc.returncode is None
        assert proc.stdin is not None
        proc.stdin.close()  # the child exits now
        waiter.wait(30)
        assert proc.returncode == 0
    finally:
        waiter.close()
        proc.kill()
        proc.wait()
