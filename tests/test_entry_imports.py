"""What a plain `dun check` imports, so a lazy import made for speed cannot silently rot (issue 23).

`dun check` on a tree with one file edited, its caches warm, is timed against `git status` (bench/check_large_repo.py);
what is left of its cost beyond git's is mostly the interpreter and its imports. Each module listed below was once on
that path, or belongs to a command a plain `dun check` does not run: a change that brings one back fails here, in a
real process, rather than as a slower benchmark nobody ran.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import git, write

# Modules a plain `dun check` (text format, caches warm, one file edited) must not import, and why.
FORBIDDEN = {
    "click": "the command line is read from dun/cli/flags.py's tables",
    "dun.cli.main": "the click command group",
    "ruamel": "the config and the catalog come from their caches",
    "pathspec": "glob regexes are kept on disk",
    "importlib.metadata": "the entry-point scan is remembered per import path",
    "dun.config.sections": "`dun check` reads its config keys untyped",
    "dun.agents": "agents run in `dun loop` and `dun iterate` only",
    "dun.answer": "transcripts are read by the loop",
    "dun.loop": "the loop",
    "dun.prompt": "the prompt is `dun iterate`'s",
    "dun.guard": "the guard is a hook of its own",
    "dun.sandbox": "the loop's sandbox",
    "dun.trust": "the loop's trust checks",
    "dun.history": "the loop's history",
    "dun.hints": "co-change hints are the prompt's",
    "dun.fleet": "parallel loops",
    "dun.notify": "the loop's notifications",
    "dun.service": "`dun service`",
    "dun.report_html": "`dun report`",
    "dun.output.jsonfmt": "an output format the run did not ask for",
    "dun.output.llm": "an output format the run did not ask for",
    "dun.output.junit": "an output format the run did not ask for",
    "dun.output.github": "an output format the run did not ask for",
    "sqlite3": "the history database",
    "tomllib": "pyproject.toml is read only on a config cache miss",
    "xml.etree.ElementTree": "a cached coverage reading needs no parser",
    "hashlib": "dun/core/digest.py hashes without OpenSSL",
    "tempfile": "cache files are written without it",
    "shutil": "cache files are written without it",
    "difflib": "no diff is shown",
    "email": "only importlib.metadata brings it",
    "zipfile": "only importlib.metadata brings it",
    "logging": "dun does not log",
    "asyncio": "checks run on threads",
    "ctypes": "the reaper's prctl is the loop's",
    "dun.core.toolfiles": "only a check declaring `inputs:` looks at toolchain files",
    "dun.core.walk": "only a check declaring `inputs:` walks a glob or a tree",
    "dun.core.cache.tree": "only a check declaring `inputs:` looks at a tree",
}

PLUGIN = """\
id: p
checks:
  - {id: boxes, type: checkboxes, files: ["plan.md"]}
  - {id: todo, type: files, rule: pattern-count, glob: ["*.py"], pattern: TODO, max: 0}
  - {id: sources, type: files, rule: glob-min-count, glob: ["src/**/*.py"], min: 1}
"""

# Runs dun as its console script does and writes every module loaded, at exit, to the file named by argv[1].
DUMP = """\
import atexit, sys
out = sys.argv.pop(1)
atexit.register(lambda: open(out, "w").write("\\n".join(sorted(sys.modules))))
from dun.entry import run
run()
"""


def loaded(root: Path, out: Path, *args: str) -> set[str]:
    proc = subprocess.run([sys.executable, "-c", DUMP, str(out), *args], cwd=root, capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=120)
    assert proc.returncode in (0, 1), proc.stderr
    return set(out.read_text().split())


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("imports") / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    write(root, ".dun/plugins/p.yaml", PLUGIN)
    write(root, "plan.md", "- [ ] first\n- [x] second\n")
    write(root, "a.py", "x = 1  # TODO\n")
    write(root, "src/m.py", "y = 2\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "initial")
    # Files written within the last seconds are "racy": no cache keyed on them is stored. Made a minute old, so the
    # first run stores every cache as it would in a repository not just created.
    past = time.time() - 60
    for path in [root, *root.rglob("*")]:
        if ".git" not in path.relative_to(root).parts:
            os.utime(path, (past, past))
    return root


@pytest.mark.parametrize("fmt", [None, "json"])
def test_a_plain_check_on_an_edited_tree_imports_none_of_the_forbidden(project: Path, tmp_path: Path,
                                                                        fmt: str | None) -> None:
    args = ["check", *(["--format", fmt] if fmt else [])]
    loaded(project, tmp_path / "warm", *args)  # stores the caches
    with (project / "src/m.py").open("a") as fh:
        fh.write(f"# edited for {fmt}\n")  # a changed tree: the checks run, nothing is replayed
    modules = loaded(project, tmp_path / "edited", *args)
    assert "dun.engine.runner" in modules  # the checks ran: this was not a replay
    assert ("dun.output.jsonfmt" if fmt == "json" else "dun.output.text") in modules
    allowed = {"dun.output.jsonfmt"} if fmt == "json" else set()
    found = {name: why for name, why in FORBIDDEN.items() if name not in allowed and name in modules}
    assert not found, found


def test_the_forbidden_list_can_fail(project: Path, tmp_path: Path) -> None:
    """The same dump sees a forbidden module when the command does use it: `--format junit` loads its formatter."""
    modules = loaded(project, tmp_path / "junit", "check", "--format", "junit")
    assert "dun.output.junit" in modules and "dun.output.text" not in modules


# What a replayed `dun check` (nothing changed since an identical run whose every result was reused) may load beyond
# the interpreter's start: the modules that start git, read the stored output and compute the tree's fingerprint.
REPLAY_MODULES = {
    "dun", "dun.entry", "dun.cli", "dun.cli.flags", "dun.core", "dun.core.spawn", "dun.core.gitsafe",
    "dun.core.regularfile", "dun.engine", "dun.engine.replay", "dun.core.cache", "dun.core.cache.file",
    "dun.core.cachedir", "dun.core.digest", "dun.core.fingerprint", "dun.core.indexlook",
    "gc", "__future__", "_sha256", "_sha2",
}
# Run as DUMP, writing only the modules loaded after the interpreter's own start.
DUMP_NEW = DUMP.replace("import atexit, sys\n", "import atexit, sys\nbefore = set(sys.modules)\n").replace(
    "sorted(sys.modules)", "sorted(set(sys.modules) - before)")


def test_a_replayed_check_loads_only_what_the_replay_needs(project: Path, tmp_path: Path) -> None:
    """The replay's cost beyond `git status` is the interpreter and these imports: the launch of test runners, the
    engine, subprocess and pathlib load only when the replay misses."""
    past = time.time() - 60
    for path in [project, *project.rglob("*")]:
        if ".git" not in path.relative_to(project).parts:
            os.utime(path, (past, past))
    for name in ("first", "second"):
        loaded(project, tmp_path / name, "check")  # the last run stored its results, this one its whole output
    proc = subprocess.run([sys.executable, "-c", DUMP_NEW, str(tmp_path / "replay"), "check"], cwd=project,
                          capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=120)
    modules = set((tmp_path / "replay").read_text().split())
    assert proc.returncode == 1 and "dun.core.fingerprint" in modules, proc.stderr  # a replay: it looked at the tree
    assert modules <= REPLAY_MODULES, sorted(modules - REPLAY_MODULES)
