"""`dun fleet status`: every loop of the repository, one per worktree, and the limits they share."""

from __future__ import annotations

import json
import sys
import time
from typing import Any

from dun.config.loader import load_config
from dun.core.errors import UsageError
from dun.core.kinds import ExitCode
from dun.fleet.status import fleet_status
from dun.fleet.worktrees import main_root
from dun.store.layout import find_repo


def _when(epoch: float | None) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(epoch)) if epoch else "-"


def _row(loop: dict[str, Any]) -> str:
    status = loop["status"] + (f" (pid {loop['pid']})" if loop["pid"] else "")
    if loop.get("stop_reason") and loop["status"] != "running":
        status += f": {loop['stop_reason']}"
    if loop.get("resume_at") and loop["resume_at"] > time.time():
        status += f", waiting until {_when(loop['resume_at'])}"
    cost = f"${loop['cost_usd_total']:.4f}" if loop.get("cost_usd_total") is not None else "-"
    iteration = loop["iteration"] if loop.get("iteration") is not None else "-"
    return f"{loop['name'][:24]:24}  {(loop['branch'] or '(detached)')[:24]:24}  {iteration!s:>5}  {cost:>9}  {status}"


def run_fleet_status(path: str | None, as_json: bool) -> int:
    repo = find_repo(path)
    if not repo.is_git:
        raise UsageError(f"{repo.root} is not a git repository")
    main = main_root(repo.root)
    info = fleet_status(main, load_config(main).settings.fleet.worktrees_dir)
    if as_json:
        sys.stdout.write(json.dumps(info, indent=2) + "\n")
        return ExitCode.OK
    lines = [f"repository {info['repository']}",
             f"{'WORKTREE':24}  {'BRANCH':24}  {'ITER':>5}  {'COST':>9}  LOOP",
             *(_row(loop) for loop in info["loops"])]
    for agent in info["shared_limits"]:
        pause = (f", paused until {_when(agent['paused_until'])} ({agent['pause_reason']})"
                 if agent["paused_until"] else "")
        lines.append(f"shared by {agent['agent']} loops on this machine: {agent['calls_last_hour']} call(s) in the "
                     f"last hour, ${agent['spent_usd_24h']:.2f} in 24 h{pause}")
    sys.stdout.write("\n".join(lines) + "\n")
    return ExitCode.OK
