"""`dun report --html`: one self-contained HTML file (plotly.js inline, no request to any server) with the
runs, the open review items and the plots of the last N runs."""

from __future__ import annotations

import html
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from dun.core.atomic import write_text_atomic
from dun.history import review
from dun.history.store import History
from dun.report_html.figures import embed, figure, plotly, plotly_js
from dun.report_html.series import collect

STYLE = """
body { font-family: system-ui, sans-serif; margin: 24px; color: #222; }
table { border-collapse: collapse; margin: 8px 0 16px; } td, th { padding: 3px 10px; border-bottom: 1px solid #ddd;
text-align: left; } th { background: #f4f4f4; } .muted { color: #777; } h1 { font-size: 1.4em; }
"""


def _e(value: object) -> str:
    return html.escape("-" if value is None else str(value))


def _runs_table(runs: Sequence[Mapping[str, object]]) -> str:
    rows = "".join(
        f"<tr><td>{_e(r['run_id'])}</td><td>{_e(r['started_at'])}</td><td>{_e(r['status'])}</td>"
        f"<td>{_e(r['stop_reason'])}</td><td>{_e(r['iterations'])}</td><td>${(r['cost_usd'] or 0):.4f}</td>"
        f"<td>{'$' + format(r['budget_usd'], '.2f') if r['budget_usd'] else 'no cap'}</td></tr>" for r in runs)
    return ("<table><tr><th>run</th><th>started (UTC)</th><th>status</th><th>stop reason</th><th>iterations</th>"
            f"<th>cost</th><th>budget</th></tr>{rows}</table>")


def _review_list(items: list[dict[str, Any]]) -> str:
    if not items:
        return "<p class='muted'>No open review items.</p>"
    rows = "".join(f"<tr><td><code>{_e(r['id'])}</code></td><td>{_e(r['title'])}</td><td>{_e(r['detail'])}</td>"
                   f"<td>{_e(review.evidence_text(r['evidence']))}</td></tr>" for r in items)
    return f"<table><tr><th>id</th><th>finding</th><th>detail</th><th>evidence</th></tr>{rows}</table>"


def render(history: History, last_runs: int) -> str:
    plotly()  # fail before any work when the extra is missing
    s = collect(history, last_runs)
    items = review.items(history, ("open",))
    title = f"dun: {history.root.name}, {len(s.runs)} run(s)"
    body = [f"<h1>{_e(title)}</h1>",
            f"<p class='muted'>Generated {_e(time.strftime('%Y-%m-%d %H:%M:%S %Z'))} by <code>dun report --html"
            f"</code> from .dun/history.db.</p>", "<h2>Runs</h2>", _runs_table(s.runs),
            f"<h2>Open review items ({len(items)})</h2>", _review_list(items), "<h2>Iterations</h2>"]
    if s.labels:
        body.append(embed(figure(s), "dun-timeline"))
    else:
        body.append("<p class='muted'>No iterations recorded yet.</p>")
    return ("<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
            f"<meta name='viewport' content='width=device-width'><title>{_e(title)}</title><style>{STYLE}</style>"
            f"<script>{plotly_js()}</script></head><body>{''.join(body)}</body></html>\n")


def write_html(history: History, target: Path, last_runs: int = 1) -> int:
    """Write the report (atomically); returns its size in bytes."""
    text = render(history, last_runs)
    write_text_atomic(target, text)
    return len(text.encode("utf-8"))
