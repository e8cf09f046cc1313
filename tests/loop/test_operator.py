"""What the loop's operator hooks write (the events log, the history) is cleaned by the run's redactor: the
repository's `secrets.patterns` too, not only the well-known formats."""

from __future__ import annotations

from pathlib import Path

from conftest import settings_with

from dun.core.redact import Redactor
from dun.loop import operator
from dun.store.state import LoopState
from dun.store.store import Store


def test_a_wait_is_recorded_without_a_configured_secret(repo: Path) -> None:
    state = LoopState(run_id="CORP-123456").to_record()
    operator.on_wait(repo, dict(state), settings_with(), "usage_limit", 5.0, redactor=Redactor([r"CORP-[0-9]{6}"]))
    events = Store(repo).events_log.read_text(encoding="utf-8")
    assert '"kind": "wait"' in events and "<redacted:secret>" in events
    assert "CORP-123456" not in events
