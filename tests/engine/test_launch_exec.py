"""A planned command whose program cannot be exec'd (dun/engine/launch.py): dun does not wait for the child's exec
as it starts it (it goes on loading meanwhile); the failure is asked when the check claims it, or when an unclaimed
guess is stopped: not claimed, the child reaped, its pipes closed, so the check starts the command itself and says
why it cannot."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from dun.engine import launch


def entry(tmp_path: Path, program: str) -> launch.Entry:
    return ("suite", [program, "-c", "exit 0"], str(tmp_path), None, None, 60.0, 40, None, [], [])


def started(tmp_path: Path, program: str) -> tuple[launch.Launches, launch.Launched]:
    launched = launch._start(entry(tmp_path, program))
    assert launched is not None
    launches = launch.Launches(str(tmp_path), ["check"])
    launches._started["suite"] = launched
    launches._live.append(launched.pid)
    return launches, launched


def gone(launched: launch.Launched) -> None:
    with pytest.raises(ChildProcessError):
        os.waitpid(launched.pid, os.WNOHANG)  # reaped already
    with pytest.raises(OSError):
        os.fstat(launched.output_fd)


def test_a_command_that_cannot_exec_is_not_claimed_and_leaves_no_child(tmp_path: Path) -> None:
    launches, launched = started(tmp_path, str(tmp_path / "no-such-program"))
    assert launches.claim(entry(tmp_path, str(tmp_path / "no-such-program")), after=False) is None
    gone(launched)
    assert launches._live == []


def test_an_unclaimed_command_that_cannot_exec_is_stopped_as_well(tmp_path: Path) -> None:
    launches, launched = started(tmp_path, str(tmp_path / "no-such-program"))
    launches.stop()
    gone(launched)
    assert launches._live == []


def test_a_command_that_execs_is_claimed_and_runs(tmp_path: Path) -> None:
    launches, _ = started(tmp_path, "sh")
    claimed = launches.claim(entry(tmp_path, "sh"), after=False)
    assert claimed is not None
    assert claimed.finish(60).exit_code == 0
