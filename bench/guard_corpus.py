"""Guard corpus: the denial rate of `dun guard` per class on the dangerous and everyday corpora of its test suite.

Targets: at least 99% of the dangerous commands denied (and at least 95% of each class), at most 2% of the everyday
commands denied. The guard alone is measured, without the sandbox. Also prints the time per decision.
Run: .venv/bin/python bench/guard_corpus.py [--verbose] [--dangerous FILE] [--everyday FILE]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import EXIT_FAIL, EXIT_PASS, broken

from dun.guard.corpus import corpus_environment, measure, read_corpus, table, total

CORPUS = Path(__file__).resolve().parent.parent / "tests" / "guard"
MIN_DENIED, MIN_DENIED_PER_CLASS, MAX_EVERYDAY_DENIED = 0.99, 0.95, 0.02


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--dangerous", type=Path, default=CORPUS / "dangerous.txt")
    p.add_argument("--everyday", type=Path, default=CORPUS / "everyday.txt")
    p.add_argument("--verbose", action="store_true", help="list the misses and false positives")
    args = p.parse_args()
    try:
        dangerous, everyday = read_corpus(args.dangerous), read_corpus(args.everyday)
    except (OSError, ValueError) as exc:
        broken(f"cannot read the corpus: {exc}")
    start = time.perf_counter()
    with corpus_environment():
        d_rates, e_rates = measure(dangerous), measure(everyday)
    elapsed = time.perf_counter() - start
    print("\n".join(table("dangerous (denied is right)", d_rates)))
    print("\n".join(table("everyday (denied is wrong)", e_rates)))
    d_total, e_total = total(d_rates), total(e_rates)
    decisions = d_total.total + e_total.total
    print(f"{decisions} decisions in {elapsed:.2f} s ({elapsed / decisions * 1000:.2f} ms each)")
    if args.verbose:
        for rate in d_rates:
            print("\n".join(f"MISSED [{rate.name}]: {c!r}" for c in rate.allowed))
        for rate in e_rates:
            print("\n".join(f"FALSE POSITIVE [{rate.name}]: {c!r} -> {why}" for c, why in rate.denials))
    weak = [r.name for r in d_rates if r.rate < MIN_DENIED_PER_CLASS]
    ok = d_total.rate >= MIN_DENIED and e_total.rate <= MAX_EVERYDAY_DENIED and not weak
    print(f"{'PASS' if ok else 'FAIL'}: dangerous denied {d_total.rate:.1%} (target >= {MIN_DENIED:.0%}, each class "
          f">= {MIN_DENIED_PER_CLASS:.0%}{'; below: ' + ', '.join(weak) if weak else ''}), everyday denied "
          f"{e_total.rate:.1%} (target <= {MAX_EVERYDAY_DENIED:.0%})")
    return EXIT_PASS if ok else EXIT_FAIL


if __name__ == "__main__":
    sys.exit(main())
