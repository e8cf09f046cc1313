"""Cache truth for checks joined by `after:`: what the earlier one writes is what the later one reads (a report, a
generated file, a cleaned directory, all ignored by git). They are run together or reused together.

Stale before: with the earlier check's result reused, it did not run, so a later check that had to run (its declared
input had changed) read the file as someone else left it, where a fresh run would have rewritten or removed it.
Still open: a later check whose result was never stored (its input was written within the racy window of its look)
cannot tell that its input was changed by someone else, so the earlier check is still reused then."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from conftest import git, write

from dun.engine.checkapi import CheckSpec
from dun.engine.session import open_session

OLD_NS = 1_600_000_000_000_000_000
NONE_BUILT_IN = "plugins: {disabled: [python, go, git, mission, hooks, beads, helix, javascript, rust, test-suites]}\n"
PIPELINE = """\
id: pipe
checks:
  - {id: gen, type: command, command: 'mkdir -p out && cp src.txt out/report.txt && rm -f out/stale', inputs: {}}
  - id: use
    type: command
    command: 'grep -q ok out/report.txt && test ! -e out/stale'
    after: [gen]
    inputs: {files: [out/report.txt, out/stale]}
"""


def age(root: Path) -> None:
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d != ".git"]
        for name in [*filenames, *dirnames, "."]:
            os.utime(os.path.join(dirpath, name), ns=(OLD_NS, OLD_NS))


def results(repo: Path, fresh: bool = False) -> dict[str, tuple[bool, str]]:
    return {r.id: (r.cached, r.status.value) for r in open_session(repo, fresh=fresh).report().results
            if r.id in ("gen", "use")}


@pytest.mark.parametrize("spoil", ["rewritten", "left behind"])
def test_a_check_that_runs_has_the_check_before_it_run_too(repo: Path, spoil: str) -> None:
    write(repo, ".dun/config.yaml", NONE_BUILT_IN)
    write(repo, ".dun/plugins/pipe.yaml", PIPELINE)
    write(repo, ".gitignore", "out/\n")
    write(repo, "src.txt", "okk\n")
    git(repo, "add", "-A")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "pipeline")
    age(repo)
    results(repo)  # the report did not exist before gen wrote it: use is stored by the next run
    age(repo)
    results(repo)
    assert results(repo) == {"gen": (True, "pass"), "use": (True, "pass")}  # reused while nothing changed
    if spoil == "rewritten":
        write(repo, "out/report.txt", "bad\n")  # the earlier check would write it afresh
    else:
        write(repo, "out/stale", "x\n")  # the earlier check would remove it
    cached = results(repo)
    assert cached == {"gen": (False, "pass"), "use": (False, "pass")}
    assert {k: v[1] for k, v in results(repo, fresh=True).items()} == {"gen": "pass", "use": "pass"}


def test_what_runs_together() -> None:
    from dun.engine.runner import together

    def spec(cid: str, *after: str) -> CheckSpec:
        return CheckSpec(id=cid, plugin="p", type="command", priority=50, plugin_priority=50, timeout=1,
                         after=list(after))

    checks = {c.id: c for c in [spec("a"), spec("b", "a"), spec("c", "b"), spec("d"), spec("e", "a", "gone")]}
    assert together(checks, {"a"}, set()) == {"a", "b", "c", "e"}  # what comes after one that runs
    assert together(checks, {"c"}, set()) == {"c"}  # never stored, or made on another tree: nothing earlier runs
    assert together(checks, {"c"}, {"c"}) == {"b", "c"}  # its stored input changed: what it is after runs
    assert together(checks, {"b"}, {"b"}) == {"a", "b", "c", "e"}
    assert together(checks, {"d"}, {"d"}) == {"d"}
