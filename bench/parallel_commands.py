"""Concurrency: 8 independent `sleep 0.5` command checks, caches off, against a budget and against Go dun.

Serially they take 4 s; with the default `check.jobs` (8) they should take ~0.5 s plus start-up.
- budget: `dun check --no-cache --format json` median wall time <= 1.5 s (the ratio printed is wall / 1.5 s);
- Go dun (issue 23): the same 8 checks run by the Go implementation of dun, whose binary is taken from the
  `DUN_GO_BIN` environment variable, timed alternately with dun; target dun's median wall <= 0.6x Go dun's. Without
  `DUN_GO_BIN` this part prints a SKIP line and only the budget decides the exit code.
Both run in a fresh `git init` repository holding only the 8 checks, each in its own manifest format (dun:
`.dun/plugins/sleep.yaml`, with the python, go and git built-ins disabled; Go dun: `.dun/plugins/sleep/plugin.yaml`,
with its built-in `git` plugin replaced by one that never applies), and every timed run of either must report
exactly the 8 checks, all passing. Go dun reads plugins from `~/.dun/plugins` too: it runs with HOME and
XDG_CACHE_HOME set to an empty temporary directory.
Run: [DUN_GO_BIN=/path/to/go/dun] .venv/bin/python bench/parallel_commands.py [--runs N]
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import EXIT_PASS, Run, Timing, dun_command, git, parser, report, time_command

CHECKS = 8
SLEEP_S = 0.5
BUDGET_S = 1.5
GO_TARGET = 0.6  # dun's wall time as a fraction of Go dun's on the same checks (issue 23)


def manifest() -> str:
    lines = ["id: sleep", "description: Independent slow commands that should run concurrently.", "checks:"]
    for i in range(1, CHECKS + 1):
        lines += [f"  - id: sleep-{i}", "    type: command", f"    command: sleep {SLEEP_S:g}", "    timeout: 30"]
    return "\n".join(lines) + "\n"


def go_manifest() -> str:
    """The same checks as Go dun reads them (a plugin directory, a version, timeouts as Go durations)."""
    lines = ["id: sleep", 'version: "1"', "description: Independent slow commands.", "checks:"]
    for i in range(1, CHECKS + 1):
        lines += [f"  - id: sleep-{i}", "    type: command", f"    command: sleep {SLEEP_S:g}", "    timeout: 30s"]
    return "\n".join(lines) + "\n"


# Go dun has no switch to turn a built-in plugin off; a project plugin with the same id replaces it, and this one's
# trigger never matches, so its git-status and git-hooks checks do not run (dun's config disables its git plugin).
GO_NO_GIT = """\
id: git
version: "1"
description: Replaces the built-in git plugin for the benchmark; never applies.
triggers:
  - type: path-exists
    value: .dun/never-present
checks:
  - id: git-off
    type: command
    command: "true"
"""


def make_repo(root: Path) -> None:
    git(root, "init", "-q")
    plugins = root / ".dun" / "plugins"
    plugins.mkdir(parents=True)
    (plugins / "sleep.yaml").write_text(manifest(), encoding="utf-8")
    (root / ".dun" / "config.yaml").write_text("plugins:\n  disabled: [python, go, git]\n", encoding="utf-8")


def make_go_repo(root: Path) -> None:
    git(root, "init", "-q")
    for plugin, text in (("sleep", go_manifest()), ("git", GO_NO_GIT)):
        directory = root / ".dun" / "plugins" / plugin
        directory.mkdir(parents=True)
        (directory / "plugin.yaml").write_text(text, encoding="utf-8")


def accept(run: Run) -> str | None:
    """Exit 0 and exactly the 8 sleep checks, all passing (either implementation's JSON has `checks` with `id`
    and `status`)."""
    if run.returncode != 0:
        return f"exit code {run.returncode} (expected 0: every sleep check passes)"
    try:
        results = json.loads(run.stdout)["checks"]
    except (ValueError, KeyError, TypeError):
        return "no JSON report with `checks`"
    ran = sorted(r["id"] for r in results if r.get("status") == "pass")
    others = sorted(r["id"] for r in results if r.get("status") not in ("pass", "skip"))
    if ran != [f"sleep-{i}" for i in range(1, CHECKS + 1)] or others:
        return f"expected exactly the {CHECKS} sleep checks passing, got passing {ran}, others {others}"
    return None


def go_binary() -> tuple[str | None, str]:
    """Go dun's binary from DUN_GO_BIN, or None and why not."""
    path = os.environ.get("DUN_GO_BIN", "")
    if not path:
        return None, "DUN_GO_BIN is not set (build Go dun and point DUN_GO_BIN at the binary)"
    if not (os.path.isfile(path) and os.access(path, os.X_OK)):
        return None, f"DUN_GO_BIN={path} is not an executable file"
    return path, ""


def main() -> int:
    args = parser(__doc__.splitlines()[0]).parse_args()
    go, why_not = go_binary()
    dun = [*dun_command(), "check", "--no-cache", "--format", "json"]
    with tempfile.TemporaryDirectory(prefix="dun-bench-parallel-") as tmp:
        root, go_root, home = Path(tmp) / "dun", Path(tmp) / "go", Path(tmp) / "home"
        for directory in (root, go_root, home):
            directory.mkdir()
        make_repo(root)
        make_go_repo(go_root)
        go_env = {**os.environ, "HOME": str(home), "XDG_CACHE_HOME": str(home / ".cache")}
        subject = Timing(dun)
        baseline = Timing([go or "go-dun", "check", "--format", "json"])
        # One untimed run of each validates the setup; then the two alternate, so load hits both alike.
        for timed in [False] + [True] * args.runs:
            if go is not None:
                run = time_command(baseline.argv, go_root, runs=1, warmup=0, env=go_env, accept=accept).last
                baseline.runs.extend([run] if timed else [])
            run = time_command(dun, root, runs=1, warmup=0, accept=accept).last
            subject.runs.extend([run] if timed else [])
        subject.peak_rss_kb = time_command(dun, root, runs=0, warmup=0, rss=True).peak_rss_kb
    serial, floor = CHECKS * SLEEP_S, SLEEP_S
    notes = [f"{CHECKS} checks x sleep {SLEEP_S:g}: {serial:g} s serial, {floor:g} s fully parallel; "
             f"dun's overhead over the parallel floor {(subject.median - floor) * 1000:.0f} ms",
             f"load average {', '.join(f'{x:.1f}' for x in os.getloadavg())}, {os.cpu_count()} CPUs"]
    code = report(f"parallel_commands: {CHECKS} x sleep {SLEEP_S:g}, caches off", subject,
                  "budget (target wall time)", BUDGET_S, 1.0, notes)
    if go is None:
        print(f"SKIP: parallel_commands against Go dun: {why_not}")
        return code
    over = baseline.median - serial
    how = "one after another (its median is above" if over >= 0 else "concurrently (its median is below"
    go_notes = [f"Go dun: {', '.join(f'{r.seconds:.3f} s' for r in baseline.runs)}, CPU "
                f"{baseline.cpu_median * 1000:.0f} ms; over the serial floor {over * 1000:.0f} ms, "
                f"{over / CHECKS * 1000:.0f} ms a check",
                f"Go dun ran the checks {how} the serial floor)"]
    go_code = report(f"parallel_commands against Go dun: {CHECKS} x sleep {SLEEP_S:g}, caches off", subject,
                     f"Go dun: {' '.join(baseline.argv)} (median)", baseline.median, GO_TARGET, go_notes)
    return code if code != EXIT_PASS else go_code


if __name__ == "__main__":
    sys.exit(main())
