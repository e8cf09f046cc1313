"""The events dun notifies about, and the title and text a person reads on their phone for each."""

from __future__ import annotations

import time
from typing import Any

from dun.core.kinds import NotifyEvent

EVENTS = tuple(str(event) for event in NotifyEvent)


def _when(epoch: Any) -> str:
    if not isinstance(epoch, int | float) or isinstance(epoch, bool):
        return "an unknown time"
    return time.strftime("%Y-%m-%d %H:%M:%S %Z", time.localtime(epoch))


def _money(value: Any) -> str:
    return f"${value:.2f}" if isinstance(value, int | float) and not isinstance(value, bool) else "$?"


def render(event: str, payload: dict[str, Any]) -> tuple[str, str]:
    """(title, body) for an event; the body is plain text, a few lines at most."""
    run = str(payload.get("run_id") or "?")
    repo = payload.get("repo") or ""
    where = f" in {repo}" if repo else ""
    spent = f"{payload.get('iterations', '?')} iteration(s), {_money(payload.get('cost_usd'))} spent"
    if event == "complete":
        return f"dun: run {run} complete", f"The mission is done{where}: {spent}."
    if event == "stopped":
        reason = payload.get("reason") or "unknown"
        return f"dun: run {run} stopped ({reason})", f"The loop stopped{where}: {reason}, after {spent}. " \
            "Work remains; `dun status` and .dun/REPORT.md say more."
    if event == "circuit_open":
        why = payload.get("circuit_reason") or "no progress"
        return f"dun: circuit open in run {run}", f"The circuit breaker opened{where} ({why}) after {spent}; " \
            "the loop stopped. `dun loop --reset-circuit` starts again."
    if event == "waiting":
        reason = payload.get("reason") or "usage_limit"
        return f"dun: run {run} waiting ({reason})", f"The loop is waiting{where} on {reason} until " \
            f"{_when(payload.get('resume_at'))}, then resumes by itself."
    if event == "budget":
        return f"dun: {payload.get('percent', 80):.0f}% of the budget spent in run {run}", \
            f"{_money(payload.get('cost_usd'))} of {_money(payload.get('budget_usd'))} spent{where} after " \
            f"{payload.get('iterations', '?')} iteration(s)."
    if event == "tampering":
        kinds = ", ".join(payload.get("kinds") or []) or "discrepancy"
        lines = [f"- {d}" for d in (payload.get("details") or [])[:5]]
        return f"dun: unverified claims or tampering in run {run} ({kinds})", "\n".join(
            [f"Iteration {payload.get('iteration', '?')}{where}: {kinds}.", *lines])
    if event == "deficiency":
        return f"dun: review item {payload.get('id', '?')}: {payload.get('title', '')}"[:200], \
            f"{payload.get('detail', '')}\nSeen in {payload.get('evidence', '')}{where}. " \
            f"`dun review` lists it; `dun review ack {payload.get('id', 'ID')}` or `dismiss` settles it."
    return f"dun: {event} in run {run}", str(payload)[:500]
