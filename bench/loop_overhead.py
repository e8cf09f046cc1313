"""loop_overhead: `dun loop` time per iteration with an instant fake agent, beside one `dun check`, and RSS growth.

A mid-size repository (2,000 tracked files, 50 open boxes). The agent answers at once, changes nothing and never
signals exit, so every iteration runs the whole loop machinery; the breaker's limits are raised so it keeps going.
Targets: time per iteration <= 1.5x one `dun check`; RSS at iteration --rss-at (default 1,000) within 10% of RSS at
iteration 10, each the median of five readings (iterations 6-10 and the five up to --rss-at).
Run: .venv/bin/python bench/loop_overhead.py [--runs N] [--iterations 50] [--rss-at 1000]
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import Timing, dun_command, loop_repo, parser, report, time_command

AGENT = """#!/bin/sh
cat > /dev/null
printf -- '---DUN_STATUS---\\nTASK_COMPLETED: none\\nSTATUS: IN_PROGRESS\\nFILES_MODIFIED: 0\\nEXIT_SIGNAL: false\\n'
printf -- 'NEXT_RECOMMENDATION: keep going\\n---END_DUN_STATUS---\\n'
"""


def make_repo(root: Path, iterations: int) -> None:
    agent = root.parent / "agent.sh"  # outside the repository: the agent leaves the tree as it was
    agent.write_text(AGENT, encoding="utf-8")
    agent.chmod(0o755)
    loop_repo(root, iterations, {"name": "command", "command": [str(agent)]})


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def own_state(tmp: str) -> dict[str, str]:
    """Its own state directory: a benchmark's 1,000s of calls must not fill the user's shared hourly window."""
    return {**os.environ, "XDG_STATE_HOME": str(Path(tmp) / "state")}


def rss_growth(root: Path, early: int, late: int, env: dict[str, str], samples: int = 5) -> tuple[int, int]:
    """Run one long loop; the loop's RSS as the median of `samples` readings, one as each of the iterations up to
    `early` and up to `late` is logged (one reading can land on a transient peak of whatever the loop is doing)."""
    logs = root / ".dun" / "logs"
    shutil.rmtree(logs, ignore_errors=True)  # the timed runs' logs must not be mistaken for this run's
    (root / ".dun" / "state.json").unlink(missing_ok=True)
    proc = subprocess.Popen([*dun_command(), "loop", "--max-iterations", str(late + 1)], cwd=root, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    found: dict[int, list[int]] = {}
    try:
        for target in (early, late):
            for n in range(max(1, target - samples + 1), target + 1):
                while not (logs / f"iteration-{n + 1}.json").exists():
                    if proc.poll() is not None:
                        raise RuntimeError(f"dun loop exited {proc.returncode} before iteration {n}")
                    time.sleep(0.005)  # polling a file the loop writes; the bench measures, it does not synchronise
                found.setdefault(target, []).append(rss_kib(proc.pid))
    finally:
        proc.terminate()
        proc.wait(timeout=60)
    return int(statistics.median(found[early])), int(statistics.median(found[late]))


def main() -> int:
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--iterations", type=int, default=50)
    p.add_argument("--rss-at", type=int, default=1000)
    args = p.parse_args()
    with tempfile.TemporaryDirectory(prefix="dun-bench-loop-") as tmp:
        root = Path(tmp) / "repo"
        root.mkdir()
        make_repo(root, args.iterations)
        check = time_command([*dun_command(), "check", "--format", "json", "--no-cache"], root, runs=args.runs,
                             accept=lambda run: None if run.returncode in (0, 1) else f"exit {run.returncode}")
        per_iteration = Timing(list(check.argv))
        for _ in range(args.runs):
            wall = time_command([*dun_command(), "loop", "--fresh"], root, runs=1, warmup=0, env=own_state(tmp),
                                accept=lambda run: None if run.returncode == 1 else f"exit {run.returncode}")
            state = json.loads((root / ".dun" / "state.json").read_text())
            if state["stop_reason"] != "max_iterations" or state["iteration"] != args.iterations:
                print(f"unexpected stop: {state['stop_reason']} after {state['iteration']}", file=sys.stderr)
                return 2
            run = wall.runs[0]
            per_iteration.runs.append(type(run)(run.seconds / args.iterations, run.returncode, run.stdout,
                                                run.stderr, run.cpu_seconds / args.iterations))
        per_iteration.argv = [*dun_command(), "loop", f"(per iteration of {args.iterations})"]
        early, late = rss_growth(root, 10, args.rss_at, own_state(tmp))
    growth = (late - early) / early
    notes = [f"RSS after iteration 10: {early / 1024:.1f} MiB, after {args.rss_at}: {late / 1024:.1f} MiB, "
             f"growth {growth:+.1%} (target <= 10%): {'PASS' if growth <= 0.10 else 'FAIL'}"]
    code = report("loop_overhead: time per loop iteration", per_iteration, "one dun check", check.median, 1.5,
                  notes)
    return code if growth <= 0.10 else 1


if __name__ == "__main__":
    sys.exit(main())
