"""What the loop engine calls (both drivers: `dun loop` and `dun respond --decide`), and when:

    on_run_start(root, state, settings)         after `begin` saved the state of a new or resumed run
    on_iteration(root, log, state, settings)    after `conclude` wrote .dun/logs/iteration-N.json and saved the state
    on_wait(root, state, settings, reason, s)   when the loop is about to wait (a usage limit, the hourly call limit)
    on_stop(root, state, settings)              after `finish` saved the stopped state and wrote REPORT.md

`settings` is the run's typed config, flags applied (`effective_config(...)`); `redactor` the run's (its store's: the
config's `secrets.patterns`, the fleet store's password), which cleans what they write. None of them raises: the loop
must never stop because its history or a notification failed; a failure is one line on stderr, and the JSON files
still hold everything (`dun history rebuild`).
"""

from __future__ import annotations

import functools
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dun.fleet import identity
from dun.history import review
from dun.history.incremental import Detector
from dun.history.rows import LIMIT_KINDS, discrepancies
from dun.history.store import History
from dun.history.sync import ingest_streams, sync
from dun.store.store import Store

if TYPE_CHECKING:
    from dun.config.sections import Review, Settings
    from dun.core.redact import Redactor


def _guarded(what: str, fn: Callable[[], None]) -> None:
    try:
        fn()
    except Exception as exc:
        sys.stderr.write(f"dun: history ({what}) not updated: {type(exc).__name__}: {exc}".splitlines()[0] + "\n")


def _payload(root: Path, state: Mapping[str, object], settings: Settings) -> dict[str, object]:
    cap = settings.loop.max_budget_usd
    return {"run_id": state.get("run_id"), "repo": _who(root), "host": identity.host(),
            "iterations": state.get("iteration"), "cost_usd": state.get("cost_usd_total"), "budget_usd": cap or None}


@functools.lru_cache(maxsize=8)
def _who(root: Path) -> str:
    """The repository a notification names: `owner/name` from its origin (every pod's clone is /work/repo), and the
    worktree when the loop runs in one."""
    from dun.fleet.worktrees import main_root

    name = identity.repository(root)
    try:
        linked = main_root(root).resolve() != root.resolve()
    except Exception:  # not a git repository, or git missing: no worktree to name
        linked = False
    return f"{name} ({root.name})" if linked else name


def _deficiencies(history: History, root: Path, state: Mapping[str, object], settings: Settings,
                  detector: Detector | None, redactor: Redactor | None, resumed: bool = False) -> None:
    """New findings become review items, each notified once. `resumed`: the detector is the one the store keeps
    (`.dun/detector.state`), for a driver that starts a process per step: read back, run, and kept again."""
    from dun import notify

    if resumed:
        from dun.history.resume import resume, to_record

        detector = resume(Store(root).read_detector(), history)
        try:
            fresh = review.update(history, settings.review, detector)
        except Exception:  # a record of the right shape holding what the detector cannot use: a whole read
            detector = Detector()
            fresh = review.update(history, settings.review, detector)
    else:
        fresh = review.update(history, settings.review, detector)
    if resumed and detector is not None:
        record = to_record(detector)
        if record is not None:
            Store(root).write_detector(record)
    for finding in fresh:
        notify.emit(root, "deficiency", {**_payload(root, state, settings), **finding.to_dict(),
                                         "evidence": review.evidence_text(finding.evidence)}, settings.notify,
                    redactor)
    if fresh:
        review.mark_notified(root, [f.id for f in fresh])


def on_run_start(root: Path, state: Mapping[str, object], settings: Settings) -> None:
    def run() -> None:
        with History.open(root) as history:
            history.record_run(state)
            sync(history)  # the archived run and anything a previous failure left out

    _guarded("run start", run)


def on_iteration(root: Path, log: dict[str, object], state: dict[str, Any], settings: Settings,
                 detector: Detector | None = None, redactor: Redactor | None = None, resumed: bool = False) -> None:
    """Record the iteration (and the guard decisions made during it), run the detector, notify. `detector`: the
    run's own, kept between iterations, so each reads only the rows added since (a full read grows with the
    history: hundreds of ms and MB at 1,000 iterations); `resumed`: the one the store keeps, for the shell driver."""
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
                notify.emit(root, "tampering", {**_payload(root, state, settings), "iteration": log.get("iteration"),
                                                "kinds": sorted({str(d.get("kind")) for d in found}),
                                                "details": [str(d.get("detail")) for d in found]}, settings.notify,
                            redactor)
            cap = settings.loop.max_budget_usd
            share = settings.notify.budget_fraction
            spent = float(state.get("cost_usd_total") or 0)
            if cap > 0 and spent >= share * cap and not history.sent(state.get("run_id"), "budget"):
                notify.emit(root, "budget", {**_payload(root, state, settings), "percent": 100 * spent / cap},
                            settings.notify, redactor)
            _deficiencies(history, root, state, settings, detector, redactor, resumed)

    _guarded("iteration", run)


def on_wait(root: Path, state: Mapping[str, object], settings: Settings, reason: str, wait_s: float,
            redactor: Redactor | None = None) -> None:
    """Record the wait; notify when it is a rate or usage limit (the hourly call limit is dun's own pacing)."""
    from dun import notify
    from dun.history.events import append

    def run() -> None:
        resume_at = time.time() + wait_s
        append(root, {"run_id": state.get("run_id"), "kind": "wait", "reason": reason, "wait_s": round(wait_s, 1),
                      "resume_at": round(resume_at, 3), "iteration": state.get("iteration")}, redactor)
        if reason in LIMIT_KINDS:
            notify.emit(root, "waiting", {**_payload(root, state, settings), "reason": reason, "resume_at": resume_at},
                        settings.notify, redactor)

    _guarded("wait", run)


def on_stop(root: Path, state: dict[str, Any], settings: Settings, detector: Detector | None = None,
            redactor: Redactor | None = None, resumed: bool = False) -> None:
    """Record the stop, write an (unacknowledged) status report, notify complete / circuit_open / stopped."""
    from dun import notify
    from dun.history import reports

    def run() -> None:
        with History.open(root) as history:
            history.record_stop(state)
            sync(history)
            _deficiencies(history, root, state, settings, detector, redactor, resumed)
            reports.write(history)
        reason = str(state.get("stop_reason") or "stopped")
        from dun.loop.report import resume_hint

        payload = {**_payload(root, state, settings), "reason": reason,
                   "circuit_reason": (state.get("circuit") or {}).get("reason"),
                   "detail": state.get("stop_detail"), "next": resume_hint(reason)}
        event = "complete" if reason == "complete" else "circuit_open" if reason == "circuit_open" else "stopped"
        notify.emit(root, event, payload, settings.notify, redactor)

    _guarded("stop", run)


def refresh(root: Path, settings: Review | None) -> History:
    """The history, caught up with the files and the detector (what every history command reads)."""
    history = History.open(root)
    try:
        sync(history)
        review.update(history, settings)
    except BaseException:
        history.close()
        raise
    return history
