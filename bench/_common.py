"""Shared helpers for the standalone benchmarks in bench/: locating dun, timing commands, reporting.

Plain stdlib on purpose: the benchmarks must run from a clean clone after `make .venv/.installed`.
"""

from __future__ import annotations

import argparse
import os
import resource
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import NoReturn

RUNS = 5
EXIT_PASS, EXIT_FAIL, EXIT_BROKEN = 0, 1, 2


def dun_command() -> list[str]:
    """The `dun` console script next to the running interpreter, else `python -m dun`."""
    ensure_bytecode()
    bindir = Path(sys.executable).parent
    for name in ("dun", "dun.exe"):
        script = bindir / name
        if script.is_file() and os.access(script, os.X_OK):
            return [str(script)]
    return [sys.executable, "-m", "dun"]


def ensure_bytecode() -> None:
    """Compile dun's modules once, as installing a wheel does: with PYTHONDONTWRITEBYTECODE set (as on some CI and
    sandboxed machines) an editable install would otherwise compile every module from source on every run, which
    costs more than all of `dun check`'s own work on a small repository."""
    source = Path(__file__).resolve().parent.parent / "dun"
    if source.is_dir():
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(source)], check=False,
                       stdout=subprocess.DEVNULL)


def git_env() -> dict[str, str]:
    """A git environment that ignores the user's and system config, so results do not depend on them."""
    return {
        **os.environ,
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_AUTHOR_NAME": "dun bench",
        "GIT_AUTHOR_EMAIL": "bench@example.invalid",
        "GIT_COMMITTER_NAME": "dun bench",
        "GIT_COMMITTER_EMAIL": "bench@example.invalid",
        "GIT_TERMINAL_PROMPT": "0",
    }


def git(cwd: Path, *args: str, stdin: bytes | None = None) -> bytes:
    """Run git quickly (no fsync, no auto gc) and return stdout; raise with stderr on failure."""
    argv = ["git", "-c", "core.fsync=none", "-c", "gc.auto=0", *args]
    proc = subprocess.run(argv, cwd=cwd, env=git_env(), input=stdin, capture_output=True)
    if proc.returncode != 0:
        raise RuntimeError(f"{shlex.join(argv)} failed ({proc.returncode}): {proc.stderr.decode(errors='replace')}")
    return proc.stdout


def loop_repo(root: Path, iterations: int, agent: dict[str, object]) -> None:
    """The loop benchmarks' repository: 2,000 tracked files, a MISSION.md with 50 open boxes, dun's runtime files
    ignored as `dun init` ignores them (the agents change nothing, so the tree stays clean), and a config that runs
    `agent` for `iterations` iterations with every limit that could stop the loop early raised."""
    import json
    import shutil

    git(root, "init", "-q", "-b", "main")
    for i in range(2000):
        path = root / f"src/pkg{i // 100}/mod{i}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"VALUE = {i}\n", encoding="utf-8")
    boxes = "".join(f"- [ ] task {i}\n" for i in range(50))
    (root / "MISSION.md").write_text(f"# Mission\n\n{boxes}", encoding="utf-8")
    dun = root / ".dun"
    dun.mkdir()
    shutil.copyfile(Path(__file__).resolve().parent.parent / "templates" / "dun.gitignore", dun / ".gitignore")
    (dun / "config.yaml").write_text(
        "plugins: {disabled: [python, go]}\n"
        f"agent: {json.dumps(agent)}\n"
        # the fake agent's files live outside the repository, which a sandbox would hide
        f"loop: {{cooldown_s: 0, sandbox: off, max_iterations: {iterations}, max_budget_usd: 0,"
        " max_calls_per_hour: 100000, error_threshold: 100000}\n"
        "circuit: {no_progress_limit: 1000000, half_open_after: 1000000}\n", encoding="utf-8")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "bench repo")


@dataclass
class Run:
    """One finished run of a command."""

    seconds: float
    returncode: int
    stdout: bytes
    stderr: bytes
    cpu_seconds: float = 0.0  # user + system CPU: steadier than wall time on a shared machine


@dataclass
class Timing:
    argv: list[str]
    runs: list[Run] = field(default_factory=list)
    peak_rss_kb: int | None = None  # from one extra untimed run, see peak_rss_kb()

    @property
    def samples(self) -> list[float]:
        return [r.seconds for r in self.runs]

    @property
    def median(self) -> float:
        return statistics.median(self.samples)

    @property
    def cpu_median(self) -> float:
        return statistics.median(r.cpu_seconds for r in self.runs)

    @property
    def last(self) -> Run:
        return self.runs[-1]


def run_once(argv: Sequence[str], cwd: Path | None = None, env: dict[str, str] | None = None) -> Run:
    """Run `argv` with output in temp files (no pipe-reader threads in the timed path); wall time via perf_counter,
    CPU time (user + system of the command and every process it waited for) via RUSAGE_CHILDREN."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        before = _children_cpu()
        start = time.perf_counter()
        returncode = subprocess.run(list(argv), cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=out,
                                    stderr=err).returncode
        seconds = time.perf_counter() - start
        cpu = _children_cpu() - before
        out.seek(0)
        err.seek(0)
        return Run(seconds, returncode, out.read(), err.read(), cpu)


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


# Peak RSS has to be read through a small launcher: a child's ru_maxrss also counts the memory of the process
# it was forked from (the high-water mark survives exec), so children of this script would report at least
# this script's own size. The launcher (an isolated interpreter, ~10 MB) forks the command and reports its
# ru_maxrss, which therefore has the launcher's size as its floor.
_RSS_LAUNCHER = """
import os, sys
pid = os.fork()
if pid == 0:
    try:
        os.execvp(sys.argv[2], sys.argv[2:])
    finally:
        os._exit(127)
_, status, usage = os.wait4(pid, 0)
with open(sys.argv[1], "w") as fh:
    fh.write(str(usage.ru_maxrss))
sys.exit(os.waitstatus_to_exitcode(status))
"""


def peak_rss_kb(argv: Sequence[str], cwd: Path | None = None, env: dict[str, str] | None = None) -> int:
    """Peak resident set size of one (untimed) run of `argv`, in KiB."""
    with tempfile.TemporaryDirectory(prefix="dun-bench-rss-") as tmp:
        report_file = Path(tmp) / "maxrss"
        launcher = [sys.executable, "-I", "-S", "-c", _RSS_LAUNCHER, str(report_file), *argv]
        subprocess.run(launcher, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        return int(report_file.read_text(encoding="ascii"))


def time_command(argv: Sequence[str], cwd: Path | None = None, runs: int = RUNS, warmup: int = 1,
                 env: dict[str, str] | None = None, accept: Callable[[Run], str | None] | None = None,
                 rss: bool = False) -> Timing:
    """Run `argv` `warmup` times untimed, then `runs` times timed, then (with `rss`) once more for its peak RSS.
    `accept` returns an error message or None; the first unacceptable run aborts the benchmark (exit 2)."""
    timing = Timing(list(argv))
    for i in range(warmup + runs):
        run = run_once(argv, cwd, env)
        problem = accept(run) if accept else (f"exit code {run.returncode}" if run.returncode else None)
        if problem:
            broken(f"{shlex.join(argv)}: {problem}", run)
        if i >= warmup:
            timing.runs.append(run)
    if rss:
        timing.peak_rss_kb = peak_rss_kb(argv, cwd, env)
    return timing


def time_pair(subject: Sequence[str], baseline: Sequence[str], cwd: Path | None = None, runs: int = RUNS,
              warmup: int = 1, accept: Callable[[Run], str | None] | None = None,
              accept_baseline: Callable[[Run], str | None] | None = None) -> tuple[Timing, Timing]:
    """Time `subject` and `baseline` alternately (baseline first in each round), so background load on the
    machine hits both alike; returns (subject timing, baseline timing)."""
    pair = (Timing(list(subject)), Timing(list(baseline)))
    for _ in range(warmup + runs):
        for timing, check in ((pair[1], accept_baseline), (pair[0], accept)):
            timing.runs.extend(time_command(timing.argv, cwd, runs=1, warmup=0, accept=check).runs)
    for timing in pair:
        del timing.runs[:warmup]
    pair[0].peak_rss_kb = peak_rss_kb(subject, cwd)
    return pair


def broken(message: str, run: Run | None = None) -> NoReturn:
    """The benchmark itself could not measure what it should: explain and exit 2."""
    print(f"BROKEN: {message}", file=sys.stderr)
    if run is not None:
        for name, data in (("stdout", run.stdout), ("stderr", run.stderr)):
            text = data.decode("utf-8", "replace").strip()
            if text:
                print(f"--- {name} (last 40 lines) ---\n" + "\n".join(text.splitlines()[-40:]), file=sys.stderr)
    sys.exit(EXIT_BROKEN)


def parser(description: str) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--runs", type=int, default=RUNS, help=f"timed runs; the median is reported (default {RUNS})")
    return p


def _fmt(seconds: float) -> str:
    return f"{seconds * 1000:.0f} ms" if seconds < 1 else f"{seconds:.3f} s"


def report(name: str, subject: Timing, baseline_label: str, baseline_s: float, target: float,
           notes: Sequence[str] = ()) -> int:
    """Print the result block and return the exit code: 0 PASS, 1 FAIL."""
    ratio = subject.median / baseline_s
    ok = ratio <= target
    print(f"== {name}")
    print(f"  command   {shlex.join(subject.argv)}")
    print(f"  runs      {', '.join(_fmt(s) for s in subject.samples)}")
    rss = f"   (peak RSS {subject.peak_rss_kb / 1024:.1f} MiB)" if subject.peak_rss_kb is not None else ""
    print(f"  median    {_fmt(subject.median)}{rss}   (CPU {_fmt(subject.cpu_median)})")
    print(f"  baseline  {_fmt(baseline_s)}   {baseline_label}")
    for note in notes:
        print(f"  note      {note}")
    print(f"  ratio     {ratio:.2f}   target <= {target:g}   {'PASS' if ok else 'FAIL'}")
    return EXIT_PASS if ok else EXIT_FAIL
