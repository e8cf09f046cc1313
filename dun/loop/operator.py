"""What the loop engine calls (both drivers: `dun loop` and `dun respond --decide`), and when:

    on_run_start(root, state, cfg)             after `begin` saved the state of a new or resumed run
    on_iteration(root, log, state, cfg)        after `conclude` wrote .dun/logs/iteration-N.json and saved the state
    on_wait(root, state, cfg, reason, wait_s)  when the loop is about to wait (a usage limit, the hourly call limit)
    on_stop(root, state, cfg)                  after `finish` saved the stopped state and wrote REPORT.md

`cfg` is the effective config values (`effective_config(...)`). None of them raises: the loop must never stop
because its history or a notification failed; a failure is one line on stderr, and the JSON files still hold
everything (`dun history rebuild`).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from dun.history import review
from dun.history.rows import LIMIT_KINDS, discrepancies
from dun.history.store import History
from dun.history.sync import ingest_streams, sync
from dun.store.store import Store


def _guarded(what: str, fn: Callable[[], None]) -> None:
    try:
        fn()
    except Exception as exc:
        sys.stderr.write(f"dun: history ({what}) not updated: {type(exc).__name__}: {exc}".splitlines()[0] + "\n")


def _payload(root: Path, state: dict[str, Any], cfg: dict[str, Any]) -> dict[str, Any]:
    cap = (cfg.get("loop") or {}).get("max_budget_usd") or 0
    return {"run_id": state.get("run_id"), "repo": root.name, "iterations": state.get("iteration"),
            "cost_usd": state.get("cost_usd_total"), "budget_usd": cap or None}


def _deficiencies(history: History, root: Path, state: dict[str, Any], cfg: dict[str, Any]) -> None:
    """New findings become review items, each notified once."""
    from dun import notify

    fresh = review.update(history, cfg)
    for finding in fresh:
        notify.emit(root, "deficiency", {**_payload(root, state, cfg), **finding.to_dict(),
                                         "evidence": review.evidence_text(finding.evidence)}, cfg)
    if fresh:
        review.mark_notified(root, [f.id for f in fresh])


def on_run_start(root: Path, state: dict[str, Any], cfg: dict[str, Any]) -> None:
    def run() -> None:
        with History.open(root) as history:
            history.record_run(state)
            sync(history)  # the archived run and anything a previous failure left out

    _guarded("run start", run)


def on_iteration(root: Path, log: dict[str, Any], state: dict[str, Any], cfg: dict[str, Any]) -> None:
    """Record the iteration (and the guard decisions made during it), run the detector, notify."""
    from dun import notify

    def run() -> None:
        with History.open(root) as history:
            with history.transaction():
                history.record_iteration(log)
                history.record_run(state)
                # the guard's decisions of this iteration; the logs are caught up at the run's start and stop
                ingest_streams(history, Store(root).logs_dir, str(state.get("run_id") or ""))
            found = discrepancies(log)
            if found:
                notify.emit(root, "tampering", {**_payload(root, state, cfg), "iteration": log.get("iteration"),
                                                "kinds": sorted({str(d.get("kind")) for d in found}),
                                                "details": [str(d.get("detail")) for d in found]}, cfg)
            cap = (cfg.get("loop") or {}).get("max_budget_usd") or 0
            share = float((cfg.get("notify") or {}).get("budget_fraction", 0.8))
            spent = float(state.get("cost_usd_total") or 0)
            if cap > 0 and spent >= share * cap and not history.sent(state.get("run_id"), "budget"):
                notify.emit(root, "budget", {**_payload(root, state, cfg), "percent": 100 * spent / cap}, cfg)
            _deficiencies(history, root, state, cfg)

    _guarded("iteration", run)


def on_wait(root: Path, state: dict[str, Any], cfg: dict[str, Any], reason: str, wait_s: float) -> None:
    """Record the wait; notify when it is a rate or usage limit (the hourly call limit is dun's own pacing)."""
    from dun import notify
    from dun.history.events import append

    def run() -> None:
        resume_at = time.time() + wait_s
        append(root, {"run_id": state.get("run_id"), "kind": "wait", "reason": reason, "wait_s": round(wait_s, 1),
                      "resume_at": round(resume_at, 3), "iteration": state.get("iteration")})
        if reason in LIMIT_KINDS:
            notify.emit(root, "waiting", {**_payload(root, state, cfg), "reason": reason, "resume_at": resume_at},
                        cfg)

    _guarded("wait", run)


def on_stop(root: Path, state: dict[str, Any], cfg: dict[str, Any]) -> None:
    """Record the stop, write an (unacknowledged) status report, notify complete / circuit_open / stopped."""
    from dun import notify
    from dun.history import reports

    def run() -> None:
        with History.open(root) as history:
            history.record_stop(state)
            sync(history)
            _deficiencies(history, root, state, cfg)
            reports.write(history)
        reason = str(state.get("stop_reason") or "stopped")
        from dun.loop.report import resume_hint

        payload = {**_payload(root, state, cfg), "reason": reason,
                   "circuit_reason": (state.get("circuit") or {}).get("reason"),
                   "detail": state.get("stop_detail"), "next": resume_hint(reason)}
        event = "complete" if reason == "complete" else "circuit_open" if reason == "circuit_open" else "stopped"
        notify.emit(root, event, payload, cfg)

    _guarded("stop", run)


def refresh(root: Path, cfg: dict[str, Any] | None) -> History:
    """The history, caught up with the files and the detector (what every history command reads)."""
    history = History.open(root)
    try:
        sync(history)
        review.update(history, cfg)
    except BaseException:
        history.close()
        raise
    return history
