"""What the robustness tests share: running dun as a user would (a subprocess, real git repositories), polling for
an outcome with a deadline, and telling live processes from dead ones."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from fake_agent import alive
from loop_support import gone

DUN = [sys.executable, "-m", "dun"]


def dead(pid: int, timeout: float = 5.0) -> bool:
    """Whether `pid` ends within `timeout` (a zombie is dead)."""
    return gone(pid, timeout)


def dun(repo: Path, *args: str, timeout: float = 60.0, env: dict[str, str] | None = None
        ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*DUN, *args], cwd=repo, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=timeout, env=env)


def start(repo: Path, out: Path, *args: str) -> subprocess.Popen[bytes]:
    """`dun ARGS` in the background, stdout and stderr in `out`.stdout/.stderr."""
    with out.with_suffix(".stdout").open("ab") as so, out.with_suffix(".stderr").open("ab") as se:
        return subprocess.Popen([*DUN, *args], cwd=repo, stdin=subprocess.DEVNULL, stdout=so, stderr=se)


def state(repo: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((repo / ".dun" / "state.json").read_text(encoding="utf-8"))
    return data


def logs(repo: Path) -> list[int]:
    return sorted(int(p.stem.split("-")[1]) for p in (repo / ".dun" / "logs").glob("iteration-*.json"))


def log(repo: Path, n: int) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((repo / ".dun" / "logs" / f"iteration-{n}.json").read_text(encoding="utf-8"))
    return data


def pids_in(path: Path) -> list[int]:
    """The pids a scenario's commands appended to `path`, one per line."""
    try:
        return [int(line) for line in path.read_text().split() if line.strip().isdigit()]
    except FileNotFoundError:
        return []


def kill_all(pids: list[int]) -> None:
    """Teardown: whatever a failing test left running."""
    for pid in pids:
        if alive(pid):
            with contextlib.suppress(OSError):
                os.kill(pid, 9)


def session_child(pid_file: Path, seconds: int = 120) -> dict[str, Any]:
    """A scenario action starting a process in a session of its own that outlives the agent (its pid appended to
    `pid_file`)."""
    return {"run": f"setsid sh -c 'echo $$ >> {pid_file}; exec sleep {seconds}' </dev/null >/dev/null 2>&1 &"}
