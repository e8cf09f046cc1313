"""Bounded status reports: `dun summary`, `dun ack`, the report written at each stop, `unacknowledged_count` for
`dun status`, and `dun report --latest`, the deprecated spelling of summary-then-ack."""

from __future__ import annotations

import json
import time
from pathlib import Path

from conftest import settings_with
from history_support import T0, dun, make_log, new_repo, write_run

from dun.history.reports import MAX_LINES, report_files, unacknowledged_count
from dun.loop import operator as loop_hooks

CFG = settings_with(loop__max_budget_usd=10.0)


def busy_history(repo: Path, runs: int = 14) -> None:
    """Many runs, each with errors, discrepancies and its own review items: more than 60 lines' worth."""
    for r in range(runs):
        run_id = f"run{r:02d}"
        logs = [make_log(run_id, n, start=1_790_000_000 + r * 86400 + n * 600, status="COMPLETE",
                         task=f"check{r}", before=(f"check{r}",), after=(f"check{r}",),
                         found=({"kind": "unverified_completion", "detail": "no"},), ticked=(f"box {r}.{n}",),
                         restored=("MISSION.md",) if n < 3 else ()) for n in range(1, 5)]
        write_run(repo, run_id, logs, archived=r < runs - 1, stop_reason="circuit_open",
                  ended_at=logs[-1]["ended_at"])


def test_summary_prints_at_most_60_lines_and_changes_nothing(tmp_path: Path) -> None:
    repo = new_repo(tmp_path / "repo")
    busy_history(repo)
    proc = dun(repo, "summary")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert len(lines) == MAX_LINES and lines[0] == "# dun status report", proc.stdout
    assert "56 iteration(s) in 14 run(s)" in proc.stdout and "## Needs a person" in proc.stdout
    assert "`dun ack ID` (seen)" in proc.stdout
    assert lines[-1].startswith("... ") and "more lines" in lines[-1]
    assert report_files(repo) == [], "only `dun ack` writes and acknowledges"
    assert dun(repo, "summary").stdout.splitlines()[3:] == lines[3:]  # the same period again (its end moves on)
    assert dun(repo, "ack").returncode == 0
    [written] = report_files(repo)
    assert written.read_text(encoding="utf-8").splitlines()[3:] == lines[3:]
    assert unacknowledged_count(repo) == 0 and written.with_suffix(".ack").is_file()
    assert "0 iteration(s) in 0 run(s)" in dun(repo, "summary").stdout


def test_report_latest_still_prints_and_acknowledges_as_before(tmp_path: Path) -> None:
    """The spelling before `dun summary` and `dun ack`: scripts that use it keep working, told the new name."""
    repo = new_repo(tmp_path / "repo")
    busy_history(repo)
    proc = dun(repo, "report", "--latest")
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ("dun: `dun report --latest` is now `dun summary` (then `dun ack` to acknowledge; the old "
                           "spelling goes in a later version)\n")
    assert len(proc.stdout.splitlines()) == MAX_LINES
    [written] = report_files(repo)
    assert written.read_text(encoding="utf-8") == proc.stdout and unacknowledged_count(repo) == 0


def test_the_next_report_covers_only_what_came_after_the_acknowledged_one(tmp_path: Path) -> None:
    repo = new_repo(tmp_path / "repo")
    write_run(repo, "old", [make_log("old", 1), make_log("old", 2)], archived=True, stop_reason="budget")
    assert "old" in dun(repo, "summary").stdout
    assert dun(repo, "ack").returncode == 0
    [first] = report_files(repo)  # as if it had been read a day after T0
    day = first.with_name(f"report-{time.strftime('%Y%m%dT%H%M%S', time.gmtime(T0 + 86400))}.000Z.md")
    first.rename(day)
    first.with_suffix(".ack").rename(day.with_suffix(".ack"))
    write_run(repo, "new", [make_log("new", 1, start=T0 + 2 * 86400, cost=0.25)], status="complete",
              stop_reason="complete", ended_at=None)
    text = dun(repo, "summary").stdout
    assert "1 iteration(s) in 1 run(s), $0.2500 spent." in text and "old" not in text
    assert len(report_files(repo)) == 1


def test_each_stop_leaves_an_unacknowledged_report_and_ack_clears_them(tmp_path: Path) -> None:
    repo = new_repo(tmp_path / "repo")
    for run_id in ("a", "b"):
        base = write_run(repo, run_id, [make_log(run_id, 1)], stop_reason="max_iterations")
        loop_hooks.on_stop(repo, json.loads((base / "state.json").read_text()), CFG)
    assert unacknowledged_count(repo) == 2
    proc = dun(repo, "ack")
    assert proc.returncode == 0 and proc.stdout.startswith("acknowledged 3 report(s)"), proc.stdout
    assert "# dun status report" not in proc.stdout
    assert unacknowledged_count(repo) == 0
    status_before = [p.name for p in report_files(repo)]
    assert dun(repo, "ack").stdout.startswith("acknowledged 1 report(s)")  # the one it writes itself
    assert len(report_files(repo)) == len(status_before) + 1


def test_report_latest_goes_with_no_html_option(tmp_path: Path) -> None:
    repo = new_repo(tmp_path / "repo")
    for args in (["--html", "--latest"], ["--latest", "-o", "x.html"]):
        proc = dun(repo, "report", *args)
        assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, (args, proc.stderr)
