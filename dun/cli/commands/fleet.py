"""`dun fleet status`: every loop of the repository, one per worktree; every loop of the fleet store, on this
machine or (with Redis) on all of them, stale heartbeats marked; and the limits they share."""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any

from dun.config.loader import defaults_only, dun_config
from dun.core.errors import UsageError
from dun.core.kinds import ExitCode
from dun.fleet.connect import open_store
from dun.fleet.status import fleet_status, store_status
from dun.fleet.store import STORE_ENV, StoreUnavailable
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


def _age(seconds: float) -> str:
    return f"{seconds:.0f}s" if seconds < 120 else f"{seconds / 60:.0f}m" if seconds < 7200 else \
        f"{seconds / 3600:.0f}h"


def _fleet_row(loop: dict[str, Any]) -> str:
    state = "STALE" if loop["stale"] else str(loop.get("status"))
    if loop.get("status") == "waiting" and loop.get("wait_reason"):
        state += f" ({loop['wait_reason']} until {_when(loop.get('resume_at'))})"
    elif loop.get("stop_reason") and loop.get("status") not in ("running", "waiting"):
        state += f": {loop['stop_reason']}"
    if loop["stale"]:
        state += f", last seen {loop.get('status')}"
    cost = f"${loop['cost_usd']:.4f}" if isinstance(loop.get("cost_usd"), int | float) else "-"
    return (f"{str(loop.get('host'))[:20]:20}  {str(loop.get('repository'))[:24]:24}  "
            f"{os.path.basename(str(loop.get('worktree')))[:16]:16}  {loop.get('iteration', '-')!s:>5}  {cost:>9}  "
            f"{_age(loop['heartbeat_age_s']):>5}  {state}")


def run_fleet_status(path: str | None, as_json: bool, store_url: str | None = None) -> int:
    """Exit 0; 1 when the fleet store cannot be reached (what is known locally is still shown)."""
    repo = find_repo(path)
    info: dict[str, Any] = {}
    if repo.is_git:
        main = main_root(repo.root)
        config = dun_config(main)
        info = fleet_status(main, config.settings.fleet.worktrees_dir)
    elif store_url or os.environ.get(STORE_ENV):
        config = defaults_only()  # an operator's machine: only the fleet store is asked
    else:
        raise UsageError(f"{repo.root} is not a git repository (--store URL shows a fleet from anywhere)")
    fleet = config.settings.fleet
    store = open_store(fleet.store, explicit=store_url)
    code = ExitCode.OK
    try:
        info.update(store_status(store, fleet.stale_after_s))
    except StoreUnavailable as exc:
        info.update({"fleet": {"store": store.where, "loops": [], "error": str(exc)}, "shared_limits": []})
        code = ExitCode.WORK_REMAINS
    finally:
        store.close()
    if as_json:
        sys.stdout.write(json.dumps(info, indent=2) + "\n")
        return code
    lines = []
    if "loops" in info:
        lines += [f"repository {info['repository']}",
                  f"{'WORKTREE':24}  {'BRANCH':24}  {'ITER':>5}  {'COST':>9}  LOOP",
                  *(_row(loop) for loop in info["loops"]), ""]
    where = info["fleet"]["store"]
    if info["fleet"].get("error"):
        lines.append(f"fleet store: {info['fleet']['error']}")
    else:
        loops = info["fleet"]["loops"]
        stale = sum(1 for loop in loops if loop["stale"])
        lines += [f"fleet store {where}: {len(loops)} loop(s)" + (f", {stale} stale" if stale else ""),
                  f"{'HOST':20}  {'REPOSITORY':24}  {'WORKTREE':16}  {'ITER':>5}  {'COST':>9}  {'SEEN':>5}  STATE",
                  *(_fleet_row(loop) for loop in loops)]
    scope = "on this machine" if where == "local" else f"in {where}"
    for agent in info["shared_limits"]:
        pause = (f", paused until {_when(agent['paused_until'])} ({agent['pause_reason']})"
                 if agent["paused_until"] else "")
        lines.append(f"shared by {agent['agent']} loops {scope}: {agent['calls_last_hour']} call(s) in the "
                     f"last hour, ${agent['spent_usd_24h']:.2f} in 24 h{pause}")
    sys.stdout.write("\n".join(lines) + "\n")
    return code
