"""Concurrency: 8 independent `sleep 0.5` command checks must overlap under the default settings.

Serially they take 4 s; with the default `check.jobs` (8) they should take ~0.5 s plus start-up.
Target: `dun check` median wall time <= 1.5 s; the ratio printed is wall / 1.5 s.
Run: .venv/bin/python bench/parallel_commands.py [--runs N]
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import Run, dun_command, git, parser, report, time_command

CHECKS = 8
SLEEP_S = 0.5
BUDGET_S = 1.5


def manifest() -> str:
    lines = ["id: sleep", "description: Independent slow commands that should run concurrently.", "checks:"]
    for i in range(1, CHECKS + 1):
        lines += [f"  - id: sleep-{i}", "    type: command", f"    command: sleep {SLEEP_S:g}", "    timeout: 30"]
    return "\n".join(lines) + "\n"


def make_repo(root: Path) -> None:
    git(root, "init", "-q")
    plugins = root / ".dun" / "plugins"
    plugins.mkdir(parents=True)
    (plugins / "sleep.yaml").write_text(manifest(), encoding="utf-8")
    (root / ".dun" / "config.yaml").write_text("plugins:\n  disabled: [python, go, git]\n", encoding="utf-8")


def accept(run: Run) -> str | None:
    if run.returncode != 0:
        return f"exit code {run.returncode} (expected 0: every sleep check passes)"
    results = json.loads(run.stdout)["checks"]
    ran = sorted(r["id"] for r in results if r["status"] == "pass")
    if len(ran) != CHECKS:
        return f"expected {CHECKS} passing sleep checks, got {ran}"
    return None


def main() -> int:
    args = parser(__doc__.splitlines()[0]).parse_args()
    with tempfile.TemporaryDirectory(prefix="dun-bench-parallel-") as tmp:
        root = Path(tmp)
        make_repo(root)
        # One untimed run validates the setup (json, so the checks can be counted); then the default format.
        time_command([*dun_command(), "check", "--format", "json"], root, runs=0, accept=accept)
        subject = time_command([*dun_command(), "check", "--no-cache"], root, runs=args.runs, warmup=0, rss=True)
    notes = [f"{CHECKS} checks x sleep {SLEEP_S:g}: {CHECKS * SLEEP_S:g} s serial, {SLEEP_S:g} s fully parallel"]
    return report(f"parallel_commands: {CHECKS} x sleep {SLEEP_S:g}", subject, "budget (target wall time)",
                  BUDGET_S, 1.0, notes)


if __name__ == "__main__":
    sys.exit(main())
