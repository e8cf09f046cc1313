"""Helpers the loop tests share: a repository set up for the fake agent, and a step that does one box."""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from conftest import git, write
from fake_agent import FAKE_COMMAND, alive, block

ROOT = Path(__file__).resolve().parent.parent
T = TypeVar("T")


def until(condition: Callable[[], T], what: str, timeout: float = 60.0) -> T:
    """Poll `condition` until it returns something truthy; fail after `timeout` seconds (a bound for a failing test,
    generous because a loop started on a machine at load 10 takes seconds to reach its first call)."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(0.02)


def gone(pid: int, timeout: float = 20.0) -> bool:
    with contextlib.suppress(AssertionError):
        until(lambda: not alive(pid), f"pid {pid} to end", timeout)
    return not alive(pid)


def make_repo(repo: Path, boxes: tuple[str, ...] = ("alpha", "beta", "gamma"), ticked: tuple[str, ...] = (),
              loop: dict[str, Any] | None = None, circuit: dict[str, Any] | None = None,
              agent: dict[str, Any] | None = None, fleet: dict[str, Any] | None = None) -> Path:
    """`.dun/config.yaml` driving the fake agent, the runtime .gitignore and a MISSION.md, all committed."""
    config: dict[str, Any] = {
        "plugins": {"disabled": ["python"]},
        "agent": {"name": "command", "command": FAKE_COMMAND, "prompt_via": "stdin", **(agent or {})},
        # the fake agent keeps its scenario under /tmp, which a sandbox hides: the sandbox tests opt in
        "loop": {"cooldown_s": 0, "kill_grace_s": 0.5, "iteration_timeout_s": 20, "sandbox": "off", **(loop or {})},
    }
    if circuit:
        config["circuit"] = circuit
    if fleet:
        config["fleet"] = fleet
    write(repo, ".dun/config.yaml", json.dumps(config, indent=1) + "\n")  # JSON is YAML
    write(repo, ".dun/.gitignore", (ROOT / "templates" / "dun.gitignore").read_text(encoding="utf-8"))
    write(repo, "MISSION.md", "# Mission\n\n" + "".join(f"- [{'x' if b in ticked else ' '}] {b}\n" for b in boxes))
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "mission")
    return repo


def work(box: str, cost: float = 0.01, exit: bool = False, **extra: Any) -> dict[str, Any]:
    """A step that does one box for real: ticks it and commits."""
    return {"actions": [{"tick": "MISSION.md", "box": box}, {"commit": f"Do {box}"}],
            "status": block(task=box, exit=exit), "cost_usd": cost, **extra}


def idle(**extra: Any) -> dict[str, Any]:
    """A step that changes nothing."""
    return {"status": block(task="looked around", status="IN_PROGRESS", files=0), "cost_usd": 0.01, **extra}
