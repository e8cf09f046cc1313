"""Startup cost: `dun --version` against a bare `python -c pass` on the same interpreter.

Target: dun's median wall time is at most 4x the interpreter's own start-up.
Run: .venv/bin/python bench/startup.py [--runs N]
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import Run, dun_command, parser, report, time_pair

TARGET = 4.0


def main() -> int:
    args = parser(__doc__.splitlines()[0]).parse_args()
    dun = [*dun_command(), "--version"]

    def accept(run: Run) -> str | None:
        if run.returncode != 0:
            return f"exit code {run.returncode}"
        return None if b"version" in run.stdout else "no version in the output"

    # Run outside any repository so nothing in the cwd can influence either command.
    with tempfile.TemporaryDirectory(prefix="dun-bench-startup-") as tmp:
        cwd = Path(tmp)
        subject, baseline = time_pair(dun, [sys.executable, "-c", "pass"], cwd, runs=args.runs, accept=accept)
    return report("startup: dun --version", subject, f"{Path(sys.executable).name} -c pass", baseline.median,
                  TARGET)


if __name__ == "__main__":
    sys.exit(main())
