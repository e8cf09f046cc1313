"""iterate_large_repo: `dun iterate` against `dun check` on the check_large_repo repository (10,000 boxes).

`dun iterate` reuses the results a `dun check` stored on the same inputs, so each is compared with a `dun check` in
the same situation, timed alternately:
- one file edited before every run (of both), as after an agent's iteration: every check runs, the per-file caches
  serve every other file; the prompt's cost is what iterate adds. Target: iterate <= 1.3x check;
- no change since the last run: every result reused (`dun check` also replays its whole stored output, which
  iterate, whose prompt carries the loop's state, does not); reported without a target.
The prompt must stay within --max-prompt-chars in every run.
Run: .venv/bin/python bench/iterate_large_repo.py [--runs N]
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import Run, broken, dun_command, parser, report, time_pair
from check_large_repo import ensure_repo, nested

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
    iterate = [*dun_command(), "iterate", "--max-prompt-chars", str(MAX_CHARS)]
    check = [*dun_command(), "check", "--format", "json"]
    edited = f"{nested('src', 0)}/mod_00000.py"
    edit = ["sh", "-c", f'echo "# edit $(date +%s%N)" >> {edited} && exec "$@"', "edit"]
    try:
        subject, baseline = time_pair([*edit, *iterate], [*edit, *check], root, runs=args.runs, accept=prompt_ok,
                                      accept_baseline=check_ok)
    finally:
        subprocess.run(["git", "checkout", "--", edited], cwd=root, check=False)
    out = subject.last.stdout.decode("utf-8", "replace")
    notes = [f"prompt {len(out)} characters (bound {MAX_CHARS}); folded: "
             + ("yes" if "more boxes" in out else "no"), f"baseline CPU {baseline.cpu_median * 1000:.0f} ms"]
    code = report("iterate_large_repo: one file edited, dun iterate", subject, "dun check --format json (edited)",
                  baseline.median, TARGET, notes)
    same, same_check = time_pair(iterate, check, root, runs=args.runs, accept=prompt_ok, accept_baseline=check_ok)
    print(f"== iterate_large_repo: no change, dun iterate: median {same.median * 1000:.0f} ms, CPU "
          f"{same.cpu_median * 1000:.0f} ms, {same.median / same_check.median:.2f}x dun check ("
          f"{same_check.median * 1000:.0f} ms, CPU {same_check.cpu_median * 1000:.0f} ms: its whole output replayed; "
          "no target)")
    return code


if __name__ == "__main__":
    sys.exit(main())
