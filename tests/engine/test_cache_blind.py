"""Cache truth where `git status` is blind: a cached run agrees with a fresh one (`DUN_NO_CACHE=1`) after edits git
status does not report. Found by an outside pass with cases the first suite never had, each stale before its fix:

- files git is told not to look at: skip-worktree and assume-unchanged (a command's result and a per-file cache
  both kept the old content);
- a repository whose config tells git to trust less of the stat (core.trustctime=false, core.checkStat=minimal): a
  same-size rewrite with its mtime set back (here a new file renamed over it: git keeps ctime in whole seconds);
- tracked links: git sees the link's text, not the file it points at (outside the work tree here);
- submodules (edited twice, HEAD moved twice, `ignore = all`) and nested repositories (git names only the
  directory).

Every file is dated back to one instant after each step: only ctime, size or content can tell a change."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from conftest import git, write
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from dun.engine.model import CheckResult
from dun.engine.session import open_session

OLD_NS = 1_600_000_000_000_000_000
FILES = ["plain.txt", "skipped.txt", "assumed.txt", "linked.txt", "sub/data.txt", "inner/data.txt"]
PLUGIN = """\
id: blind
checks:
  - id: reads
    type: command
    command: "cat {files}; ! grep -q bad {files}"
    inputs: {{}}
  - {{id: boxes, type: checkboxes, files: [plans/*.md]}}
  - {{id: todos, type: files, rule: pattern-count, glob: ["src/*.py"], pattern: TODO, max: 0}}
""".format(files=" ".join(FILES))
STEPS = st.sampled_from(["plain", "skipped", "assumed", "linked", "sub", "sub commit", "inner", "inner commit",
                         "tick skipped plan", "tick linked plan", "todo in linked code"])


def age(*bases: Path) -> None:
    for base in bases:
        for dirpath, dirnames, filenames in os.walk(base):
            dirnames[:] = [d for d in dirnames if d != ".git"]
            for name in [*filenames, *dirnames, "."]:
                os.utime(os.path.join(dirpath, name), ns=(OLD_NS, OLD_NS), follow_symlinks=False)


def toggle(path: Path, replace: bool = False) -> None:
    """good <-> bad!, the same size: only the content, ctime and (`replace`: a new file renamed over it) the inode
    tell. git keeps ctime in whole seconds: the inode is what tells a rewrite within the second it last looked."""
    text = path.read_text()
    new = path.with_name(path.name + ".new") if replace else path
    new.write_text(text.replace("good", "bad!") if "good" in text else text.replace("bad!", "good"))
    os.replace(new, path)


def commit(root: Path, message: str = "step") -> None:
    git(root, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qam", message, "--allow-empty")


@contextmanager
def project() -> Iterator[tuple[Path, Path]]:
    top = Path(tempfile.mkdtemp(prefix="dun-blind-"))
    try:
        root, outside, origin = top / "repo", top / "outside", top / "origin"
        for where in (root, origin, outside):
            where.mkdir()
        write(origin, "data.txt", "good\n")
        git(origin, "init", "-q", "-b", "main")
        git(origin, "add", "-A")
        commit(origin, "sub")
        write(outside, "linked.txt", "good\n")
        write(outside, "plan.md", "- [ ] linked\n")
        write(outside, "code.py", "x = 1  # DONE\n")
        git(root, "init", "-q", "-b", "main")
        write(root, ".dun/config.yaml", "plugins: {disabled: [python, go, git, mission, hooks, beads, helix, "
                                        "javascript, rust, test-suites]}\n")
        write(root, ".dun/plugins/blind.yaml", PLUGIN)
        for name in ("plain.txt", "skipped.txt", "assumed.txt"):
            write(root, name, "good\n")
        write(root, "plans/skipped.md", "- [ ] skipped\n")
        (root / "linked.txt").symlink_to(outside / "linked.txt")
        (root / "plans/linked.md").symlink_to(outside / "plan.md")
        (root / "src").mkdir()
        (root / "src/linked.py").symlink_to(outside / "code.py")
        git(root, "-c", "protocol.file.allow=always", "submodule", "-q", "add", str(origin), "sub")
        git(root, "config", "-f", ".gitmodules", "submodule.sub.ignore", "all")
        git(root, "add", "-A")
        commit(root, "start")
        write(root, "inner/data.txt", "good\n")  # a nested repository: the outer status names only `inner/`
        git(root / "inner", "init", "-q", "-b", "main")
        git(root / "inner", "add", "-A")
        commit(root / "inner", "inner")
        git(root, "config", "core.trustctime", "false")
        git(root, "config", "core.checkStat", "minimal")
        git(root, "update-index", "--skip-worktree", "skipped.txt", "plans/skipped.md")
        git(root, "update-index", "--assume-unchanged", "assumed.txt")
        age(root, outside)
        git(root, "status")  # the index learns the dated-back stamps
        yield root, outside
    finally:
        shutil.rmtree(top, ignore_errors=True)


def apply(step: str, root: Path, outside: Path) -> None:
    if step == "plain":  # core.checkStat=minimal: git would not compare the inode
        toggle(root / "plain.txt", replace=True)
    elif step in ("skipped", "assumed"):
        toggle(root / f"{step}.txt")
    elif step == "linked":
        toggle(outside / "linked.txt")
    elif step in ("sub", "inner"):
        toggle(root / step / "data.txt")
    elif step in ("sub commit", "inner commit"):
        toggle(root / step.split()[0] / "data.txt")
        commit(root / step.split()[0])
    elif step in ("tick skipped plan", "tick linked plan"):
        plan = root / "plans/skipped.md" if "skipped" in step else outside / "plan.md"
        text = plan.read_text()
        plan.write_text(text.replace("[ ]", "[x]") if "[ ]" in text else text.replace("[x]", "[ ]"))
    else:
        code = outside / "code.py"
        text = code.read_text()
        code.write_text(text.replace("DONE", "TODO") if "DONE" in text else text.replace("TODO", "DONE"))


def view(results: list[CheckResult]) -> dict[str, tuple[object, ...]]:
    return {r.id: (r.status, r.signal, r.detail, [(i.file, i.line, i.text) for i in r.items]) for r in results
            if r.plugin == "blind"}


@settings(max_examples=2, deadline=None, suppress_health_check=[HealthCheck.too_slow],
          phases=[Phase.explicit, Phase.reuse, Phase.generate])  # a shrink of these repositories takes minutes
@given(steps=st.lists(STEPS, min_size=2, max_size=5))
def test_what_git_status_does_not_see_is_seen(steps: list[str]) -> None:
    with project() as (root, outside):
        open_session(root).report()
        assert next(r for r in open_session(root).report().results if r.id == "reads").cached  # reused
        for step in steps:
            apply(step, root, outside)
            age(root, outside)
            cached = open_session(root).report().results
            assert view(cached) == view(open_session(root, fresh=True).report().results), step


def test_each_blind_spot_alone() -> None:
    """Every step once, in order, each after a run that reused everything: none may hide behind another."""
    with project() as (root, outside):
        for step in STEPS.elements:  # type: ignore[attr-defined]
            open_session(root).report()
            apply(step, root, outside)
            age(root, outside)
            cached = open_session(root).report().results
            assert view(cached) == view(open_session(root, fresh=True).report().results), step
