"""A corrupt or unknown `.dun/state.json` never starts a new run silently: one clear line, exit 2, the file and the
logs untouched, nothing written outside `.dun/`; `dun loop --fresh` keeps the file aside and archives the logs."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from fake_agent import calls, write_scenario
from loop_support import make_repo, work
from robust_support import dun, state

GOOD = {"schema_version": 1, "run_id": "goodrun00001", "status": "stopped", "stop_reason": "max_iterations",
        "iteration": 2, "cost_usd_total": 1.5, "calls": [1.0, 2.0]}


def variant(**changes: object) -> bytes:
    return json.dumps({**GOOD, **changes}).encode()


VARIANTS: dict[str, bytes] = {
    "empty": b"",
    "truncated": variant()[:40],
    "garbage": bytes(range(256)) * 4,
    "a list": b"[]",
    "a string": b'"state"',
    "null": b"null",
    "a future schema": variant(schema_version=99),
    "iteration as text": variant(iteration="3"),
    "negative iteration": variant(iteration=-1),
    "NaN spend": variant(cost_usd_total=float("nan")),
    "infinite spend": variant(cost_usd_total=float("inf")),
    "negative spend": variant(cost_usd_total=-40.0),
    "calls not a list": variant(calls="many"),
    "NaN call time": variant(calls=[float("nan")]),
    "unknown status": variant(status="exploded"),
    "unknown circuit state": variant(circuit={"state": "BROKEN"}),
    "run id a number": variant(run_id=42),
    "pgid a boolean": variant(agent_pgid=True),
    "a path for an iteration": variant(in_progress="../../../etc/passwd"),
    "nested 100000 deep": b"[" * 100_000 + b"]" * 100_000,
    "not UTF-8": variant(run_id="x").replace(b'"x"', b'"\xff\xfe"'),
    "a bad process tree": variant(agent_tree=[[1]]),
    "larger than any state": b'{"pad": "' + b"x" * (17 << 20) + b'"}',
}


def outside_dun(root: Path) -> dict[str, tuple[int, int]]:
    """Every file beside the repository and in it, except under .dun/ and .git/: (size, mtime)."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root.parent):
        dirnames[:] = [d for d in dirnames if d not in (".dun", ".git", "sc")]
        for name in filenames:
            path = Path(dirpath) / name
            out[str(path)] = (path.stat().st_size, path.stat().st_mtime_ns)
    return out


@pytest.fixture
def used_repo(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A repository with a run's logs, and an agent that would complete the mission if it were called."""
    make_repo(repo, boxes=("alpha",))
    logs = repo / ".dun" / "logs"
    logs.mkdir(parents=True)
    for n in (1, 2):
        (logs / f"iteration-{n}.json").write_text(json.dumps({"iteration": n, "run_id": "goodrun00001"}))
    monkeypatch.setenv("DUN_FAKE_SCENARIO", str(write_scenario(tmp_path / "sc", [work("alpha", exit=True)])))
    return repo


@pytest.mark.parametrize("name", VARIANTS)
def test_a_corrupt_state_stops_with_one_line_and_touches_nothing(used_repo: Path, tmp_path: Path, name: str) -> None:
    path = used_repo / ".dun" / "state.json"
    path.write_bytes(VARIANTS[name])
    before = outside_dun(used_repo)
    logs_before = sorted(p.name for p in (used_repo / ".dun" / "logs").iterdir())
    done = dun(used_repo, "loop")
    assert done.returncode == 2, (name, done.stderr)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "state.json cannot be resumed" in lines[0] and "--fresh" in lines[0], lines
    assert "Traceback" not in done.stderr
    assert path.read_bytes() == VARIANTS[name]
    assert sorted(p.name for p in (used_repo / ".dun" / "logs").iterdir()) == logs_before
    assert outside_dun(used_repo) == before
    assert calls(tmp_path / "sc" / "scenario.json") == []  # no agent was called: no run started


@pytest.mark.parametrize("name", ["garbage", "a path for an iteration", "nested 100000 deep"])
def test_fresh_keeps_the_corrupt_state_aside_and_archives_the_logs(used_repo: Path, name: str) -> None:
    (used_repo / ".dun" / "state.json").write_bytes(VARIANTS[name])
    done = dun(used_repo, "loop", "--fresh")
    assert done.returncode == 0, done.stderr
    kept = list((used_repo / ".dun").glob("state.json.corrupt-*"))
    assert len(kept) == 1 and kept[0].read_bytes() == VARIANTS[name]
    archived = [p for p in (used_repo / ".dun" / "archive").rglob("iteration-*.json")]
    assert sorted(p.name for p in archived) == ["iteration-1.json", "iteration-2.json"]
    assert state(used_repo)["stop_reason"] == "complete"
    assert "kept as" in done.stderr and "archived" in done.stderr


def test_a_crafted_run_id_never_names_a_path_outside_dun(used_repo: Path) -> None:
    crafted = variant(run_id="../../../../tmp/escaped", status="complete", stop_reason="complete")
    (used_repo / ".dun" / "state.json").write_bytes(crafted)
    before = {path: mark for path, mark in outside_dun(used_repo).items() if "/repo/" not in path}
    done = dun(used_repo, "loop")  # the last run completed: a new run archives it under its (sanitized) id
    assert done.returncode == 0, done.stderr
    archive = used_repo / ".dun" / "archive"
    assert [p.parent.parent for p in archive.rglob("iteration-1.json")] == [p for p in archive.iterdir() if p.is_dir()]
    assert all(p.resolve().is_relative_to(archive.resolve()) for p in archive.rglob("*"))
    assert {path: mark for path, mark in outside_dun(used_repo).items() if "/repo/" not in path} == before
    assert not Path("/tmp/escaped").exists()
