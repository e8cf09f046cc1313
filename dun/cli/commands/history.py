"""`dun history` and `dun history rebuild`: the runs in `.dun/history.db`, and recreating it from the logs."""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping, Sequence
from typing import Any

from dun.core.kinds import ExitCode
from dun.engine.session import open_session


def _run_line(run: dict[str, Any], its: Sequence[Mapping[str, object]]) -> str:
    budget = f"/${run['budget_usd']:.2f}" if run.get("budget_usd") else ""
    stop = f" ({run['stop_reason']})" if run.get("stop_reason") not in (None, run.get("status")) else ""
    checks = f"{its[0]['actionable_before']} -> {its[-1]['actionable_after']}" if its else "-"
    return (f"{run['run_id']:14}  {(run.get('started_at') or '-')[:19]:19}  {(run.get('status') or '?') + stop:28}  "
            f"{run.get('iterations') or 0:>5}  {'$' + format(run.get('cost_usd') or 0, '.4f') + budget:>16}  {checks}")


def run_history(path: str | None, as_json: bool) -> int:
    from dun.history import review
    from dun.loop.operator import refresh

    session = open_session(path)
    with refresh(session.root, session.settings.review) as history:
        runs = history.runs()
        its = history.iterations()
        open_items = review.items(history, ("open",))
    by_run: dict[str, list[dict[str, object]]] = {}
    for it in its:
        by_run.setdefault(it["run_id"], []).append(it)
    if as_json:
        out = {"runs": [{**r, "checks_before": (by_run.get(r["run_id"]) or [{}])[0].get("actionable_before"),
                         "checks_after": (by_run.get(r["run_id"]) or [{}])[-1].get("actionable_after")} for r in runs],
               "open_review_items": len(open_items)}
        sys.stdout.write(json.dumps(out, indent=2) + "\n")
        return ExitCode.OK
    if not runs:
        sys.stdout.write("no runs recorded yet (`dun loop` starts one)\n")
        return ExitCode.OK
    lines = [f"{'run':14}  {'started (UTC)':19}  {'status':28}  {'iter':>5}  {'cost':>16}  checks",
             *(_run_line(r, by_run.get(r["run_id"], [])) for r in runs)]
    if open_items:
        lines.append(f"{len(open_items)} open review item(s): `dun review`")
    sys.stdout.write("\n".join(lines) + "\n")
    return ExitCode.OK


def run_rebuild(path: str | None) -> int:
    from dun.history import review
    from dun.history.sync import rebuild

    session = open_session(path)
    history, aside = rebuild(session.root)
    with history:
        review.update(history, session.settings.review)
        counts = {t: history.conn.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0]
                  for t in ("runs", "iterations", "guard_decisions", "review_items")}
    kept = f"; the unreadable database was kept as {aside.name}" if aside else ""
    sys.stdout.write(f"rebuilt .dun/history.db from the logs: {counts['runs']} run(s), {counts['iterations']} "
                     f"iteration(s), {counts['guard_decisions']} guard decision(s), {counts['review_items']} review "
                     f"item(s){kept}\n")
    return ExitCode.OK
