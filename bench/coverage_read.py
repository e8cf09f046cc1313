"""coverage_read: reading coverage.py data (`.coverage`) against `coverage report`, cold and cached.

The project is a copy of dun's own package and tests (about 175 modules), measured with branch coverage by
running part of its test suite once (`coverage run -m pytest tests/core tests/engine`). A `coverage` check reads
the data through coverage.py's API, so it analyses every source file just as `coverage report` does.
- cold: `dun check --only cov --no-cache` with DUN_NO_CACHE=1 (no cache of any kind), timed alternately with
  `python -m coverage report`; target <= 1.1x;
- cached: the same check with the read cache warm (the data file and every source unchanged), results not reused
  (an environment variable that changes every run; `--no-cache` reads no cache at all); target: the check itself
  (its `duration_s`) under 50 ms.
Run: .venv/bin/python bench/coverage_read.py [--runs N]
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import Run, broken, dun_command, git, parser, report, time_command

TARGET_COLD = 1.1
TARGET_CACHED_S = 0.050
SOURCE = Path(__file__).resolve().parent.parent
MANIFEST = """\
id: cov
checks:
  - id: cov
    type: coverage
    description: Coverage of the copied package.
    file: .coverage
    format: coveragepy
    threshold: 0
"""


def make_project(root: Path) -> None:
    for name in ("dun", "tests", "plugins", "templates"):
        shutil.copytree(SOURCE / name, root / name, ignore=shutil.ignore_patterns("__pycache__"))
    (root / ".coveragerc").write_text("[run]\nsource = dun\nbranch = true\n", encoding="utf-8")
    (root / ".gitignore").write_text(".coverage\n.dun/cache/\n", encoding="utf-8")
    (root / ".dun" / "plugins").mkdir(parents=True)
    (root / ".dun" / "plugins" / "cov.yaml").write_text(MANIFEST, encoding="utf-8")
    disabled = "python, go, git, mission, helix, beads, hooks, javascript, rust, test-suites"
    (root / ".dun" / "config.yaml").write_text(f"plugins: {{disabled: [{disabled}]}}\n", encoding="utf-8")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "project")
    env = {**os.environ, "PYTHONPATH": str(root)}  # the copy, not the installed dun, is what runs and is measured
    argv = [sys.executable, "-m", "coverage", "run", "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", "tests/core",
            "tests/engine"]
    proc = subprocess.run(argv, cwd=root, env=env, capture_output=True)
    if not (root / ".coverage").is_file():
        broken(f"coverage run wrote no data (exit {proc.returncode}): {proc.stdout[-2000:]!r}")
    old = 1_000_000_000_000_000_000  # 2001: the data file is older than the read cache's racy window
    os.utime(root / ".coverage", ns=(old, old))


def check_duration(run: Run) -> float:
    return float(json.loads(run.stdout)["checks"][0]["duration_s"])


def main() -> int:
    args = parser(__doc__.splitlines()[0]).parse_args()
    with tempfile.TemporaryDirectory(prefix="dun-bench-coverage-") as tmp:
        root = Path(tmp) / "project"
        root.mkdir()
        make_project(root)
        dun = [*dun_command(), "check", "--only", "cov", "--format", "json", "--no-cache"]

        def accept(run: Run) -> str | None:
            try:
                check = json.loads(run.stdout)["checks"][0]
            except (ValueError, KeyError, IndexError):
                return f"exit {run.returncode}, unreadable report"
            return None if check["status"] == "pass" else f"{check['status']}: {check['signal']}"

        cold_env = {**os.environ, "DUN_NO_CACHE": "1"}
        pair = []
        for _ in range(args.runs + 1):  # alternating; round 0 is the warm-up
            pair.append((time_command([sys.executable, "-m", "coverage", "report"], root, runs=1, warmup=0),
                         time_command(dun, root, runs=1, warmup=0, env=cold_env, accept=accept)))
        baseline = [b.runs[0] for b, _ in pair[1:]]
        cold = pair[1][1]
        cold.runs = [d.runs[0] for _, d in pair[1:]]
        signal = json.loads(cold.last.stdout)["checks"][0]["signal"]
        itself = statistics.median(check_duration(r) for r in cold.runs)
        code = report("coverage_read: cold, dun check --only cov (DUN_NO_CACHE=1)", cold, "python -m coverage report",
                      statistics.median(r.seconds for r in baseline), TARGET_COLD,
                      [signal, f"the check itself: {itself * 1000:.0f} ms"])
        # results not reused (an environment variable that differs every run is part of their key), the read cache
        # warm (`--no-cache` would read no cache at all)
        nonce = ["sh", "-c", 'DUN_BENCH_NONCE=$(date +%s%N) exec "$@"', "nonce"]
        cached = time_command([*nonce, *dun_command(), "check", "--only", "cov", "--format", "json"], root,
                              runs=args.runs, accept=accept)
        inside = statistics.median(check_duration(r) for r in cached.runs)
        ok = inside <= TARGET_CACHED_S
        print("== coverage_read: cached read (data and sources unchanged), results not reused")
        print(f"  the check itself  {inside * 1000:.1f} ms   target <= {TARGET_CACHED_S * 1000:.0f} ms   "
              f"{'PASS' if ok else 'FAIL'}")
        print(f"  whole command     {cached.median * 1000:.0f} ms (CPU {cached.cpu_median * 1000:.0f} ms)")
    return max(code, 0 if ok else 1)


if __name__ == "__main__":
    sys.exit(main())
