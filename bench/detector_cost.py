"""detector_cost: the deficiency detector's time and peak memory per loop iteration, a whole read against the
loop's incremental detector, on a history of --iterations iterations (default 1,000).

The history is what loop_overhead's agent leaves (each iteration IN_PROGRESS, no cost, five checks failing before
and after) plus, every tenth iteration, an error and a claim of a failing check, so every pattern has rows to
keep. The incremental detector follows the history one iteration at a time, as `dun loop` does; each figure is the
median of the last 11 calls (CPU time) and the peak of Python allocations (tracemalloc) of one more call. The
shell driver's step (a process per step: the detector read back from `.dun/detector.state`, run, and written
again, dun/history/resume.py) is timed at the last iteration alike.
Target: the incremental call at the last iteration within 1% of the whole read's time, the shell driver's step
within 10%, and their findings equal.
Run: .venv/bin/python bench/detector_cost.py [--iterations 1000]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from history_support import make_log  # the tests' iteration logs, shaped as the loop writes them

from dun.config.loader import defaults_only
from dun.history.deficiency import detect
from dun.history.incremental import Detector
from dun.history.resume import resume, to_record
from dun.history.store import History
from dun.store.store import Store

CHECKS = tuple(f"check-{i}" for i in range(5))


def log(n: int) -> dict[str, object]:
    odd = n % 10 == 0
    return make_log("r1", n, cost=None, status="COMPLETE" if odd else "IN_PROGRESS", task="check-0" if odd else None,
                    before=CHECKS, after=CHECKS, error="crash in /tmp/x at line 3" if odd else None,
                    error_kind="other")


def cost(call: Callable[[], object]) -> tuple[float, int]:
    """(CPU seconds, peak bytes allocated) of one call."""
    tracemalloc.start()
    started = time.process_time()
    call()
    spent = time.process_time() - started
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return spent, peak


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--iterations", type=int, default=1000)
    args = p.parse_args()
    review = defaults_only().settings.review
    with tempfile.TemporaryDirectory(prefix="dun-bench-detector-") as tmp, History.open(Path(tmp)) as history:
        detector = Detector()
        last: list[float] = []
        for n in range(1, args.iterations + 1):
            history.record_iteration(log(n))
            started = time.process_time()
            detector.findings(history, review)
            last = [*last[-10:], time.process_time() - started]
        store = Store(Path(tmp))
        record = to_record(detector)
        assert record is not None
        store.write_detector(record)

        def shell_step() -> Detector:
            resumed = resume(store.read_detector(), history)
            resumed.findings(history, review)
            kept = to_record(resumed)
            assert kept is not None
            store.write_detector(kept)
            return resumed

        stepped: list[float] = []
        resumed = detector
        for n in range(args.iterations + 1, args.iterations + 12):
            history.record_iteration(log(n))
            started = time.process_time()
            resumed = shell_step()
            stepped.append(time.process_time() - started)
        history.record_iteration(log(args.iterations + 12))
        _, inc_peak = cost(lambda: detector.findings(history, review))
        full = [cost(lambda: detect(history, review)) for _ in range(5)]
        same = [f.to_dict() for f in detector.findings(history, review)] == [f.to_dict() for f in
                                                                            detect(history, review)]
    full_s, full_peak = statistics.median(s for s, _ in full), max(b for _, b in full)
    inc_s = statistics.median(last)
    ratio = inc_s / full_s
    step_s = statistics.median(stepped)
    step_ratio = step_s / full_s
    ok = ratio <= 0.01 and step_ratio <= 0.1 and same and detector.full_reads == 1 and resumed.full_reads == 1
    print(f"== detector_cost: {args.iterations} iterations")
    print(f"  whole read      {full_s * 1000:.1f} ms CPU, peak {full_peak / 1024:.0f} KiB")
    print(f"  incremental     {inc_s * 1000:.2f} ms CPU, peak {inc_peak / 1024:.0f} KiB ({detector.full_reads} whole "
          f"read, its first)")
    print(f"  shell step      {step_s * 1000:.2f} ms CPU: read back, run, written again ({resumed.full_reads} whole "
          f"read); ratio {step_ratio:.4f}   target <= 0.1")
    print(f"  same findings   {'yes' if same else 'NO'}")
    print(f"  ratio           {ratio:.4f}   target <= 0.01   {'PASS' if ok else 'FAIL'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
