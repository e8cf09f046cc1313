"""Cache truth across time and while checks run: what a result was kept with must be what its answer was made from.

- A check found not applicable is kept with its triggers' looks: taken before the decision, not after it (a
  trigger that appeared while the checks ran was stored as seen, and the skip reused for good).
- A run whose every result was reused is replayed whole: not once a reused result's `ttl:` has run out."""

from __future__ import annotations

import os
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
