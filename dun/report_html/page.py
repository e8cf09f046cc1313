"""`dun report`: one self-contained HTML file (plotly.js inline, no request to any server) that answers "what
happened tonight" from its top: the outcome in words and the command that goes on, the mission's boxes, the
commits and the boxes ticked, the open review items, one row per iteration linking to its prompt, answer and log,
then the plots of the last N runs. A region with nothing to show is one line, never an empty box."""

from __future__ import annotations

import html
import os
import time
from pathlib import Path
from typing import Any

from dun.core.atomic import write_text_atomic
from dun.history import review
from dun.history.store import History
from dun.report_html.figures import embed, figure, plotly, plotly_js
from dun.report_html.night import Night, Row, collect_night
from dun.report_html.series import collect
from dun.store.layout import dun_dir

STYLE = """
body { font-family: system-ui, sans-serif; margin: 20px 28px; color: #222; max-width: 1400px; }
h1 { font-size: 1.35em; margin: 0 0 2px; } h2 { font-size: 1.1em; margin: 18px 0 6px; }
.muted { color: #777; } .small { font-size: 0.85em; }
.outcome { border-left: 6px solid #888; background: #f6f6f6; padding: 10px 16px; margin: 12px 0; }
.outcome.complete { border-color: #2ca02c; } .outcome.stopped { border-color: #d62728; }
.outcome.running { border-color: #1f77b4; }
.headline { font-size: 1.25em; font-weight: 600; } .why { margin: 4px 0; }
.resume code { background: #fff; border: 1px solid #ccc; padding: 2px 6px; }
.stats { display: flex; flex-wrap: wrap; gap: 10px 28px; margin: 10px 0 4px; }
.stat b { display: block; font-size: 1.3em; } .stat span { color: #666; font-size: 0.85em; }
.cols { display: flex; flex-wrap: wrap; gap: 0 40px; } .cols > div { flex: 1 1 420px; }
ul { margin: 4px 0; padding-left: 20px; } li { margin: 2px 0; }
table { border-collapse: collapse; margin: 6px 0 12px; font-size: 0.9em; }
td, th { padding: 3px 8px; border-bottom: 1px solid #ddd; text-align: left; vertical-align: top; }
th { background: #f4f4f4; } td.num { text-align: right; white-space: nowrap; } td.nowrap { white-space: nowrap; }
a { color: #1f5fa6; }
"""


def _e(value: object) -> str:
    return html.escape("-" if value is None else str(value))


def _money(value: float | None) -> str:
    return "-" if value is None else f"${value:.4f}"


def _outcome(night: Night) -> str:
    run = night.run
    if run is None:
        return ("<div class='outcome'><div class='headline'>No run recorded yet.</div><div class='resume'>To start "
                "one: <code>dun loop</code></div></div>")
    kind = {"complete": "complete", "running": "running"}.get(str(run.get("status")), "stopped")
    resume = (f"<div class='resume'>To go on: {_code(night.resume)}</div>" if night.resume else "")
    return (f"<div class='outcome {kind}' id='outcome'><div class='headline'>{_e(night.headline)}</div>"
            f"<div class='why'>Why: {_e(night.why)}.</div>{resume}</div>")


def _code(text: str) -> str:
    """The resume hint with its `commands` as code."""
    parts = html.escape(text).split("`")
    return "".join(f"<code>{p}</code>" if i % 2 else p for i, p in enumerate(parts))


def _stats(night: Night) -> str:
    run = night.run or {}
    items = []
    if night.boxes_total:
        items.append((f"{night.boxes_done} of {night.boxes_total}",
                      f"mission boxes done ({night.boxes_before} before these runs)"))
    items += [(str(run.get("iterations") or 0), "iterations"),
              (f"${run.get('cost_usd') or 0:.2f}" + (f" / ${run['budget_usd']:.2f}" if run.get("budget_usd") else ""),
               "spent" + (" of the budget" if run.get("budget_usd") else " (no cap)")),
              (str(len(night.commits)), "commits"), (str(len(night.ticked)), "boxes ticked")]
    if night.rows:
        first, last = night.rows[0].checks.split(" → ")[0], night.rows[-1].checks.split(" → ")[-1]
        items.append((f"{first} → {last}", "actionable checks"))
    cells = "".join(f"<div class='stat'><b>{_e(big)}</b><span>{_e(small)}</span></div>" for big, small in items)
    return f"<div class='stats' id='stats'>{cells}</div>"


def _work(night: Night) -> str:
    if not night.commits and not night.ticked:
        return "<p id='work'>No commits and no boxes ticked in these runs.</p>"
    commits = "".join(f"<li><code>{_e(c.split(' ', 1)[0])}</code> {_e(c.partition(' ')[2])} "
                      f"<span class='muted'>({_e(at)})</span></li>" for at, c in night.commits)
    boxes = "".join(f"<li>☑ {_e(box)} <span class='muted'>({_e(at)})</span></li>" for at, box in night.ticked)
    return (f"<div class='cols' id='work'><div><h2>Commits ({len(night.commits)})</h2>"
            f"{f'<ul>{commits}</ul>' if commits else '<p class=muted>None.</p>'}</div>"
            f"<div><h2>Boxes ticked ({len(night.ticked)})</h2>"
            f"{f'<ul>{boxes}</ul>' if boxes else '<p class=muted>None.</p>'}</div></div>")


def _review(items: list[dict[str, Any]]) -> str:
    if not items:
        return "<p class='muted'>No open review items.</p>"
    rows = "".join(f"<tr><td><code>{_e(r['id'])}</code></td><td>{_e(r['title'])}</td><td>{_e(r['detail'])}</td>"
                   f"<td>{_e(review.evidence_text(r['evidence']))}</td></tr>" for r in items)
    return (f"<h2>Needs a person: {len(items)} open review item(s)</h2><table><tr><th>id</th><th>finding</th>"
            f"<th>detail</th><th>evidence</th></tr>{rows}</table><p class='muted small'><code>dun ack ID</code>: "
            "seen; <code>dun review dismiss ID</code>: not a problem.</p>")


FILES = ("prompt", "answer", "stderr", "log")  # the link texts; stderr only where the agent wrote some


def _link(row: Row, what: str, base: Path) -> str:
    path = row.files.get(what)
    if path is None:
        return ""
    return f"<a href='{html.escape(Path(os.path.relpath(path, base)).as_posix())}'>{what}</a>"


def _iterations(rows: list[Row], base: Path) -> str:
    if not rows:
        return "<p class='muted'>No iterations recorded yet.</p>"
    days = {r.started[:10] for r in rows}
    one_day = len(days) == 1  # the date once, in the heading; each row its time
    body = "".join(
        f"<tr><td>{_e(r.label)}</td><td class='nowrap'>{_e(r.started[11:] if one_day else r.started)}</td>"
        f"<td class='num'>{'-' if r.duration_s is None else f'{r.duration_s:.0f}s'}</td>"
        f"<td class='num'>{_money(r.cost)}</td><td>{_e(r.claim)}</td>"
        f"<td>{_e('; '.join(r.ticked) or '')}</td><td class='num'>{len(r.commits) or ''}</td><td>{_e(r.checks)}</td>"
        f"<td>{_e(r.verdict)}</td><td>{_e(r.decision)}</td>"
        f"<td class='nowrap'>{' '.join(filter(None, (_link(r, w, base) for w in FILES)))}</td></tr>"
        for r in rows)
    return ("<table id='iterations'><tr><th>#</th>"
            f"<th>started (UTC{', ' + _e(days.pop()) if one_day else ''})</th><th>took</th><th>cost</th>"
            "<th>agent said</th><th>boxes ticked</th><th>commits</th><th>checks</th><th>dun found</th><th>decision</th>"
            "<th>files</th>"
            f"</tr>{body}</table>")


def _runs_table(runs: list[dict[str, object]]) -> str:
    rows = "".join(
        f"<tr><td>{_e(r['run_id'])}</td><td>{_e(r['started_at'])}</td><td>{_e(r['status'])}</td>"
        f"<td>{_e(r['stop_reason'])}</td><td class='num'>{_e(r['iterations'])}</td>"
        f"<td class='num'>${(r['cost_usd'] or 0):.4f}</td>"
        f"<td>{'$' + format(r['budget_usd'], '.2f') if r['budget_usd'] else 'no cap'}</td></tr>" for r in runs)
    return ("<h2>Runs</h2><table><tr><th>run</th><th>started (UTC)</th><th>status</th><th>stop reason</th>"
            f"<th>iterations</th><th>cost</th><th>budget</th></tr>{rows}</table>")


def render(history: History, last_runs: int, base: Path | None = None) -> str:
    """The page; `base` is the directory it is written to (the iterations' file links are relative to it)."""
    plotly()  # fail before any work when plotly is missing
    s = collect(history, last_runs)
    night = collect_night(history, last_runs, len(s.runs) > 1)
    items = review.items(history, ("open",))
    run_id = night.run["run_id"] if night.run else None
    title = f"dun: {history.root.name}" + (f", run {run_id}" if run_id else "")
    body = [f"<h1>{_e(title)}</h1>",
            f"<p class='muted small'>Generated {_e(time.strftime('%Y-%m-%d %H:%M:%S %Z'))} by <code>dun report</code> "
            "from .dun/history.db and the run's logs.</p>",
            _outcome(night), _stats(night), _work(night), _review(items),
            f"<h2>Iterations ({len(night.rows)})</h2>", _iterations(night.rows, base or dun_dir(history.root))]
    if len(s.runs) > 1:
        body.append(_runs_table(s.runs))
    if s.labels:
        body += ["<h2>Over the night</h2>", embed(figure(s, night.progress, night.boxes_total), "dun-timeline")]
    return ("<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
            f"<meta name='viewport' content='width=device-width'><title>{_e(title)}</title><style>{STYLE}</style>"
            f"<script>{plotly_js()}</script></head><body>{''.join(body)}</body></html>\n")


def write_html(history: History, target: Path, last_runs: int = 1) -> int:
    """Write the report (atomically); returns its size in bytes."""
    text = render(history, last_runs, target.parent)
    write_text_atomic(target, text)
    return len(text.encode("utf-8"))
