"""The loop's record in the fleet's registry: what it says while running, waiting and stopped, and how long the
shell driver's loop (no dun process while its agent runs or it waits) may stay quiet before it counts as stale."""

from __future__ import annotations

import time
from pathlib import Path

from conftest import settings_with

from dun.fleet.limits import LocalStore
from dun.fleet.status import is_stale
from dun.loop.fleetside import FleetSide
from dun.store.state import LoopState
from dun.store.store import Store


def record() -> dict[str, object]:
    (found,) = LocalStore().loops()
    return found


def test_the_record_follows_the_loop(repo: Path) -> None:
    side = FleetSide(Store(repo), settings_with(fleet__heartbeat_s=3600).fleet, "claude", lambda text: None)
    state = LoopState(status="running", run_id="r1", iteration=1, in_progress=2, call_started=1000.0)
    side.beat(state)
    assert (record()["status"], record()["in_progress"], record()["driver"]) == ("running", 2, "loop")
    state.in_progress = None
    side.waiting(state, "shared_call_limit", 600)
    assert (record()["status"], record()["wait_reason"]) == ("waiting", "shared_call_limit")
    assert "quiet_until" not in record()  # dun loop beats while it waits: it is never excused
    state.status, state.stop_reason = "stopped", "budget"
    side.beat(state)
    assert (record()["status"], record()["stop_reason"], record()["wait_reason"]) == ("stopped", "budget", None)


def test_the_shell_drivers_loop_says_how_long_it_may_be_quiet(repo: Path) -> None:
    side = FleetSide(Store(repo), settings_with().fleet, "claude", lambda text: None, quiet_s=1800)
    side.beat(LoopState(status="running", run_id="r1", in_progress=1))
    found = record()
    assert found["driver"] == "shell" and float(found["quiet_until"]) > time.time() + 1700  # type: ignore[arg-type]
    later = time.time() + 1000  # no heartbeat for 1000 s, but its agent may run 1800 s
    assert not is_stale(found, later, 300)
    assert is_stale(found, time.time() + 1800 + 301, 300)
