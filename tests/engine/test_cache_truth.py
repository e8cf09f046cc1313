"""The cache-truth suite: after any sequence of changes a user, an agent or a damaged disk can make, a run that uses
every cache reports what a run with every cache off (`--no-cache`, `DUN_NO_CACHE=1`) reports.

Each example builds a real git repository whose checks read tracked files (checkbox tallies, pattern counts), ignored
files (coverage data, a command's declared inputs, the test directory the built-in `test-suites` check looks for),
a declared environment variable, a flaky outcome, a tree outside the repository (an installed dependency's, a file
rewritten in place there) and a file outside it that only the config's `check.overrides` names, then applies
a hypothesis-chosen sequence of steps. Every file is dated back to one fixed instant after each step, so the caches
may keep what they read (outside the racy window) and only size, ctime, inode or content can tell a change: the
hardest case for a stamp. After each step the cached run must agree with the fresh one, check by check."""

from __future__ import annotations

import marshal
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from conftest import git, write
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dun.core.cache.file import MAGIC
from dun.core.cachedir import cache_dir_path
from dun.engine.model import CheckResult, Status
from dun.engine.session import open_session

OLD_NS = 1_600_000_000_000_000_000  # every file's mtime after each step: only size, ctime or content can tell

PLUGIN = """\
id: truth
checks:
  - {id: boxes, type: checkboxes, files: ["plans/*.md"]}
  - {id: todos, type: files, rule: pattern-count, glob: ["**/*.py"], pattern: TODO, max: 0}
  - {id: cov, type: coverage, file: ignored/coverage.json, threshold: 60}
  - id: tool
    type: command
    command: "cat ignored/data.txt; echo mode=$TRUTH_MODE; grep -q bad ignored/data.txt && exit 1; exit 0"
    inputs: {files: [ignored/**], env: [TRUTH_MODE]}
  - id: flaky
    type: command
    command: "grep -q fail {flaky}/outcome && exit 1; exit 0"
    inputs: {}
    flaky: true
  - id: dep
    type: command
    command: "grep -q bad {outside}/deps/pkg/mod.py && exit 1; exit 0"
    inputs: {trees: ["{outside}/deps"]}
  - id: home
    type: command
    command: "grep -q bad {outside}/settings.txt && exit 1; exit 0"
    inputs: {}
"""
# the file `home` reads is named by the user's config, as a built-in check's would be (README, `check.overrides`)
OVERRIDES = 'check: {overrides: {home: {inputs: {files: ["{outside}/settings.txt"]}}}}\n'


STEPS = st.sampled_from([
    "tick box", "untick box", "add todo", "drop todo", "good data", "bad data", "env a", "env b", "env unset",
    "low coverage", "high coverage", "commit", "stage", "flaky fails", "flaky passes", "corrupt cache",
    "ruby suite", "no ruby suite", "ignored spec dir", "no spec dir", "dep good", "dep bad", "setting good",
    "setting bad",
])
DAMAGE = st.sampled_from(["garbage", "wrong shape", "fifo", "link to /dev/zero", "huge", "empty"])
SHAPES = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=5) | st.binary(max_size=5),
                      lambda inner: st.lists(inner, max_size=3) | st.tuples(inner, inner)
                      | st.dictionaries(st.text(max_size=3), inner, max_size=3), max_leaves=8)


def coverage_json(missing: int) -> str:
    import json

    lines = list(range(1, 11))  # any `missing` gives the same size: only the content tells
    entry = {"executed_lines": lines[missing:], "missing_lines": lines[:missing], "summary": {"num_statements": 10}}
    return json.dumps({"files": {"a.py": entry}})


def age(root: Path, flaky: Path) -> None:
    for base in (root, flaky):
        for dirpath, dirnames, filenames in os.walk(base):
            dirnames[:] = [d for d in dirnames if d != ".git"]
            for name in [*filenames, *dirnames, "."]:
                os.utime(os.path.join(dirpath, name), ns=(OLD_NS, OLD_NS))


@contextmanager
def project() -> Iterator[tuple[Path, Path]]:
    top = Path(tempfile.mkdtemp(prefix="dun-truth-"))
    try:
        root, flaky = top / "repo", top / "flaky"
        root.mkdir()
        flaky.mkdir()
        (flaky / "outcome").write_text("pass\n")
        git(root, "init", "-q", "-b", "main")
        git(root, "config", "user.email", "t@example.com")
        git(root, "config", "user.name", "t")
        write(root, ".dun/config.yaml", "plugins: {disabled: [python, go, git, mission, hooks, beads, helix]}\n"
              + OVERRIDES.replace("{outside}", str(top)))
        write(root, ".dun/plugins/truth.yaml", PLUGIN.replace("{flaky}", str(flaky)).replace("{outside}", str(top)))
        # outside the repository, never dated back by `age`: only a real rewrite moves their ctimes
        write(top, "deps/pkg/mod.py", "good\n")
        os.utime(write(top, "settings.txt", "good\n"), ns=(OLD_NS, OLD_NS))
        write(root, ".gitignore", "ignored/\nspec/\n")
        write(root, "plans/one.md", "- [ ] first\n- [x] second\n")
        write(root, "src/a.py", "x = 1\n")
        write(root, "ignored/data.txt", "good\n")
        write(root, "ignored/coverage.json", coverage_json(2))
        git(root, "add", "-A")
        git(root, "commit", "-qm", "start")
        age(root, flaky)
        yield root, flaky
    finally:
        shutil.rmtree(top, ignore_errors=True)


def apply(step: str, root: Path, flaky: Path, damage: str, shape: object) -> None:
    plan, code = root / "plans/one.md", root / "src/a.py"
    if step in ("tick box", "untick box"):  # same size either way
        text = plan.read_text()
        plan.write_text(text.replace("- [ ] first", "- [x] first") if step == "tick box"
                        else text.replace("- [x] first", "- [ ] first"))
    elif step == "add todo":
        code.write_text("x = 1  # TODO\n")
    elif step == "drop todo":
        code.write_text("x = 1\n")
    elif step in ("good data", "bad data"):
        (root / "ignored/data.txt").write_text("good\n" if step == "good data" else "bad!\n")  # the same size
    elif step.startswith("env"):
        if step == "env unset":
            os.environ.pop("TRUTH_MODE", None)
        else:
            os.environ["TRUTH_MODE"] = step[-1]
    elif step in ("low coverage", "high coverage"):
        (root / "ignored/coverage.json").write_text(coverage_json(7 if step == "low coverage" else 2))
    elif step == "commit":
        git(root, "add", "-A")
        git(root, "commit", "-qm", "step", "--allow-empty")
    elif step == "stage":
        git(root, "add", "-A")
    elif step in ("flaky fails", "flaky passes"):
        (flaky / "outcome").write_text("fail\n" if step == "flaky fails" else "pass\n")
    elif step == "ruby suite":  # test-suites warns when a Gemfile has a spec/ or test/ directory beside it
        write(root, "Gemfile", "source 'https://rubygems.org'\n")
    elif step == "no ruby suite":
        (root / "Gemfile").unlink(missing_ok=True)
    elif step == "ignored spec dir":  # ignored by git: only test-suites' declared reads can tell
        write(root, "spec/a_spec.rb", "")
    elif step == "no spec dir":
        shutil.rmtree(root / "spec", ignore_errors=True)
    elif step in ("dep good", "dep bad"):  # an installed module rewritten in place: no listing moves
        in_place(root.parent / "deps/pkg/mod.py", "good\n" if step == "dep good" else "bad!\n")
    elif step in ("setting good", "setting bad"):
        in_place(root.parent / "settings.txt", "good\n" if step == "setting good" else "bad!\n")
    elif step == "corrupt cache":
        for path in sorted(Path(cache_dir_path(str(root))).glob("*.marshal")):
            damage_file(path, damage, shape)


def in_place(path: Path, text: str) -> None:
    """Rewritten as an editor that saves in place does: same inode, same size, the mtime put back."""
    before = path.stat()
    with open(path, "r+", encoding="utf-8") as fh:
        fh.truncate(0)
        fh.write(text)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))


def damage_file(path: Path, damage: str, shape: object) -> None:
    kind, header = None, None
    try:
        header, kind = marshal.loads(path.read_bytes())[1:3]
    except Exception:  # already damaged by an earlier step
        kind = "results"
    path.unlink()
    if damage == "garbage":
        path.write_bytes(b"\x00not marshal\xff" * 3)
    elif damage == "wrong shape":  # the right header, a payload of any shape
        path.write_bytes(marshal.dumps((MAGIC, header, kind, shape)))
    elif damage == "fifo":
        os.mkfifo(path)
    elif damage == "link to /dev/zero":
        path.symlink_to("/dev/zero")
    elif damage == "huge":
        with open(path, "wb") as fh:
            fh.truncate(1 << 30)  # sparse: a gigabyte that costs no disk
    else:
        path.write_bytes(b"")


def view(results: list[CheckResult]) -> dict[str, tuple[object, ...]]:
    return {r.id: (r.status, r.signal, r.detail, [(i.file, i.line, i.text) for i in r.items]) for r in results}


def runs(root: Path) -> tuple[list[CheckResult], list[CheckResult]]:
    cached = open_session(root).report().results
    fresh = open_session(root, fresh=True).report().results
    return cached, fresh


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                  HealthCheck.too_slow])
@given(steps=st.lists(st.tuples(STEPS, DAMAGE, SHAPES), min_size=1, max_size=7))
def test_a_cached_run_agrees_with_a_fresh_one(steps: list[tuple[str, str, object]]) -> None:
    saved = os.environ.pop("TRUTH_MODE", None)
    try:
        with project() as (root, flaky):
            cached, fresh = runs(root)
            assert view(cached) == view(fresh)
            for step, damage, shape in steps:
                apply(step, root, flaky, damage, shape)
                age(root, flaky)
                cached, fresh = runs(root)
                flaky_cached = next(r for r in cached if r.id == "flaky")
                assert not (flaky_cached.cached and flaky_cached.status is not Status.PASS), step  # never pinned
                honest = {k: v for k, v in view(cached).items() if k != "flaky"}
                assert honest == {k: v for k, v in view(fresh).items() if k != "flaky"}, (step, damage)
    finally:
        os.environ.pop("TRUTH_MODE", None)
        if saved is not None:
            os.environ["TRUTH_MODE"] = saved


def test_an_unchanged_project_is_reused_whole() -> None:
    """The suite above would pass with every cache off: here the same project reuses every result."""
    with project() as (root, _):
        open_session(root).report()
        again = [r for r in open_session(root).report().results if r.plugin == "truth"]
        assert all(r.cached for r in again) and len(again) == 7



def test_the_test_suites_check_sees_what_git_ignores() -> None:
    """test-suites reads beyond git's view (an ignored spec/ directory beside a Gemfile) and is stored without a second
    look at the tree: what it declares must tell each change. Only what a step touched is dated back here (`age`
    changes every ctime), so a result can be reused between steps."""
    def settle(*paths: Path) -> None:
        for path in paths:
            if path.exists():
                os.utime(path, ns=(OLD_NS, OLD_NS))

    with project() as (root, flaky):
        gemfile, spec = [root / "Gemfile", root], [root / "spec/a_spec.rb", root / "spec", root]
        expected = [("ruby suite", Status.SKIP, gemfile), ("ignored spec dir", Status.WARN, spec),
                    ("no spec dir", Status.SKIP, [root]), ("ignored spec dir", Status.WARN, spec),
                    ("no ruby suite", Status.SKIP, [root])]
        for step, status, touched in expected:
            apply(step, root, flaky, "empty", None)
            settle(*touched)
            first = next(r for r in open_session(root).report().results if r.id == "test-suites")
            again = next(r for r in open_session(root).report().results if r.id == "test-suites")
            fresh = next(r for r in open_session(root, fresh=True).report().results if r.id == "test-suites")
            assert (first.status, first.cached, again.status, again.cached) == (status, False, status, True), step
            assert view([again]) == view([fresh]), step
