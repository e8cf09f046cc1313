"""iterate_large_repo: `dun iterate` against `dun check` on the check_large_repo repository (10,000 boxes).

Target: iterate's median wall time <= 1.3x check's, and the prompt within --max-prompt-chars.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import Run, broken, dun_command, parser, report, time_pair
from check_large_repo import ensure_repo

TARGET = 1.3
MAX_CHARS = 32000


def prompt_ok(run: Run) -> str | None:
    if run.returncode != 0:
        return f"dun iterate exited {run.returncode}"
    if b"---DUN_STATUS---" not in run.stdout:
        return "no status block template in the prompt"
    if len(run.stdout) > MAX_CHARS:
        return f"prompt is {len(run.stdout)} characters, over {MAX_CHARS}"
    return None


def check_ok(run: Run) -> str | None:
    return None if run.returncode in (0, 1) else f"dun check exited {run.returncode}"


def main() -> int:
    args = parser(__doc__.splitlines()[0]).parse_args()
    try:
        root = ensure_repo(False)
    except (OSError, RuntimeError) as exc:
        broken(f"cannot generate the repository: {exc}")
    subject, baseline = time_pair([*dun_command(), "iterate", "--max-prompt-chars", str(MAX_CHARS)],
                                  [*dun_command(), "check", "--format", "json", "--no-cache"], root, runs=args.runs,
                                  accept=prompt_ok, accept_baseline=check_ok)
    out = subject.last.stdout.decode("utf-8", "replace")
    notes = [f"prompt {len(out)} characters (bound {MAX_CHARS}); folded: "
             + ("yes" if "more boxes" in out else "no")]
    return report("iterate_large_repo: dun iterate", subject, "dun check --format json --no-cache", baseline.median,
                  TARGET, notes)


if __name__ == "__main__":
    sys.exit(main())
