"""`dun fleet status`: every worktree's loop, read from its state and lock, and the shared limits."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from contextlib import redirect_stderr, redirect_stdout
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from conftest import write

from dun.cli.main import main
from dun.fleet.limits import SharedLimits
from dun.fleet.worktrees import ensure_worktree

HOLD_LOCK = ("import sys\nfrom pathlib import Path\nfrom dun.store.lock import LoopLock\n"
             "from dun.store.store import Store\n"
             "with LoopLock(Store(Path(sys.argv[1]))):\n    print('locked', flush=True)\n    sys.stdin.readline()\n")


def invoke(args: list[str]) -> tuple[int, str, str]:
    out, err = StringIO(), StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(args)
    return code, out.getvalue(), err.getvalue()


def state(root: Path, **values: object) -> None:
    base = {"run_id": "r1", "status": "stopped", "iteration": 3, "cost_usd_total": 0.5, "stop_reason": None}
    write(root, ".dun/state.json", json.dumps({**base, **values}))


@pytest.fixture
def fleet(repo: Path) -> Iterator[dict[str, Any]]:
    """The main tree (never run), `busy` (a live process holds its lock), `done` (stopped on budget) and `dead`
    (its state says running, but no process holds the lock)."""
    trees = {name: ensure_worktree(repo, name)[0].path for name in ("busy", "done", "dead")}
    state(trees["busy"], status="running")
    state(trees["done"], stop_reason="budget", iteration=7, cost_usd_total=4.25)
    state(trees["dead"], status="running")
    holder = subprocess.Popen([sys.executable, "-c", HOLD_LOCK, str(trees["busy"])], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    assert holder.stdout is not None and holder.stdout.readline() == "locked\n"
    yield {"main": repo, **trees, "pid": holder.pid}
    assert holder.stdin is not None
    holder.stdin.write("\n")
    holder.stdin.flush()
    holder.wait(timeout=30)


def test_json_lists_every_worktree_with_its_loop(fleet: dict[str, Any]) -> None:
    code, out, _ = invoke(["fleet", "status", str(fleet["done"]), "--json"])  # from inside a worktree
    assert code == 0
    data = json.loads(out)
    assert data["repository"] == str(fleet["main"].resolve())
    loops = {loop["name"]: loop for loop in data["loops"]}
    assert list(loops) == ["(main)", "busy", "dead", "done"]  # git lists them by path
    assert loops["(main)"]["status"] == "never run" and loops["(main)"]["branch"] == "main"
    assert loops["busy"]["status"] == "running" and loops["busy"]["pid"] == fleet["pid"]
    assert loops["done"]["status"] == "stopped" and loops["done"]["stop_reason"] == "budget"
    assert loops["done"]["iteration"] == 7 and loops["done"]["branch"] == "dun/done"
    assert loops["dead"]["status"] == "died" and loops["dead"]["pid"] is None


def test_text_shows_loops_and_shared_limits(fleet: dict[str, Any]) -> None:
    limits = SharedLimits("claude")
    assert limits.reserve_call(6) == 0.0
    limits.record_cost(1.5)
    limits.pause_until(limits.clock() + 600, "usage_limit")
    code, out, _ = invoke(["fleet", "status", str(fleet["main"])])
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == f"repository {fleet['main'].resolve()}"
    done = next(line for line in lines if line.startswith("done "))
    assert "dun/done" in done and "$4.2500" in done and done.endswith("stopped: budget")
    assert any(line.startswith("busy ") and f"running (pid {fleet['pid']})" in line for line in lines)
    shared = lines[-1]
    assert shared.startswith("shared by claude loops on this machine: 1 call(s) in the last hour, $1.50 in 24 h")
    assert "(usage_limit)" in shared


def test_outside_git_is_a_usage_error(plain_dir: Path) -> None:
    code, _, err = invoke(["fleet", "status", str(plain_dir)])
    assert code == 2 and "is not a git repository" in err
