"""The loop's state in memory (dun/store/state.py) and its record on disk (dun/store/records.py) hold the same keys,
and the store converts between them without losing or adding anything."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from dun.store.records import CircuitRecord, StartRecord, StateRecord, state_problem
from dun.store.state import Blocked, Breaker, LoopState, Start
from dun.store.store import Store


def test_each_dataclass_has_exactly_its_records_keys() -> None:
    for cls, record in ((LoopState, StateRecord), (Breaker, CircuitRecord), (Start, StartRecord)):
        assert {f.name for f in dataclasses.fields(cls)} == set(record.__annotations__), cls.__name__


def test_a_state_written_and_read_back_is_the_same(tmp_path: Path) -> None:
    store = Store(tmp_path)
    state = LoopState(iteration=3, calls=[1.0, 2.0], circuit=Breaker(state="HALF_OPEN", no_progress=2, trial=True),
                      start=Start(["a"], "h", "t", False, {"a": ["x"]}, {"files": {}}), blocked=Blocked("lint", 1),
                      agent_tree=[[12.0, 34.0]], trees=["t1"], costs=[0.5])
    store.write_state(state)
    on_disk = json.loads(store.state_path.read_text(encoding="utf-8"))
    assert state_problem(on_disk) is None
    assert on_disk["circuit"]["state"] == "HALF_OPEN" and on_disk["blocked"] == {"task": "lint", "count": 1}
    assert store.read_state() == state


def test_a_state_file_from_an_older_dun_gains_the_new_keys(tmp_path: Path) -> None:
    store = Store(tmp_path)
    store.ensure()
    store.state_path.write_text(json.dumps({"run_id": "old1", "status": "stopped", "iteration": 4,
                                            "circuit": {"state": "OPEN", "reason": "no_progress"},
                                            "start": {"actionable": ["a"], "head": None, "tree": None,
                                                      "confirmation": True}}), encoding="utf-8")
    state = store.read_state()
    assert state is not None
    assert (state.run_id, state.status, state.iteration) == ("old1", "stopped", 4)
    assert state.circuit == Breaker(state="OPEN", reason="no_progress")
    assert state.start == Start(["a"], None, None, True)
    assert (state.costs, state.unconfirmed, state.blocked) == ([], 0, None)


def test_a_secret_in_the_state_is_redacted_on_disk_and_in_memory(tmp_path: Path) -> None:
    store = Store(tmp_path)
    state = LoopState(stop_detail="token sk-ant-api03-abcdefghijklmnopqrstuvwxyz012345")
    store.write_state(state)
    assert "sk-ant" not in store.state_path.read_text(encoding="utf-8")
    assert state.stop_detail == "token <redacted:anthropic-key>"  # what the run keeps is what is on disk
