"""The incremental deficiency detector (a loop's, kept between iterations) finds exactly what a full read finds
(`deficiency.detect`), after every step of random histories: iterations appended in and out of time order, runs
that sort before others, iterations replaced or forgotten, guard decisions placed late, new box texts, runs
re-timed. And on a plain append it reads only the new rows: it starts over only when the history changed otherwise."""

from __future__ import annotations

import sqlite3
import tempfile
from pathlib import Path
from typing import Any

import pytest
from conftest import settings_with
from history_support import T0, iso, make_log
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dun.history.deficiency import Finding, detect
from dun.history.incremental import Detector
from dun.history.store import History

REVIEW = settings_with(review__claim_streak=2, review__error_repeats=2, review__error_window_h=3,
                       review__box_attempts=2, review__repair_repeats=2, review__denial_repeats=2,
                       review__cost_min_samples=2).review
RUNS = ("r1", "r2", "r3")
BOXES = ("alpha", "beta", "gamma")

iteration = st.fixed_dictionaries({
    "run": st.sampled_from(RUNS),
    "shift_h": st.sampled_from([0.0, 0.5, 2.0, -1.0, -30.0]),  # an iteration's time against its run's start
    "status": st.sampled_from([None, "IN_PROGRESS", "COMPLETE", "COMPLETE"]),
    "task": st.sampled_from(["lint", "lint", "tests", "beta", "alp", "mission-boxes@MISSION.md:3", "none", ""]),
    "after": st.sets(st.sampled_from(["lint", "tests"])),
    "unverified": st.booleans(),
    "error": st.sampled_from([None, None, "crash in /tmp/a at line 7", "boom", ("hit the limit", "usage_limit")]),
    "ticked": st.sets(st.sampled_from([*BOXES, "delta", "al"]), max_size=2),
    "restored": st.sets(st.sampled_from(["MISSION.md", "TASKS.md"]), max_size=1),
    "reverted": st.sets(st.sampled_from(["tests/test_x.py"]), max_size=1),
    "cost": st.sampled_from([None, 0.0, 0.01, 0.01, 0.02, 0.5, 2.0]),
    "estimated": st.booleans(),
})
step = st.one_of(
    st.tuples(st.just("iteration"), iteration),
    st.tuples(st.just("iteration"), iteration),
    st.tuples(st.just("replace"), iteration),
    st.tuples(st.just("forget"), st.sampled_from(RUNS)),
    st.tuples(st.just("guard"), st.fixed_dictionaries({"run": st.sampled_from(RUNS),
                                                         "at_h": st.one_of(st.none(), st.floats(0, 12)),
                                                         "rule": st.sampled_from(["git.push_force", "rm.root"]),
                                                         "deny": st.booleans()})),
    st.tuples(st.just("boxes"), st.sets(st.sampled_from([*BOXES, "omega"]), min_size=1)),
    st.tuples(st.just("retime"), st.tuples(st.sampled_from(RUNS), st.sampled_from([-5.0, 0.0, 5.0]))),
)


def log_of(run_start: float, run: str, n: int, it: dict[str, Any]) -> dict[str, Any]:
    error, kind = (it["error"], "other") if isinstance(it["error"], str) or it["error"] is None else it["error"]
    failing = tuple(sorted(it["after"]))
    found = ({"kind": "unverified_completion", "detail": "still fails", "check": it["task"]},) \
        if it["unverified"] else ()
    log = make_log(run, n, start=run_start + 600 * n + it["shift_h"] * 3600, cost=it["cost"], status=it["status"],
                   task=it["task"] or None, before=("lint", "tests"), after=failing, error=error, error_kind=kind,
                   found=found, ticked=tuple(sorted(it["ticked"])), restored=tuple(sorted(it["restored"])),
                   reverted=tuple(sorted(it["reverted"])))
    log["cost_estimated"] = it["estimated"]
    return log


def apply(history: History, starts: dict[str, float], done: dict[str, list[int]], seqs: dict[str, int],
          kind: str, arg: Any) -> None:
    if kind in ("iteration", "replace"):
        numbers = done.setdefault(arg["run"], [])
        if kind == "replace" and numbers:
            n = numbers[len(numbers) // 2]
        else:
            n = max(numbers, default=0) + 1
            numbers.append(n)
        history.record_iteration(log_of(starts[arg["run"]], arg["run"], n, arg))
    elif kind == "forget" and done.get(arg):
        done[arg].pop(0)
        history.forget_iterations(arg, set(done[arg]))
    elif kind == "guard":
        seq = seqs[arg["run"]] = seqs.get(arg["run"], -1) + 1
        when = "not a time" if arg["at_h"] is None else iso(starts[arg["run"]] + arg["at_h"] * 3600)
        history.record_guard(arg["run"], seq, {"time": when, "tool": "Bash",
                                               "session_id": None, "command": "git push -f", "rule": arg["rule"],
                                               "decision": "deny" if arg["deny"] else "allow"})
    elif kind == "boxes":
        history.record_boxes(sorted(arg))
    elif kind == "retime":
        run, hours = arg
        if done.get(run):
            history.record_run({"run_id": run, "started_epoch": starts[run] + hours * 3600,
                                "started_at": iso(starts[run])})


def dicts(found: list[Finding]) -> list[dict[str, object]]:
    return [f.to_dict() for f in found]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from([0.0, 7200.0, -7200.0, 86400.0]), min_size=3, max_size=3),
       st.lists(step, max_size=30))
def test_incremental_findings_equal_a_full_read_after_every_step(offsets: list[float],
                                                                 steps: list[tuple[str, Any]]) -> None:
    starts = {run: T0 + k * 3600 + off for k, (run, off) in enumerate(zip(RUNS, offsets, strict=True))}
    with tempfile.TemporaryDirectory() as tmp, History.open(Path(tmp)) as history:
        detector = Detector()
        done: dict[str, list[int]] = {}
        seqs: dict[str, int] = {}
        for kind, arg in steps:
            apply(history, starts, done, seqs, kind, arg)
            assert dicts(detector.findings(history, REVIEW)) == dicts(detect(history, REVIEW)), (kind, arg)


def test_a_loop_of_appends_is_read_once_and_then_only_what_is_new(tmp_path: Path) -> None:
    """Claims piling into a streak, errors, costs and denials, one iteration at a time: the detector follows with
    one full read (its first), the same findings as a full read at every step."""
    with History.open(tmp_path) as history:
        detector = Detector()
        for n in range(1, 41):
            log = make_log("r1", n, cost=0.01 if n % 10 else 0.5, status="COMPLETE", task="lint", after=("lint",),
                           found=({"kind": "unverified_completion", "detail": "x", "check": "lint"},),
                           error="crash in /tmp/a" if n % 3 == 0 else None, error_kind="other")
            history.record_iteration(log)
            history.record_guard("r1", n, {"time": iso(T0 + 600 * n + 5), "rule": "git.push_force",
                                           "decision": "deny", "command": "git push -f"})
            assert dicts(detector.findings(history, REVIEW)) == dicts(detect(history, REVIEW))
        assert {f.pattern for f in detect(history, REVIEW)} == {"claim_streak", "repeated_error", "repeated_denial",
                                                               "cost_outlier"}
        assert detector.full_reads == 1
        history.record_iteration(make_log("r1", 3))  # an iteration replaced: the database says so
        assert dicts(detector.findings(history, REVIEW)) == dicts(detect(history, REVIEW))
        assert detector.full_reads == 2


def test_a_read_cut_short_is_read_again_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A failure in the middle of a read (the database busy past its timeout) must not leave rows counted as read:
    the next look starts over and finds what a full read finds."""
    with History.open(tmp_path) as history:
        detector = Detector()
        for n in (1, 2):
            history.record_iteration(make_log("r1", n, status="COMPLETE", task="lint", after=("lint",),
                                              found=({"kind": "unverified_completion", "check": "lint"},)))
            detector.findings(history, REVIEW)
        history.record_iteration(make_log("r1", 3, status="COMPLETE", task="lint", after=("lint",),
                                          found=({"kind": "unverified_completion", "check": "lint"},)))
        real = History.query

        def busy(self: History, sql: str, params: Any = ()) -> Any:
            if "discrepancies" in sql:
                raise sqlite3.OperationalError("database is locked")
            return real(self, sql, params)

        monkeypatch.setattr(History, "query", busy)
        with pytest.raises(sqlite3.OperationalError):
            detector.findings(history, REVIEW)  # check results read, discrepancies not
        monkeypatch.setattr(History, "query", real)
        assert dicts(detector.findings(history, REVIEW)) == dicts(detect(history, REVIEW))
        assert [e["iteration"] for e in detect(history, REVIEW)[0].evidence] == [1, 2, 3]
