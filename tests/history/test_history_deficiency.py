"""The deficiency detector: each pattern fires at exactly the iteration its threshold is reached, never one
earlier, on hand-built histories (precise patterns) and on scripted runs of both drivers."""

from __future__ import annotations

import json
import statistics
from pathlib import Path
from typing import Any

import pytest
from conftest import settings_with
from fake_agent import block
from history_support import NO_CIRCUIT, T0, drive, guard_line, iso, make_log, new_repo, review_items, write_run
from hypothesis import given
from hypothesis import strategies as st
from loop_support import idle, work

from dun.history.deficiency import Finding, cost_outliers, detect
from dun.history.store import History
from dun.history.sync import sync


def found(root: Path, logs: list[dict[str, Any]], guard: str = "", boxes: tuple[str, ...] = (),
          **thresholds: Any) -> list[Finding]:
    """Detect over `logs` (grouped into runs by run_id, all but the last archived)."""
    runs = list(dict.fromkeys(log["run_id"] for log in logs))
    for run_id in runs:
        base = write_run(root, run_id, [log for log in logs if log["run_id"] == run_id], archived=run_id != runs[-1])
        if guard and run_id == runs[-1]:
            (base / "logs" / "guard.jsonl").write_text(guard, encoding="utf-8")
    if boxes:
        (root / ".dun" / "tasks.json").write_text(json.dumps({"tasks": [{"text": b} for b in boxes]}))
    with History.open(root) as history:
        sync(history)
        return detect(history, settings_with(**{f"review__{k}": v for k, v in thresholds.items()}).review)


def first_firing(tmp_path: Path, logs: list[dict[str, Any]], pattern: str, **kwargs: Any) -> int | None:
    """The number of logs after which `pattern` first fires (None: never)."""
    for k in range(1, len(logs) + 1):
        if any(f.pattern == pattern for f in found(tmp_path / f"h{k}", logs[:k], **kwargs)):
            return k
    return None


def claim(run: str, n: int, check: str = "lint", failing: bool = True, status: str | None = "COMPLETE",
          **extra: Any) -> dict[str, Any]:
    after = (check,) if failing else ()
    if failing and status == "COMPLETE" and "found" not in extra:  # what dun records for a claim with no progress
        extra["found"] = ({"kind": "unverified_completion", "detail": f"check {check} still fails", "check": check},)
    return make_log(run, n, status=status, task=check, before=(check,), after=after, **extra)


# ---- claim_streak ----------------------------------------------------------------------------------------------


def test_claim_streak_fires_on_the_third_claim_in_a_row(tmp_path: Path) -> None:
    logs = [claim("r1", n) for n in range(1, 5)]
    assert first_firing(tmp_path, logs, "claim_streak") == 3
    [f] = [f for f in found(tmp_path / "all", logs) if f.pattern == "claim_streak"]
    assert f.subject == "lint" and [e["iteration"] for e in f.evidence] == [1, 2, 3, 4]
    assert f.first_ts == pytest.approx(T0 + 1800)  # iteration 3 reached the threshold


def test_claim_streak_breaks_on_another_claim_or_a_passing_check_but_not_on_a_crash(tmp_path: Path) -> None:
    other = make_log("r1", 2, status="COMPLETE", task="docs", after=("lint",))
    passing = claim("r1", 2, failing=False)
    crash = make_log("r1", 2, status=None, error="segfault", error_kind="other")
    assert first_firing(tmp_path / "a", [claim("r1", 1), other, *(claim("r1", n) for n in (3, 4, 5))],
                        "claim_streak") == 5
    assert first_firing(tmp_path / "b", [claim("r1", 1), passing, *(claim("r1", n) for n in (3, 4, 5))],
                        "claim_streak") == 5
    assert first_firing(tmp_path / "c", [claim("r1", 1), crash, claim("r1", 3), claim("r1", 4)], "claim_streak") == 4
    in_progress = [claim("r1", n, status="IN_PROGRESS") for n in range(1, 5)]
    assert first_firing(tmp_path / "d", in_progress, "claim_streak") is None  # not a claim of being done


def test_claims_with_progress_on_the_check_are_no_streak(tmp_path: Path) -> None:
    """An honest night: each iteration ticks one box and claims mission-boxes, which lists the others still."""
    logs = [claim("r1", n, check="mission-boxes", found=(), ticked=(f"box {n}",)) for n in range(1, 6)]
    assert first_firing(tmp_path, logs, "claim_streak") is None
    logs[3] = claim("r1", 4, check="mission-boxes")  # one claim with nothing done: judged, but alone
    assert first_firing(tmp_path / "one", logs, "claim_streak") is None


def test_dun_s_charge_for_a_silent_timeout_is_no_cost_outlier(tmp_path: Path) -> None:
    logs = [make_log("r1", n, cost=0.1) for n in range(1, 7)]
    logs.append({**make_log("r1", 7, cost=5.0), "cost_estimated": True, "timed_out": True})
    assert first_firing(tmp_path, logs, "cost_outlier") is None
    logs[-1]["cost_estimated"] = False  # the same cost reported by the agent itself is an outlier
    assert first_firing(tmp_path / "real", logs, "cost_outlier") == 7


def test_claim_streak_spans_runs_and_follows_its_threshold(tmp_path: Path) -> None:
    logs = [claim("r1", 1), claim("r1", 2), claim("r2", 1), claim("r2", 2)]
    assert first_firing(tmp_path / "a", logs, "claim_streak") == 3
    assert first_firing(tmp_path / "b", logs, "claim_streak", claim_streak=4) == 4


# ---- repeated_error --------------------------------------------------------------------------------------------


def failure(run: str, n: int, hours: float, kind: str = "other", where: str = "/tmp/w1") -> dict[str, Any]:
    return make_log(run, n, start=T0 + hours * 3600, status=None, error=f"crash in {where} at line {n * 7}",
                    error_kind=kind)


def test_the_same_error_three_times_within_48_hours_across_runs(tmp_path: Path) -> None:
    # 0 h, 20 h, 50 h: no 48 h window holds three; 60 h makes 20-50-60
    logs = [failure("r1", 1, 0), failure("r1", 2, 20, where="/var/x"), failure("r2", 1, 50), failure("r3", 1, 60)]
    assert first_firing(tmp_path / "a", logs, "repeated_error") == 4
    [f] = [f for f in found(tmp_path / "all", logs) if f.pattern == "repeated_error"]
    assert [(e["run_id"], e["iteration"]) for e in f.evidence] == [("r1", 2), ("r2", 1), ("r3", 1)]
    assert first_firing(tmp_path / "b", logs, "repeated_error", error_window_h=50) == 3


def test_usage_limits_are_not_errors_to_review(tmp_path: Path) -> None:
    logs = [failure("r1", n, n, kind="usage_limit") for n in range(1, 6)]
    assert first_firing(tmp_path, logs, "repeated_error") is None


# ---- box_attempts ----------------------------------------------------------------------------------------------


def attempt(n: int, task: str = "beta", ticked: tuple[str, ...] = ()) -> dict[str, Any]:
    return make_log("r1", n, status="IN_PROGRESS", task=task, ticked=ticked)


def test_a_box_claimed_three_times_without_being_ticked(tmp_path: Path) -> None:
    logs = [attempt(n) for n in range(1, 5)]
    assert first_firing(tmp_path / "a", logs, "box_attempts", boxes=("alpha", "beta")) == 3
    done = [attempt(1), attempt(2, ticked=("beta",)), attempt(3), attempt(4), attempt(5)]
    assert first_firing(tmp_path / "b", done, "box_attempts", boxes=("beta",)) == 5  # ticking starts over
    item = [attempt(n, task="mission-boxes@MISSION.md:4") for n in range(1, 4)]
    assert first_firing(tmp_path / "c", item, "box_attempts") == 3  # an item reference names a box too
    prose = [attempt(n, task="looked around") for n in range(1, 6)]
    assert first_firing(tmp_path / "d", prose, "box_attempts", boxes=("beta",)) is None


# ---- repeated_repair, repeated_denial, cost_outlier -------------------------------------------------------------


def test_repeated_restores_and_reverts_per_file(tmp_path: Path) -> None:
    logs = [make_log("r1", 1, restored=("MISSION.md",)), make_log("r1", 2, reverted=(".dun/config.yaml",)),
            make_log("r1", 3), make_log("r2", 1, restored=("MISSION.md",)),
            make_log("r2", 2, reverted=(".dun/config.yaml",))]
    assert first_firing(tmp_path, logs, "repeated_repair") == 4
    subjects = sorted(f.subject for f in found(tmp_path / "all", logs) if f.pattern == "repeated_repair")
    assert subjects == ["restored:MISSION.md", "reverted:.dun/config.yaml"]


def test_repeated_guard_denials_per_rule(tmp_path: Path) -> None:
    logs = [make_log("r1", n) for n in range(1, 4)]
    lines = [guard_line(iso(T0 + 610), "git.push_force"), guard_line(iso(T0 + 620), "rm.root"),
             guard_line(iso(T0 + 1210), "git.push_force"), guard_line(iso(T0 + 1220), "x", decision="allow"),
             guard_line(iso(T0 + 1810), "git.push_force")]
    for k in range(len(lines)):
        fired = [f for f in found(tmp_path / f"g{k}", logs, guard="".join(lines[:k + 1]))
                 if f.pattern == "repeated_denial"]
        assert bool(fired) == (k == 4), k
    assert [(e["run_id"], e["iteration"]) for e in fired[0].evidence] == [("r1", 1), ("r1", 2), ("r1", 3)]


def test_an_iteration_costing_over_three_times_the_median(tmp_path: Path) -> None:
    cheap = [make_log("r1", n, cost=0.01) for n in range(1, 6)]
    assert first_firing(tmp_path / "a", [*cheap, make_log("r1", 6, cost=0.031)], "cost_outlier") == 6
    assert first_firing(tmp_path / "b", [*cheap, make_log("r1", 6, cost=0.03)], "cost_outlier") is None
    assert first_firing(tmp_path / "c", [*cheap[:4], make_log("r1", 5, cost=0.5)], "cost_outlier") is None
    assert first_firing(tmp_path / "d", [*cheap, make_log("r1", 6, cost=0.05)], "cost_outlier",
                        cost_factor=6) is None


def test_ids_are_stable_and_the_same_after_a_rebuild(tmp_path: Path) -> None:
    logs = [claim("r1", n) for n in range(1, 4)]
    first = found(tmp_path / "a", logs)
    again = found(tmp_path / "b", [*logs, claim("r1", 4)])
    assert [f.id for f in first] == [f.id for f in again] and len(first[0].id) == 8


# ---- scripted runs -----------------------------------------------------------------------------------------------


def stop_after(step: dict[str, Any]) -> dict[str, Any]:
    """The step, and the agent asks the loop to stop after it (a STOP file, as `dun stop` writes)."""
    return {**step, "actions": [*step.get("actions", []), {"write": ".dun/STOP", "content": "\n"}]}


CLAIM = {"status": block(task="mission-boxes", status="COMPLETE", files=0), "cost_usd": 0.01}
BETA = {"status": block(task="beta", status="IN_PROGRESS", files=0), "cost_usd": 0.01}


@pytest.mark.parametrize("driver", ["loop", "sh"])
@pytest.mark.parametrize(("pattern", "step"), [("claim_streak", CLAIM), ("box_attempts", BETA)])
def test_scripted_runs_fire_on_the_third_iteration(tmp_path: Path, driver: str, pattern: str,
                                                   step: dict[str, Any]) -> None:
    repo = new_repo(tmp_path / "repo", circuit=NO_CIRCUIT, loop={"max_iterations": 3})
    first = drive(repo, [step, stop_after(step), step], driver)
    assert json.loads((repo / ".dun" / "state.json").read_text())["stop_reason"] == "stop_requested", first.stderr
    assert not [i for i in review_items(repo) if i["pattern"] == pattern]  # two iterations: not yet
    drive(repo, [step, stop_after(step), step], driver)  # resumes the run: iteration 3
    [item] = [i for i in review_items(repo) if i["pattern"] == pattern]
    assert [e["iteration"] for e in item["evidence"]] == [1, 2, 3] and item["status"] == "open"


def test_scripted_run_errors_repairs_and_cost(tmp_path: Path) -> None:
    crash = {"error": {"kind": "crash", "stderr": "fake_agent: segfault at 0x0\n", "exit": 1}}
    untick = {"actions": [{"write": "MISSION.md", "content": "# Mission\n\n- [ ] alpha\n"}],
              "status": block(task="alpha", status="IN_PROGRESS", files=1), "cost_usd": 0.01}
    boxes = ("a1", "a2", "a3", "a4", "a5", "a6", "a7")
    repo = new_repo(tmp_path / "repo", boxes=boxes, circuit=NO_CIRCUIT)
    steps = [crash, crash, untick, crash, untick, *(work(b, cost=0.01) for b in boxes[:4]), idle(cost_usd=0.2)]
    drive(repo, steps, "loop", "--max-iterations", "3")
    assert {i["pattern"] for i in review_items(repo)} == set()  # two crashes, one restore: not yet
    drive(repo, steps, "loop", "--max-iterations", "9")
    by = {i["pattern"]: i for i in review_items(repo)}
    assert [e["iteration"] for e in by["repeated_error"]["evidence"]] == [1, 2, 4]
    assert [e["iteration"] for e in by["repeated_repair"]["evidence"]] == [3, 5]
    assert "cost_outlier" not in by
    drive(repo, steps, "loop", "--max-iterations", "10")
    assert [e["iteration"] for e in review_items(repo)[-1]["evidence"]] == [10]


@given(st.lists(st.one_of(st.none(), st.floats(0, 100, allow_nan=False)), max_size=60),
       st.floats(1.5, 5), st.integers(1, 6))
def test_cost_outliers_are_judged_against_the_median_of_every_cost_before(costs: list[float | None], factor: float,
                                                                           min_samples: int) -> None:
    its = [{"cost_usd": c, "run_id": f"r{i // 7}", "iteration": i, "started_ts": float(i)} for i, c in enumerate(costs)]
    expected: list[int] = []
    prior: list[float] = []
    for it in its:
        cost = it["cost_usd"]
        if cost is None:
            continue
        if len(prior) >= min_samples and statistics.median(prior) > 0 and cost > factor * statistics.median(prior):
            expected.append(it["iteration"])
        prior.append(cost)
    found = [e["iteration"] for f in cost_outliers(its, factor, min_samples) for e in f.evidence]
    assert sorted(found) == expected
