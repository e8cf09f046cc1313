"""The circuit breaker: CLOSED, HALF_OPEN, OPEN. Its state is a plain dict persisted in state.json."""

from __future__ import annotations

import time
from typing import Any

CLOSED, HALF_OPEN, OPEN = "CLOSED", "HALF_OPEN", "OPEN"


def new_circuit() -> dict[str, Any]:
    return {"state": CLOSED, "no_progress": 0, "same_error": 0, "last_error": None, "permission_denials": 0,
            "discrepancies": 0, "oscillations": 0, "opened_at": None, "reason": None}


def record(circuit: dict[str, Any], cfg: dict[str, Any], progress: bool, error: str | None, denials: int,
           limited: bool, now: float | None = None) -> dict[str, Any]:
    """Fold one iteration into the breaker. A rate or usage limit is waiting, not failing: it changes nothing.

    `error` is the normalized error text of a failed call (None when the call succeeded); a failed call counts as
    no progress whatever it changed.
    """
    c = {**new_circuit(), **circuit}
    if limited:
        return c
    progressed = progress and error is None
    if c.get("trial"):  # the first iteration after a cooldown decides: progress closes, anything else reopens
        c["trial"] = False
        if not progressed:
            return trip(c, c.get("reason") or "no_progress", now)
    c["no_progress"] = 0 if progressed else c["no_progress"] + 1
    if error is None:
        c["same_error"], c["last_error"] = 0, None
    else:
        c["same_error"] = c["same_error"] + 1 if error == c["last_error"] else 1
        c["last_error"] = error
    c["permission_denials"] = c["permission_denials"] + 1 if denials else 0
    reason = None
    if c["no_progress"] >= cfg["no_progress_limit"]:
        reason = "no_progress"
    elif c["same_error"] >= cfg["same_error_limit"]:
        reason = "same_error"
    elif c["permission_denials"] >= cfg["permission_denial_limit"]:
        reason = "permission_denied"
    if reason:
        return trip(c, reason, now)
    c["state"] = HALF_OPEN if c["no_progress"] >= cfg["half_open_after"] else CLOSED
    return c


def record_trust(circuit: dict[str, Any], cfg: dict[str, Any], discrepancies: int, oscillation: bool,
                 now: float | None = None) -> dict[str, Any]:
    """Discrepancies in a row, and oscillations in total, open the breaker too."""
    c = {**new_circuit(), **circuit}
    c["discrepancies"] = c["discrepancies"] + 1 if discrepancies else 0
    c["oscillations"] += 1 if oscillation else 0
    if c["state"] == OPEN:
        return c
    if c["discrepancies"] >= cfg["discrepancy_limit"]:
        return trip(c, "untrustworthy", now)
    if c["oscillations"] >= cfg["oscillation_limit"]:
        return trip(c, "oscillation", now)
    return c


def trip(circuit: dict[str, Any], reason: str, now: float | None = None) -> dict[str, Any]:
    return {**circuit, "state": OPEN, "reason": reason, "opened_at": now if now is not None else time.time()}


def on_start(circuit: dict[str, Any], cooldown_min: float, now: float) -> dict[str, Any]:
    """An OPEN circuit whose cooldown has passed becomes HALF_OPEN when a loop starts again."""
    c = {**new_circuit(), **circuit}
    if c["state"] == OPEN and c["opened_at"] is not None and now - c["opened_at"] >= cooldown_min * 60:
        c.update(state=HALF_OPEN, no_progress=0, same_error=0, permission_denials=0, discrepancies=0, trial=True)
    return c
