"""The events dun notifies about, and the title and text a person reads on their phone for each."""

from __future__ import annotations

import time
from typing import Any

from dun.core.kinds import DiscrepancyKind, NotifyEvent

EVENTS = tuple(str(event) for event in NotifyEvent)
# what the agent did to the judge; the other discrepancy kinds are claims dun could not verify
TAMPER_KINDS = {str(DiscrepancyKind.TASK_TAMPERED), str(DiscrepancyKind.CHECKER_TAMPERED),
                str(DiscrepancyKind.TESTS_REMOVED)}


def _when(epoch: object) -> str:
    if not isinstance(epoch, int | float) or isinstance(epoch, bool):
        return "an unknown time"
    return time.strftime("%Y-%m-%d %H:%M:%S %Z", time.localtime(epoch))


def _money(value: object) -> str:
    return f"${value:.2f}" if isinstance(value, int | float) and not isinstance(value, bool) else "$?"


def render(event: str, payload: dict[str, object]) -> tuple[str, str]:
    """(title, body) for an event; the title names the repository and the host, the body is plain text, a few
    lines at most."""
    title, body = _render(event, payload)
    if event in ("stopped", "circuit_open") and payload.get("detail"):
        body += f"\nWhy: {payload['detail']}."
    if event in ("stopped", "circuit_open") and payload.get("next"):
        body += f"\nTo go on: {payload['next']}."
    who = f"{payload.get('repo') or '?'}@{payload.get('host') or '?'}"  # which of several loops, on which machine
    return f"dun {who}: {title}"[:200], body


def _render(event: str, payload: dict[str, Any]) -> tuple[str, str]:
    run = str(payload.get("run_id") or "?")
    repo = payload.get("repo") or ""
    where = f" in {repo}" if repo else ""
    spent = f"{payload.get('iterations', '?')} iteration(s), {_money(payload.get('cost_usd'))} spent"
    if event == "complete":
        return f"run {run} complete", f"The mission is done{where}: {spent}."
    if event == "stopped":
        reason = payload.get("reason") or "unknown"
        return f"run {run} stopped ({reason})", f"The loop stopped{where}: {reason}, after {spent}. " \
            "`dun status` and .dun/REPORT.md say more."
    if event == "circuit_open":
        why = payload.get("circuit_reason") or "no progress"
        return f"circuit open in run {run}", f"The circuit breaker opened{where} ({why}) after {spent}; " \
            "the loop stopped."
    if event == "waiting":
        reason = payload.get("reason") or "usage_limit"
        return f"run {run} waiting ({reason})", f"The loop is waiting{where} on {reason} until " \
            f"{_when(payload.get('resume_at'))}, then resumes by itself."
    if event == "budget":
        return f"{payload.get('percent', 80):.0f}% of the budget spent in run {run}", \
            f"{_money(payload.get('cost_usd'))} of {_money(payload.get('budget_usd'))} spent{where} after " \
            f"{payload.get('iterations', '?')} iteration(s)."
    if event == "tampering":
        kinds = ", ".join(payload.get("kinds") or []) or "discrepancy"
        lines = [f"- {d}" for d in (payload.get("details") or [])[:5]]
        tampered = set(payload.get("kinds") or []) & TAMPER_KINDS
        what = "tampering" if tampered else "unverified claims"
        return f"{what} in run {run} ({kinds})", "\n".join(
            [f"Iteration {payload.get('iteration', '?')}{where}: {kinds}.", *lines])
    if event == "deficiency":
        return f"review item {payload.get('id', '?')}: {payload.get('title', '')}"[:150], \
            f"{payload.get('detail', '')}\nSeen in {payload.get('evidence', '')}{where}. " \
            f"`dun review` lists it; `dun ack {payload.get('id', 'ID')}` or `dun review dismiss` settles it."
    return f"{event} in run {run}", str(payload)[:500]
