"""The numbers the HTML report plots, taken from the history database: plain lists, one entry per iteration, in
the order the iterations ran (so they can be tested without a plotting library)."""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from dun.history.store import History


@dataclass
class Marker:
    x: str  # the iteration's label
    lane: str  # discrepancy | guard denial | agent error | wait | stop
    text: str


@dataclass
class Series:
    runs: list[dict[str, object]]
    labels: list[str] = field(default_factory=list)
    run_of: list[str] = field(default_factory=list)  # the run of each iteration
    cost: list[float | None] = field(default_factory=list)
    cumulative: list[float] = field(default_factory=list)
    budget: list[float | None] = field(default_factory=list)
    actionable: list[int | None] = field(default_factory=list)
    duration_min: list[float | None] = field(default_factory=list)
    wait_min: list[float] = field(default_factory=list)
    checks: list[str] = field(default_factory=list)
    failing: list[list[int | None]] = field(default_factory=list)  # per check, per iteration: 1 fail, 0 pass
    markers: list[Marker] = field(default_factory=list)
    hover: list[str] = field(default_factory=list)


def label(run_id: str, iteration: int, several: bool) -> str:
    return f"{run_id[:6]}#{iteration}" if several else f"#{iteration}"


def collect(history: History, last_runs: int) -> Series:
    runs = history.runs(limit=last_runs)
    ids = [r["run_id"] for r in runs]
    its = history.iterations(ids)
    s = Series(runs=runs)
    several = len(runs) > 1
    budget = {r["run_id"]: r["budget_usd"] for r in runs}
    where = {}
    spent: dict[str, float] = defaultdict(float)
    for it in its:
        x = label(it["run_id"], it["iteration"], several)
        where[(it["run_id"], it["iteration"])] = x
        s.labels.append(x)
        s.run_of.append(it["run_id"])
        s.cost.append(it["cost_usd"])
        spent[it["run_id"]] += it["cost_usd"] or 0.0
        s.cumulative.append(round(spent[it["run_id"]], 6))
        s.budget.append(budget.get(it["run_id"]))
        s.actionable.append(it["actionable_after"])
        s.duration_min.append(round(it["duration_s"] / 60, 3) if it["duration_s"] is not None else None)
        s.wait_min.append(round((it["wait_s"] or 0) / 60, 3) if it["decision_action"] == "wait" else 0.0)
        block = it["status_block"] or {}
        s.hover.append(f"{it['run_id']} iteration {it['iteration']}<br>{block.get('status') or 'no status block'} "
                       f"{block.get('task_completed') or ''}<br>{it['decision_action']} ({it['decision_reason']})")
        if it["error_kind"]:
            s.markers.append(Marker(x, "agent error", f"{it['error_kind']}: {(it['error'] or '')[:120]}"))
    _checks(history, ids, its, where, s)
    for d in history.table("discrepancies", ids):
        if (d["run_id"], d["iteration"]) in where:
            s.markers.append(Marker(where[(d["run_id"], d["iteration"])], "discrepancy",
                                    f"{d['kind']}: {(d['detail'] or '')[:160]}"))
    for g in history.query(f"SELECT * FROM guard_decisions WHERE decision = 'deny' AND run_id IN "
                           f"({', '.join('?' for _ in ids)}) ORDER BY ts", ids):
        at = where.get((g["run_id"], g["iteration"]))
        if at:
            s.markers.append(Marker(at, "guard denial", f"{g['rule']}: {(g['command'] or g['path'] or '')[:120]}"))
    for e in history.table("events", ids):
        detail = json.loads(e["detail"] or "{}")
        at = where.get((e["run_id"], detail.get("iteration")))
        if e["kind"] == "wait" and at:
            s.markers.append(Marker(at, "wait", f"{detail.get('reason')}: {float(detail.get('wait_s') or 0) / 60:.1f} "
                                    "min"))
    last = {}
    for it in its:
        last[it["run_id"]] = where[(it["run_id"], it["iteration"])]
    for r in runs:
        if r["stop_reason"] and r["run_id"] in last:
            s.markers.append(Marker(last[r["run_id"]], "stop", str(r["stop_reason"])))
    return s


def _checks(history: History, ids: list[str], its: list[dict[str, Any]], where: dict[tuple[str, int], str],
            s: Series) -> None:
    """Per check: failing (1) or passing (0) after each iteration; None where the run never listed it."""
    failing: dict[tuple[str, int], set[str]] = defaultdict(set)
    seen: dict[str, set[str]] = defaultdict(set)  # run -> checks it listed
    for row in history.table("check_results", ids):
        seen[row["run_id"]].add(row["check_id"])
        if row["failing_after"]:
            failing[(row["run_id"], row["iteration"])].add(row["check_id"])
    s.checks = sorted(set().union(*seen.values())) if seen else []
    ended = [it for it in its if (it["run_id"], it["iteration"]) in where]
    for check in s.checks:
        s.failing.append([(1 if check in failing[(it["run_id"], it["iteration"])] else 0)
                          if check in seen[it["run_id"]] and it["actionable_after"] is not None else None
                          for it in ended])
