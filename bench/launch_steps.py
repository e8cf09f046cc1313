"""launch_steps: where a `dun check --only CHECK` on a small test suite spends its time, step by step along the launch
path: from dun's process start until its test runner starts, while the runner runs, and after it exits (reading the
report, parsing it, the look at the tree after it, rendering, storing).

The fixture is bench/test_runners.py's (the runner's failing tests plus --copies copies of its passing ones); a
source file is changed before every run, so the result is never reused and the runner starts as dun starts (the
plan of the last identical run, dun/engine/launch.py). Each run is `dun check` itself, in a fresh interpreter
that marks chosen functions of dun as they return (perf counters: wall from the moment the process was started,
CPU of dun's process, every thread). The bare runner is timed alternately. Medians of --runs.

Not a benchmark with a target: it says which step to work on and how much of dun's cost a test suite hides.
dun stays within test_runners.py's 10% when the runner outlasts dun's own path to the claim and runs at least ten
times as long as the steps it cannot overlap: the head (until the runner starts) and the tail (after it exits).
Run: .venv/bin/python bench/launch_steps.py [--runs N] [--copies N] [--only unittest]
"""

from __future__ import annotations

import ast
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import test_runners as tr
from _common import EXIT_PASS, dun_command, parser, run_once

# step -> (module, function or Class.method): its time is when the call returns (the first call)
MARKS = [
    ("git status started", "dun.core.spawn", "start_git"),
    ("runner started (git status answered, tree hashed)", "dun.engine.launch", "start"),
    ("git's look shared, snapshot imported", "dun.core.snapshot", "start_early"),
    ("plugin manager (check command, engine imported)", "dun.engine.manager", "make_manager"),
    ("session open (config)", "dun.engine.session", "open_session"),
    ("catalog", "dun.engine.session", "Session.catalog"),
    ("check's inputs looked at", "dun.engine.reuse", "ResultCache.inputs"),
    ("check decided (its command line)", "dun.checks.command", "_decide"),
    ("runner claimed", "dun.engine.launch", "Launches.claim"),
    ("plan for the next run written", "dun.engine.launch", "Launches.save"),
    ("runner's exit seen", "dun.core.proc", "Started.finish"),
    ("report parsed", "dun.checks.parsers.run", "ParserRun.finish"),
    ("tree looked at again, result stored", "dun.engine.reuse", "ResultCache.save"),
    ("report rendered and printed", "dun.cli.commands.check", "run_check"),
]

# run in the child: marks as dun's functions return, written out just before dun leaves
PROBE = r"""
import os, sys, time
seen = {"interpreter and site loaded": (time.perf_counter(), time.process_time())}
import functools, importlib.machinery  # light: not importlib.abc, which loads a tenth of dun's own imports
sys.path[0] = os.path.dirname(sys.executable)  # as the `dun` console script has it, not `-c`'s directory
MARKS = [m.split("|") for m in os.environ.pop("DUN_BENCH_MARKS").split(";")]
OUT = os.environ.pop("DUN_BENCH_OUT")
def marked(step, fn):
    @functools.wraps(fn)
    def inner(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        finally:
            seen.setdefault(step, (time.perf_counter(), time.process_time()))
    return inner
wanted = {}
for step, module, name in MARKS:
    wanted.setdefault(module, []).append((step, name))
class Hook:
    def find_spec(self, fullname, path, target=None):
        if fullname not in wanted:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None:
            return None
        load = spec.loader.exec_module
        def exec_module(module):
            load(module)
            for step, name in wanted[fullname]:
                owner, _, attr = name.rpartition(".")
                holder = getattr(module, owner) if owner else module
                setattr(holder, attr, marked(step, getattr(holder, attr)))
        spec.loader.exec_module = exec_module
        return spec
sys.meta_path.insert(0, Hook())
import dun.entry
leave = dun.entry._leave
def dump(code):
    seen.setdefault("exit", (time.perf_counter(), time.process_time()))
    with open(OUT, "w") as fh:
        fh.write(repr(seen))
    return leave(code)
dun.entry._leave = dump
sys.argv = ["dun", *sys.argv[1:]]
sys.exit(dump(dun.entry.main()))
"""


def probe_run(argv: list[str], root: Path, out: Path) -> tuple[float, dict[str, tuple[float, float]]]:
    """One `dun check` through PROBE: its wall time and each step's (wall since the process started, CPU)."""
    env = {**os.environ, "DUN_BENCH_MARKS": ";".join("|".join(m) for m in MARKS), "DUN_BENCH_OUT": str(out)}
    out.unlink(missing_ok=True)
    start = time.perf_counter()  # CLOCK_MONOTONIC on Linux: the same clock as the child's perf_counter
    subprocess.run([sys.executable, "-c", PROBE, *argv], cwd=root, env=env, stdin=subprocess.DEVNULL,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    wall = time.perf_counter() - start
    seen = ast.literal_eval(out.read_text()) if out.is_file() else {}
    return wall, {step: ((at - start) * 1000, cpu * 1000) for step, (at, cpu) in seen.items()}


def main() -> int:
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--copies", type=int, default=10, help="copies of the passing tests (default 10)")
    p.add_argument("--only", default="unittest", help="the fixture: a kind of bench/test_runners.py (default unittest)")
    args = p.parse_args()
    kind = args.only
    why = tr.missing(kind)
    if why:
        print(f"== {kind}\n  skipped   {why}")
        return EXIT_PASS
    dun_command()  # compiles dun's modules, as an installed wheel has them
    base = Path(tempfile.mkdtemp(prefix="dun-bench-steps-"))
    os.environ.update({"CARGO_TARGET_DIR": str(base / "cargo-target"), "GOFLAGS": "-mod=mod",
                       "GOCACHE": str(base / "gocache")})
    try:
        root = base / kind
        builders = {"cargo": lambda: tr.rust_project(root, args.copies),
                    "unittest": lambda: tr.unittest_project(root, args.copies),
                    "go": lambda: tr.go_project(root, args.copies)}
        baseline = builders[kind]() if kind in builders else tr.js_project(root, kind, args.copies)
        check = {"cargo": "cargo-test", "go": "go-test"}.get(kind, kind)
        argv = ["check", "--only", check]
        touched = tr._source(root)
        walls: list[float] = []
        bare: list[tuple[float, float]] = []
        steps: dict[str, list[tuple[float, float]]] = {}
        for round_ in range(args.runs + 1):
            for subject in (False, True):
                with touched.open("a") as fh:
                    fh.write("\n" if touched.suffix == ".py" else "\n// touched\n")
                if not subject:
                    run = run_once(baseline, root)
                    if round_:
                        bare.append((run.seconds * 1000, run.cpu_seconds * 1000))
                    continue
                wall, seen = probe_run(argv, root, base / "steps.json")
                if round_:
                    walls.append(wall * 1000)
                    for step, value in seen.items():
                        steps.setdefault(step, []).append(value)
        load = os.getloadavg()[0]
        bare_wall, bare_cpu = statistics.median(b[0] for b in bare), statistics.median(b[1] for b in bare)
        print(f"== {kind}: `dun {' '.join(argv)}` step by step ({args.runs} runs, load average {load:.1f})")
        print(f"  bare runner  {bare_wall:6.0f} ms wall, {bare_cpu:4.0f} ms CPU   {' '.join(baseline)}")
        print(f"  dun check    {statistics.median(walls):6.0f} ms wall (whole process, its runner included)")
        print("  step (median)                                          at ms   dun CPU ms (step)")
        order = ["interpreter and site loaded", *(step for step, _, _ in MARKS), "exit"]
        cpu_before = 0.0
        for step in order:
            if step not in steps:
                print(f"  {step:52}      -   (not reached)")
                continue
            at = statistics.median(v[0] for v in steps[step])
            cpu = statistics.median(v[1] for v in steps[step])
            print(f"  {step:52} {at:6.1f}  {cpu:6.1f} ({cpu - cpu_before:+5.1f})")
            cpu_before = cpu
    finally:
        shutil.rmtree(base, ignore_errors=True)
    return EXIT_PASS


if __name__ == "__main__":
    sys.exit(main())
