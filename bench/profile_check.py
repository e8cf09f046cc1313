"""profile_check: where `dun check`'s time goes, phase by phase, on the large repository of check_large_repo.py.

Each sample is a fresh interpreter that goes through the steps `dun check` takes, one after the other (no
overlap, so the phases add up), timing each with perf_counter; the checks run one at a time. Three modes:
cold (DUN_NO_CACHE=1: no cache of any kind), fresh (caches warm, every check runs), no change (results reused).
The median of --runs samples is printed per phase. Not a benchmark with a target: it says what to work on.
Run: .venv/bin/python bench/profile_check.py [--runs N]
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import ensure_bytecode, parser
from check_large_repo import ensure_repo

PHASES = r"""
import json, os, sys, time
marks = []
t0 = time.perf_counter()
def mark(name):
    global t0
    now = time.perf_counter(); marks.append((name, now - t0)); t0 = now
import dun.cli.flags; mark("import the option table (dun check runs without click)")
from dun.cli.commands.check import formatter_for; mark("import the engine (session, config, pluggy)")
from dun.store.layout import find_repo
repo = find_repo(None); mark("find the repository (git rev-parse)")
from dun.engine.manager import make_manager, merged_mapping
pm = make_manager(agents=False); mark("plugin manager: built-in plugins, entry points")
from dun.engine.configcache import cached_config
config = cached_config(repo.root, merged_mapping(pm, "dun_config_fields", "config section")); mark("config")
from dun.engine.session import Session
session = Session(repo=repo, pm=pm, config=config)
catalog = session.catalog(); mark("catalog: manifests")
ctx = session.context()
reuse = sys.argv[1] == "no-change"
cache = session._result_cache(ctx) if reuse else None; mark("git status and the tree's fingerprint")
from dun.engine.runner import run_one, trigger_miss
if not reuse:
    from dun.engine.checkapi import listing
    listing(ctx); mark("git ls-files and status, the listing decoded")
results = []
for manifest in catalog.manifests:
    for check in manifest.checks:
        hit = cache.get(check, catalog.types.get(check.type), manifest.triggers) if cache else None
        if hit is None:
            miss = trigger_miss(manifest.triggers, ctx)
            mark(f"trigger of {manifest.id}")
            if not miss:
                results.append(run_one(catalog, check, ctx)); mark(f"check {check.id}")
        else:
            results.append(hit)
if reuse:
    mark("reused results")
from dun.engine.model import Report
from dun.output.base import FormatOptions
text = formatter_for(session, "json")(Report(root=repo.root, results=results), FormatOptions()); mark("render json")
print(json.dumps(marks))
"""


def sample(root: Path, mode: str) -> list[tuple[str, float]]:
    env = {**os.environ, **({"DUN_NO_CACHE": "1"} if mode == "cold" else {})}
    proc = subprocess.run([sys.executable, "-c", PHASES, mode], cwd=root, env=env, capture_output=True, text=True)
    if proc.returncode:  # dun's API moved under this script: say where
        sys.exit(f"profile_check: the {mode} sample failed:\n{proc.stderr[-2000:]}")
    return [(name, seconds) for name, seconds in json.loads(proc.stdout.splitlines()[-1])]


def main() -> int:
    args = parser(__doc__.splitlines()[0]).parse_args()
    ensure_bytecode()
    root = ensure_repo(False)
    subprocess.run([sys.executable, "-m", "dun", "check"], cwd=root, capture_output=True)  # warm the caches
    for mode in ("cold", "fresh", "no-change"):
        runs = [sample(root, mode) for _ in range(args.runs)]
        names = [name for name, _ in runs[0]]
        print(f"== {mode}: median of {args.runs} samples, ms")
        total = 0.0
        for i, name in enumerate(names):
            ms = statistics.median(run[i][1] for run in runs if len(run) > i) * 1000
            total += ms
            print(f"  {ms:7.1f}  {name}")
        print(f"  {total:7.1f}  total (plus interpreter start-up)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
