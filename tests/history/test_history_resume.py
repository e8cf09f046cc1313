"""The deficiency detector resumed from the record the store keeps (`.dun/detector.state`), as the shell driver's
one-process-per-step does: after every step of random histories its findings equal a full read's, a run of plain
appends is read whole once (across processes), and anything else (a record of another shape, an older copy of the
database put back, a database rebuilt) starts over."""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest
from conftest import settings_with
from history_support import make_log, new_repo, write_run
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_history_incremental import REVIEW, RUNS, T0, apply, dicts, step

from dun.history.deficiency import detect
from dun.history.incremental import Detector
from dun.history.resume import resume, to_record
from dun.history.store import History
from dun.loop import operator
from dun.store.store import Store

CFG = settings_with(loop__max_budget_usd=0)


def step_once(root: Path, history: History) -> Detector:
    """One process's look: the detector read back from the store, run, and kept again."""
    detector = resume(Store(root).read_detector(), history)
    detector.findings(history, REVIEW)
    record = to_record(detector)
    assert record is not None
    assert Store(root).write_detector(record)
    return detector


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(step, max_size=25))
def test_a_resumed_detector_finds_what_a_full_read_finds(steps: list[tuple[str, Any]]) -> None:
    starts = {run: T0 + k * 3600 for k, run in enumerate(RUNS)}
    with tempfile.TemporaryDirectory() as tmp, History.open(Path(tmp)) as history:
        done: dict[str, list[int]] = {}
        seqs: dict[str, int] = {}
        for kind, arg in steps:
            apply(history, starts, done, seqs, kind, arg)
            detector = step_once(Path(tmp), history)
            assert dicts(detector.findings(history, REVIEW)) == dicts(detect(history, REVIEW)), (kind, arg)


def claim(n: int) -> dict[str, Any]:
    return make_log("r1", n, cost=0.01 if n % 10 else 0.5, status="COMPLETE", task="lint", after=("lint",),
                    found=({"kind": "unverified_completion", "detail": "x", "check": "lint"},),
                    error="crash in /tmp/a" if n % 3 == 0 else None, error_kind="other")


def test_appends_are_read_whole_once_across_processes(tmp_path: Path) -> None:
    with History.open(tmp_path) as history:
        for n in range(1, 16):
            history.record_iteration(claim(n))
            detector = step_once(tmp_path, history)
            assert dicts(detector.findings(history, REVIEW)) == dicts(detect(history, REVIEW))
        assert detector.full_reads == 1
        assert {f.pattern for f in detect(history, REVIEW)} >= {"claim_streak", "repeated_error"}
        history.record_iteration(make_log("r1", 3))  # an iteration replaced: not an append
        assert step_once(tmp_path, history).full_reads == 2


def test_an_older_copy_of_the_database_or_a_damaged_record_starts_over(tmp_path: Path) -> None:
    store = Store(tmp_path)
    with History.open(tmp_path) as history:
        for n in (1, 2):
            history.record_iteration(claim(n))
        step_once(tmp_path, history)
    shutil.copy(store.history_db, tmp_path / "old.db")
    with History.open(tmp_path) as history:
        for n in (3, 4, 5):
            history.record_iteration(claim(n))
        assert step_once(tmp_path, history).full_reads == 1
    shutil.copy(tmp_path / "old.db", store.history_db)  # the same token and counter, fewer rows
    with History.open(tmp_path) as history:
        assert resume(store.read_detector(), history).source is None  # the state read more rows than there are
        assert dicts(step_once(tmp_path, history).findings(history, REVIEW)) == dicts(detect(history, REVIEW))
        for damaged in ((1, ("x",), (), {}), [1, 2], None, (99, *to_record(step_once(tmp_path, history))[1:])):
            assert resume(damaged, history).source is None  # a fresh detector


def test_the_shell_drivers_steps_keep_the_detector_in_the_store(tmp_path: Path,
                                                                  capfd: pytest.CaptureFixture[str]) -> None:
    """`dun respond --decide` concludes each iteration in a process of its own (`resumed=True`): the detector it
    leaves behind has read every iteration, and only the first step read the history whole."""
    repo = new_repo(tmp_path / "repo")
    logs = [claim(n) for n in (1, 2, 3, 4)]
    state = json.loads((write_run(repo, "r1", logs[:1]) / "state.json").read_text())
    for log in logs:
        operator.on_iteration(repo, log, state, CFG, resumed=True)
    assert capfd.readouterr().err == ""
    with History.open(repo) as history:
        detector = resume(Store(repo).read_detector(), history)
        assert (detector.full_reads, detector.rowid["iterations"]) == (1, 4)
        assert dicts(detector.findings(history, CFG.review)) == dicts(detect(history, CFG.review))


def test_a_record_that_restores_but_does_not_hold_is_read_whole_and_replaced(tmp_path: Path,
                                                                            capfd: pytest.CaptureFixture[str]) -> None:
    repo = new_repo(tmp_path / "repo")
    logs = [claim(n) for n in (1, 2, 3)]
    state = json.loads((write_run(repo, "r1", logs[:1]) / "state.json").read_text())
    operator.on_iteration(repo, logs[0], state, CFG, resumed=True)
    record = Store(repo).read_detector()
    assert isinstance(record, tuple)
    record[3]["last"] = ("not a time", "r1", 1)  # the right shape, a value the detector cannot compare
    Store(repo).write_detector(record)  # type: ignore[arg-type]
    for log in logs[1:]:
        operator.on_iteration(repo, log, state, CFG, resumed=True)
    assert capfd.readouterr().err == ""
    with History.open(repo) as history:
        detector = resume(Store(repo).read_detector(), history)
        assert detector.rowid["iterations"] == 3
        assert dicts(detector.findings(history, CFG.review)) == dicts(detect(history, CFG.review))
