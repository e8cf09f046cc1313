"""The deficiency detector's running state as a record the store keeps (`.dun/detector.state`), so that a driver
that starts a new process for every step (scripts/dun-loop.sh, through `dun respond --decide`) resumes the detector
where the previous step left it instead of reading the whole history again.

The record holds plain values only (marshal's types: no class of dun's is rebuilt from a file). It is trusted no
further than the in-memory detector is: `Detector.findings` compares the database it was read from (its root, the
`rewrites` token and counter) and the thresholds, and anything but an append since makes it start over with a full
read. On top, a table holding fewer rows than the state had read (an older copy of the database put back) is
refused here. Any record of another shape or version is a fresh start, never an error.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from dun.history.incremental import Detector, Ev, _Costs, _Errors, _Runs
from dun.history.store import History
from dun.store.records import DETECTOR_SCHEMA_VERSION, DetectorRecord


def to_record(detector: Detector) -> DetectorRecord | None:
    """The detector's state; None before its first read (nothing to keep)."""
    d = detector
    if d.source is None or d.thresholds is None:
        return None
    thresholds = dataclasses.astuple(d.thresholds)
    state: dict[str, Any] = {
        "full_reads": d.full_reads, "rowid": dict(d.rowid), "last": d.last, "known": sorted(d.known),
        "claims": _runs(d.claims), "boxes": _runs(d.boxes),
        "errors": ({s: [tuple(e) for e in evs] for s, evs in d.errors.timed.items()}, dict(d.errors.start),
                   dict(d.errors.first), {s: _hits(h) for s, h in d.errors.inside.items()}),
        "repairs": {k: [tuple(e) for e in evs] for k, evs in d.repairs.items()},
        "costs": (list(d.costs.prior), {r: [(tuple(e), c, m) for e, c, m in found]
                                         for r, found in d.costs.by_run.items()}),
        "denials": {k: dict(row) for k, row in d.denials.items()}, "unplaced": sorted(d.unplaced),
    }
    root, token, count = d.source
    return DETECTOR_SCHEMA_VERSION, (str(root), str(token), int(count)), thresholds, state  # type: ignore[call-overload]


def resume(record: object, history: History) -> Detector:
    """A detector in the state `record` holds, when it is of this version and shape and the database still holds at
    least every row it had read; else a fresh one (which reads the whole history once)."""
    detector = Detector()
    try:
        if not isinstance(record, tuple) or len(record) != 4:
            return detector
        version, source, thresholds, state = record
        if version != DETECTOR_SCHEMA_VERSION or not isinstance(state, dict):
            return detector
        _restore(detector, tuple(source), tuple(thresholds), state)
        for table, seen in detector.rowid.items():
            (most,) = history.conn.execute(f"SELECT COALESCE(MAX(rowid), 0) FROM {table}").fetchone()
            if int(most) < int(seen):
                return Detector()
    except Exception:  # any other shape, or a database that cannot be asked: a full read (which reports its own error)
        return Detector()
    return detector


def _restore(d: Detector, source: tuple[Any, ...], thresholds: tuple[Any, ...], state: dict[str, Any]) -> None:
    from dun.config.sections import Review

    t = Review(*thresholds)
    d._start(t, source)
    d.full_reads = int(state["full_reads"])
    d.rowid = {table: int(state["rowid"][table]) for table in d.rowid}
    d.last = tuple(state["last"]) if state["last"] is not None else None
    d.known = {str(b) for b in state["known"]}
    d.ordered = sorted(d.known)
    d.claims, d.boxes = _runs_from(state["claims"], t.claim_streak), _runs_from(state["boxes"], t.box_attempts)
    timed, start, first, inside = state["errors"]
    d.errors = _Errors(t.error_repeats, t.error_window_h)
    d.errors.timed = {str(s): [Ev(*e) for e in evs] for s, evs in timed.items()}
    d.errors.start = {str(s): int(i) for s, i in start.items()}
    d.errors.first = dict(first)
    d.errors.inside = {str(s): _hits_from(h) for s, h in inside.items()}
    d.repairs = {(str(k[0]), str(k[1])): [Ev(*e) for e in evs] for k, evs in state["repairs"].items()}
    prior, by_run = state["costs"]
    d.costs = _Costs(t.cost_factor, t.cost_min_samples)
    d.costs.prior = [float(c) for c in prior]
    d.costs.by_run = {str(r): [(Ev(*e), float(c), float(m)) for e, c, m in found] for r, found in by_run.items()}
    d.denials = {(str(k[0]), int(k[1])): dict(row) for k, row in state["denials"].items()}
    d.unplaced = {(str(k[0]), int(k[1])) for k in state["unplaced"]}
    d.refresh_denied()


def _runs(runs: _Runs) -> tuple[object, ...]:
    return ({s: [tuple(e) for e in evs] for s, evs in runs.open.items()},
            {s: _hits(h) for s, h in runs.hits.items()}, dict(runs.fired))


def _runs_from(saved: Any, n: int) -> _Runs:
    open_, hits, fired = saved
    runs = _Runs(n)
    runs.open = {str(s): [Ev(*e) for e in evs] for s, evs in open_.items()}
    runs.hits = {str(s): _hits_from(h) for s, h in hits.items()}
    runs.fired = dict(fired)
    return runs


def _hits(hits: dict[tuple[str, int], Ev]) -> list[tuple[object, ...]]:
    return [tuple(e) for e in hits.values()]  # keyed by each one's own key, in order


def _hits_from(saved: Any) -> dict[tuple[str, int], Ev]:
    evs = [Ev(*e) for e in saved]
    return {e.key: e for e in evs}
