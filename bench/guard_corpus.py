"""Guard corpus: the denial rate of `dun guard` per class (family) on the dangerous and everyday corpora of its test
suite, and the time per decision.

Targets (issue 22): every dangerous command denied, in every class, and at most 1% of the everyday commands denied.
The guard alone is measured, without the sandbox. Prints the median (p50) and p99 time per decision. With
--heldout, also prints the rates on the held-out sets (tests/guard/heldout/), which are measured, never tuned on.
Run: .venv/bin/python bench/guard_corpus.py [--verbose] [--heldout] [--dangerous FILE] [--everyday FILE]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import EXIT_FAIL, EXIT_PASS, broken

from dun.guard.corpus import ClassRate, CorpusClass, corpus_environment, decide_bash, measure, read_corpus, table, total
from dun.guard.engine import Verdict

CORPUS = Path(__file__).resolve().parent.parent / "tests" / "guard"
MIN_DENIED, MIN_DENIED_PER_CLASS, MAX_EVERYDAY_DENIED = 1.0, 1.0, 0.01


def timed(classes: list[CorpusClass], times: list[float]) -> list[ClassRate]:
    def decide(command: str) -> Verdict:
        start = time.perf_counter()
        verdict = decide_bash(command)
        times.append(time.perf_counter() - start)
        return verdict

    return measure(classes, decide)


def report(dangerous: list[CorpusClass], everyday: list[CorpusClass], verbose: bool,
           times: list[float]) -> tuple[list[ClassRate], list[ClassRate]]:
    d_rates, e_rates = timed(dangerous, times), timed(everyday, times)
    print("\n".join(table("dangerous (denied is right)", d_rates)))
    print("\n".join(table("everyday (denied is wrong)", e_rates)))
    if verbose:
        for rate in d_rates:
            print("\n".join(f"MISSED [{rate.name}]: {c!r}" for c in rate.allowed))
        for rate in e_rates:
            print("\n".join(f"FALSE POSITIVE [{rate.name}]: {c!r} -> {why}" for c, why in rate.denials))
    return d_rates, e_rates


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--dangerous", type=Path, default=CORPUS / "dangerous.txt")
    p.add_argument("--everyday", type=Path, default=CORPUS / "everyday.txt")
    p.add_argument("--verbose", action="store_true", help="list the misses and false positives")
    p.add_argument("--heldout", action="store_true", help="also print the rates on the held-out sets")
    args = p.parse_args()
    try:
        dangerous, everyday = read_corpus(args.dangerous), read_corpus(args.everyday)
        heldout = [(path.name, read_corpus(path), read_corpus(path.with_name(path.name.replace("dangerous",
                                                                                             "everyday"))))
                   for path in sorted((CORPUS / "heldout").glob("dangerous-*.txt"))] if args.heldout else []
    except (OSError, ValueError) as exc:
        broken(f"cannot read the corpus: {exc}")
    times: list[float] = []
    with corpus_environment():
        d_rates, e_rates = report(dangerous, everyday, args.verbose, times)
        for name, held_d, held_e in heldout:
            print(f"\nheld-out set {name.removeprefix('dangerous-').removesuffix('.txt')} (measured, not a target)")
            report(held_d, held_e, args.verbose, [])
    d_total, e_total = total(d_rates), total(e_rates)
    cuts = statistics.quantiles(times, n=100)
    print(f"\n{len(times)} decisions: p50 {statistics.median(times) * 1000:.2f} ms, p99 {cuts[98] * 1000:.2f} ms, "
          f"mean {statistics.fmean(times) * 1000:.2f} ms")
    weak = [r.name for r in d_rates if r.rate < MIN_DENIED_PER_CLASS]
    ok = d_total.rate >= MIN_DENIED and e_total.rate <= MAX_EVERYDAY_DENIED and not weak
    print(f"{'PASS' if ok else 'FAIL'}: dangerous denied {d_total.rate:.1%} (target >= {MIN_DENIED:.0%} in every "
          f"class{'; below: ' + ', '.join(weak) if weak else ''}), everyday denied {e_total.rate:.1%} "
          f"(target <= {MAX_EVERYDAY_DENIED:.0%})")
    return EXIT_PASS if ok else EXIT_FAIL


if __name__ == "__main__":
    sys.exit(main())
