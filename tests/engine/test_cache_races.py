"""Cache truth across time and while checks run: what a result was kept with must be what its answer was made from.

- A check found not applicable is kept with its triggers' looks: taken before the decision, not after it (a
  trigger that appeared while the checks ran was stored as seen, and the skip reused for good).
- A run whose every result was reused is replayed whole: not once a reused result's `ttl:` has run out."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from conftest import git, write

from dun.engine.session import open_session

DISABLED = "plugins: {disabled: [python, go, git, mission, hooks, beads, helix, javascript, rust, test-suites]}\n"


def commit(root: Path) -> None:
    git(root, "add", "-A")
    git(root, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "step")


def age(root: Path) -> None:
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d != ".git"]
        for name in [*filenames, *dirnames, "."]:
            os.utime(os.path.join(dirpath, name), ns=(1_600_000_000_000_000_000,) * 2)


def test_a_trigger_that_appears_after_the_decision_is_not_kept_as_absent(repo: Path) -> None:
    """`maker` runs after `a` was found not applicable and creates a's trigger (ignored by git: the tree does not
    move). The skip must be kept with the trigger absent, as it was decided: the next run sees it and runs `a`."""
    write(repo, ".dun/config.yaml", DISABLED)
    write(repo, ".gitignore", "gen/\n")
    write(repo, ".dun/plugins/t.yaml", "id: t\ntriggers: [{path-exists: gen/flag}]\n"
                                       "checks: [{id: a, type: command, command: 'false', inputs: {}}]\n")
    write(repo, ".dun/plugins/u.yaml", "id: u\nchecks: [{id: maker, type: command, after: [a], "
                                       "command: 'mkdir -p gen && touch gen/flag'}]\n")
    commit(repo)
    age(repo)
    first = {r.id: r for r in open_session(repo).report().results}
    assert first["a"].signal.startswith("not applicable") and (repo / "gen/flag").exists()
    cached = {r.id: r.status for r in open_session(repo).report().results}
    fresh = {r.id: r.status for r in open_session(repo, fresh=True).report().results}
    assert cached["a"] == fresh["a"]


def pass_time(repo: Path, seconds: float) -> None:
    """As if `seconds` had passed since the results and the replay were stored: both files dated back."""
    from dun.core.cache.file import CacheFile
    from dun.core.cachedir import cache_dir_path
    from dun.engine import replay

    results = CacheFile(os.path.join(cache_dir_path(str(repo)), replay.RESULTS), "results")
    entries = results.load()
    for entry in entries.values():
        entry["made"] -= seconds
    results.store(entries)
    stored = replay._file(str(repo)).load(replay._accept)
    assert stored is not None and stored[5] is not None  # kept with the moment its first ttl runs out
    replay._file(str(repo)).store((*stored[:5], stored[5] - seconds))


def test_a_ttl_ends_the_replay_of_a_whole_run(repo: Path, tmp_path: Path) -> None:
    """A run whose every result was reused is replayed whole (dun/engine/replay.py): not once a result's `ttl:` ran
    out, or the replay prints a result the run itself would no longer reuse (it was replayed for good)."""
    write(repo, ".dun/config.yaml", DISABLED)
    write(repo, ".dun/plugins/t.yaml", 'id: t\nchecks:\n  - {id: soon, type: command, command: "test $(cat '
                                       f'{tmp_path}/now) -lt 100", inputs: {{}}, ttl: 5}}\n')
    commit(repo)
    age(repo)
    (tmp_path / "now").write_text("1\n")  # the check's real input, the clock, stands in a file it does not declare

    def dun_check() -> int:
        return subprocess.run([sys.executable, "-m", "dun", "check"], cwd=repo, capture_output=True).returncode

    assert [dun_check(), dun_check(), dun_check()] == [0, 0, 0]  # run, reused, replayed
    (tmp_path / "now").write_text("200\n")
    assert dun_check() == 0  # within the ttl: the replay is the run's own answer
    pass_time(repo.resolve(), 10)
    assert dun_check() == 1
