"""The Session of one command: one Store for `.dun/`, made only when a command needs a record."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from dun.engine.session import open_session


def test_a_session_has_one_store_for_its_repository(repo: Path) -> None:
    session = open_session(repo, agents=False)
    assert session.store is session.store
    assert session.store.root == repo and session.store.dir == repo / ".dun"
    assert open_session(repo, agents=False).store is not session.store  # one per command, no global


def test_dun_check_loads_no_record_module(repo: Path) -> None:
    """`dun check` reads no record of `.dun/`: the session's store (and a typed config section) is made on first
    use, so the records and their writers are not imported on every check."""
    result = subprocess.run([sys.executable, "-X", "importtime", "-m", "dun", "check", "--format", "json",
                             "--no-cache"], cwd=repo, capture_output=True, text=True, check=False)
    assert json.loads(result.stdout)["checks"], result.stderr[-2000:]
    imported = {line.rsplit("|", 1)[-1].strip() for line in result.stderr.splitlines() if line.startswith("import")}
    assert "dun.engine.session" in imported
    assert "dun.store.store" not in imported and "dun.store.records" not in imported
    assert "dun.config.sections" not in imported  # nor the typed config sections it does not read
