"""Bounded status reports with acknowledgement (Prophet's model): what happened since the operator last looked,
in at most 60 lines.

A report is `.dun/reports/report-<UTC time it covers up to>.md`; a sibling `.ack` file says the operator saw it.
The loop writes one at every stop (unacknowledged: `dun status` counts them); `dun summary` prints what a fresh one
would say (everything since the last acknowledged report) and writes nothing; `dun ack` writes one covering up to
now and acknowledges all.
"""

from __future__ import annotations

import datetime
import json
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path

from dun.core.atomic import write_text_atomic
from dun.history.review import evidence_text, items
from dun.history.rows import iso
from dun.history.store import History
from dun.store.store import Store

MAX_LINES = 60
STAMP = "%Y%m%dT%H%M%S"


def reports_dir(root: Path) -> Path:
    return Store(root).reports_dir


def report_files(root: Path) -> list[Path]:
    directory = reports_dir(root)
    return sorted(directory.glob("report-*.md")) if directory.is_dir() else []


def ack_path(report: Path) -> Path:
    return report.with_suffix(".ack")


def covers_until(report: Path) -> float:
    """The time a report covers up to, from its name: report-20261123T075543.123Z.md."""
    text = report.stem.removeprefix("report-").split("-")[0].rstrip("Z")
    when, _, millis = text.partition(".")
    parsed = datetime.datetime.strptime(when, STAMP).replace(tzinfo=datetime.UTC)
    return parsed.timestamp() + int(millis or 0) / 1000


def unacknowledged(root: Path) -> list[Path]:
    return [p for p in report_files(root) if not ack_path(p).exists()]


def unacknowledged_count(root: Path) -> int:
    """For `dun status`: reports the operator has not acknowledged yet."""
    return len(unacknowledged(root))


def watermark(root: Path) -> float | None:
    """Where the next report starts: the end of the newest acknowledged report."""
    acked = [covers_until(p) for p in report_files(root) if ack_path(p).exists()]
    return max(acked) if acked else None


def _section(title: str, lines: list[str], cap: int) -> list[str]:
    if not lines:
        return []
    shown = lines[:cap] + ([f"- ... and {len(lines) - cap} more"] if len(lines) > cap else [])
    return ["", f"## {title}", *shown]


def build(history: History, since: float | None, until: float) -> list[str]:
    """The report's lines (never more than MAX_LINES)."""
    lo = since if since is not None else float("-inf")
    its = [it for it in history.iterations()
           if lo < float(it["ended_ts"] or it["started_ts"] or 0) <= until]
    runs = {r["run_id"]: r for r in history.runs()}
    touched = list(dict.fromkeys(it["run_id"] for it in its))
    stops = [r for r in runs.values() if r["ended_ts"] is not None and lo < r["ended_ts"] <= until]
    for r in stops:
        if r["run_id"] not in touched:
            touched.append(r["run_id"])
    cost = sum(it["cost_usd"] or 0 for it in its)
    head = ["# dun status report", "",
            f"Period: {iso(since) if since is not None else 'the first run'} to {iso(until)}",
            f"{len(its)} iteration(s) in {len(touched)} run(s), ${cost:.4f} spent."]
    run_lines = []
    for run_id in touched:
        r = runs.get(run_id) or {}
        mine = [it for it in its if it["run_id"] == run_id]
        span = f"checks {mine[0]['actionable_before']} -> {mine[-1]['actionable_after']} actionable" if mine else ""
        budget = f" of ${r['budget_usd']:.2f}" if r.get("budget_usd") else ""
        run_lines.append(f"- {run_id}: {r.get('status') or '?'}" + (f" ({r['stop_reason']})" if r.get("stop_reason")
                                                                     else "")
                         + f", {len(mine)} iteration(s) here, ${r.get('cost_usd') or 0:.4f}{budget} in all; {span}")
    passing = sorted({c for it in its for c in it["newly_passing"]})
    ticked = list(dict.fromkeys(b for it in its for b in it["boxes_ticked"]))
    commits = sum(it["commits"] or 0 for it in its)
    work = ([f"- checks now passing: {', '.join(passing)}"[:200]] if passing else []) + \
        [f"- box ticked: {b}"[:200] for b in ticked] + ([f"- {commits} commit(s)"] if commits else [])
    stop_lines = [f"- {r['ended_at']}: run {r['run_id']} {r['status']} ({r['stop_reason']})" for r in stops]
    open_items = items(history, ("open",))
    review = [f"- [{r['id']}] {r['title']} ({evidence_text(r['evidence'], 3)})"[:200] for r in open_items]
    problems = _problems(history, its, lo, until)
    needs = _section(f"Needs a person: {len(open_items)} open review item(s)", review, 15)
    needs += ["- `dun review` lists them; `dun ack ID` (seen) / `dun review dismiss ID`"] if review else []
    # most urgent first: when the 60 lines run out, what is cut is the least urgent
    lines = [*head, *needs, *_section("Stops", stop_lines, 8), *_section("Problems", problems, 8),
             *_section(f"Runs ({len(touched)})", run_lines, 10),
             *_section("Work done", work or ["- nothing verified as done"], 10)]
    if len(lines) > MAX_LINES:
        lines = [*lines[:MAX_LINES - 1], f"... {len(lines) - MAX_LINES + 1} more lines: `dun history`, `dun review`"]
    return lines


def _problems(history: History, its: Sequence[Mapping[str, object]], lo: float, until: float) -> list[str]:
    keys = {(it["run_id"], it["iteration"]) for it in its}
    kinds = Counter(d["kind"] for d in history.table("discrepancies") if (d["run_id"], d["iteration"]) in keys)
    errors = Counter(it["error_kind"] for it in its if it["error_kind"])
    denials = Counter(g["rule"] for g in history.query(
        "SELECT rule FROM guard_decisions WHERE decision = 'deny' AND ts > ? AND ts <= ?", (lo, until)))
    failed = history.query("SELECT event, channel, error FROM notifications WHERE ok = 0 AND ts > ? AND ts <= ?",
                           (lo, until))
    out = []
    if kinds:
        out.append("- unverified claims / tampering: " + ", ".join(f"{k} x{n}" for k, n in kinds.most_common()))
    if errors:
        out.append("- failed agent calls: " + ", ".join(f"{k} x{n}" for k, n in errors.most_common()))
    if denials:
        out.append("- guard denials: " + ", ".join(f"{k} x{n}" for k, n in denials.most_common(5)))
    if failed:
        out.append(f"- {len(failed)} notification(s) failed, last: {failed[-1]['channel']}: {failed[-1]['error']}")
    return [line[:200] for line in out]


def write(history: History, until: float | None = None) -> Path:
    """A new report covering the time since the last acknowledged one; not acknowledged."""
    until = time.time() if until is None else until
    root = history.root
    name = datetime.datetime.fromtimestamp(until, datetime.UTC).strftime(STAMP) + f".{int(until * 1000) % 1000:03d}Z"
    path = reports_dir(root) / f"report-{name}.md"
    n = 1
    while path.exists():
        n += 1
        path = reports_dir(root) / f"report-{name}-{n}.md"
    write_text_atomic(path, "\n".join(build(history, watermark(root), until)) + "\n")
    return path


def acknowledge(root: Path) -> list[Path]:
    """Mark every unacknowledged report seen; returns them."""
    pending = unacknowledged(root)
    for report in pending:
        write_text_atomic(ack_path(report), json.dumps({"acknowledged_at": iso(time.time())}) + "\n")
    return pending
