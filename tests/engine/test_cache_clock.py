"""Cache truth when the clock moves backwards: a result (or a whole run's output) stored while the clock was ahead
carries a time in the future once the clock is set right, so its age is negative and a `ttl:` never seemed to run
out; the check that reads what dun cannot see (here a file outside the repository, which `ttl:` is for) stayed
stale for as long as the clock had been wrong. Such a result is now run again."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import git, write

from dun.engine.session import open_session

DAY = 86400.0
SHIFTED = """import sys, time
_d = float(sys.argv.pop(1)); _t, _tn = time.time, time.time_ns
time.time = lambda: _t() + _d
time.time_ns = lambda: _tn() + int(_d * 1e9)
sys.argv[0] = "dun"
from dun.entry import run
sys.exit(run())
"""


@pytest.fixture
def project(repo: Path, tmp_path: Path) -> Path:
    write(tmp_path, "state", "bad\n")
    write(repo, ".dun/config.yaml", "plugins: {disabled: [python, go, git, mission, hooks, beads, helix, javascript, "
                                    "rust, test-suites]}\n")
    write(repo, ".dun/plugins/p.yaml", f"id: p\nchecks:\n  - id: remote\n    type: command\n"
                                       f"    command: 'grep -q ok {tmp_path}/state'\n    inputs: {{}}\n    ttl: 3600\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "plugin")
    past = time.time() - 60
    for dirpath, dirnames, filenames in os.walk(repo):
        dirnames[:] = [d for d in dirnames if d != ".git"]
        for name in [*filenames, *dirnames, "."]:
            os.utime(os.path.join(dirpath, name), (past, past))
    return repo


def test_a_result_stored_while_the_clock_was_ahead_is_run_again_once_it_is_set_back(
        project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = time.time
    with monkeypatch.context() as m:
        m.setattr(time, "time", lambda: real() + DAY)
        first = open_session(project).report().results[0]
        assert first.status.value == "fail" and not first.cached
        assert open_session(project).report().results[0].cached  # reused within its ttl, on that clock
    write(tmp_path, "state", "okk\n")  # what the check asks (a service, a deadline) has changed since
    after = open_session(project).report().results[0]
    assert not after.cached and after.status.value == "pass"


def test_a_whole_run_stored_while_the_clock_was_ahead_is_not_replayed_once_it_is_set_back(
        project: Path, tmp_path: Path) -> None:
    def check(*shift: str) -> subprocess.CompletedProcess[str]:
        argv = [sys.executable, "-c", SHIFTED, *shift] if shift else [sys.executable, "-m", "dun"]
        return subprocess.run([*argv, "check", "--format", "json"], cwd=project, capture_output=True, text=True,
                              check=False)

    check(str(DAY))
    ahead = check(str(DAY))  # every result reused: stored whole for replay
    assert '"cached": true' in ahead.stdout and ahead.returncode == 1
    write(tmp_path, "state", "okk\n")
    now = check()
    assert now.returncode == 0 and '"cached": false' in now.stdout
