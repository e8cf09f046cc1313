"""The circuit breaker: CLOSED, HALF_OPEN, OPEN. Its state is a `Breaker` (the loop state's `circuit`, persisted in
state.json); each step returns a new one."""

from __future__ import annotations

import dataclasses
import time
from typing import TYPE_CHECKING

from dun.core.kinds import CircuitReason, CircuitState
from dun.store.state import Breaker

if TYPE_CHECKING:
    from dun.config import sections

CLOSED, HALF_OPEN, OPEN = CircuitState.CLOSED, CircuitState.HALF_OPEN, CircuitState.OPEN
__all__ = ["CLOSED", "HALF_OPEN", "OPEN", "Breaker", "new_circuit", "on_start", "record", "record_trust", "trip"]


def new_circuit() -> Breaker:
    return Breaker()


def record(circuit: Breaker, limits: sections.Circuit, progress: bool, error: str | None, denials: int,
           limited: bool, now: float | None = None) -> Breaker:
    """Fold one iteration into the breaker. A rate or usage limit is waiting, not failing: it changes nothing.

    `error` is the normalized error text of a failed call (None when the call succeeded); a failed call counts as
    no progress whatever it changed.
    """
    c = dataclasses.replace(circuit)
    if limited:
        return c
    progressed = progress and error is None
    if c.trial:  # the first iteration after a cooldown decides: progress closes, anything else reopens
        c.trial = False
        if not progressed:
            return trip(c, c.reason or CircuitReason.NO_PROGRESS, now)
    c.no_progress = 0 if progressed else c.no_progress + 1
    if error is None:
        c.same_error, c.last_error = 0, None
    else:
        c.same_error = c.same_error + 1 if error == c.last_error else 1
        c.last_error = error
    c.permission_denials = c.permission_denials + 1 if denials else 0
    reason = None
    if c.no_progress >= limits.no_progress_limit:
        reason = CircuitReason.NO_PROGRESS
    elif c.same_error >= limits.same_error_limit:
        reason = CircuitReason.SAME_ERROR
    elif c.permission_denials >= limits.permission_denial_limit:
        reason = CircuitReason.PERMISSION_DENIED
    if reason:
        return trip(c, reason, now)
    c.state = HALF_OPEN if c.no_progress >= limits.half_open_after else CLOSED
    return c


def record_trust(circuit: Breaker, limits: sections.Circuit, discrepancies: int, oscillation: bool,
                 now: float | None = None) -> Breaker:
    """Discrepancies in a row, and oscillations in total, open the breaker too."""
    c = dataclasses.replace(circuit)
    c.discrepancies = c.discrepancies + 1 if discrepancies else 0
    c.oscillations += 1 if oscillation else 0
    if c.state == OPEN:
        return c
    if c.discrepancies >= limits.discrepancy_limit:
        return trip(c, CircuitReason.UNTRUSTWORTHY, now)
    if c.oscillations >= limits.oscillation_limit:
        return trip(c, CircuitReason.OSCILLATION, now)
    return c


def trip(circuit: Breaker, reason: str, now: float | None = None) -> Breaker:
    return dataclasses.replace(circuit, state=OPEN, reason=reason, opened_at=now if now is not None else time.time())


def on_start(circuit: Breaker, cooldown_min: float, now: float) -> Breaker:
    """An OPEN circuit whose cooldown has passed becomes HALF_OPEN when a loop starts again."""
    c = dataclasses.replace(circuit)
    opened = c.opened_at
    if c.state == OPEN and opened is not None and now - opened >= cooldown_min * 60:
        c = dataclasses.replace(c, state=HALF_OPEN, no_progress=0, same_error=0, permission_denials=0,
                                discrepancies=0, trial=True)
    return c
