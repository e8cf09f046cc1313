"""Cache truth for the classes a cache-truth pass left stale or never reused, each a cached run compared with a run
with every cache off (`DUN_NO_CACHE=1`, here `fresh=True`):

- a checkbox file the check refuses to read (a tracked link leading outside the repository): the error repeats
  while nothing changed, and was never reused, so the check ran every time; reused, it must end when an ignored
  link on the way makes the tracked link lead inside;
- a `chmod +x` under core.fileMode=false: git status does not report it, what a command runs changes;
- ignored Python files a test runner reads on its own: an ignored test module, a generated `_version.py`;
- a module of the project's site-packages rewritten by `sed -i` (only the top listing was looked at);
and hypothesis-chosen sequences of all of these in one repository."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import git, write
from hypothesis import HealthCheck, Phase, example, given, settings
from hypothesis import strategies as st

from dun.engine.model import CheckResult, Status
from dun.engine.session import open_session

DISABLED = "plugins: {disabled: [python, go, git, mission, hooks, beads, helix, javascript, rust, test-suites]}\n"
OLD_NS = 1_600_000_000_000_000_000


def age(*bases: Path) -> None:
    """Every file dated back to one instant: outside the racy window, only size, ctime or content can tell."""
    for base in bases:
        for dirpath, dirnames, filenames in os.walk(base):
            dirnames[:] = [d for d in dirnames if d != ".git"]
            for name in [*filenames, *dirnames, "."]:
                os.utime(os.path.join(dirpath, name), ns=(OLD_NS, OLD_NS), follow_symlinks=False)


def result(repo: Path, check: str, fresh: bool = False) -> CheckResult:
    return next(r for r in open_session(repo, fresh=fresh).report().results if r.id == check)


def agree(repo: Path, check: str) -> CheckResult:
    cached, fresh = result(repo, check), result(repo, check, fresh=True)
    assert (cached.status, cached.signal) == (fresh.status, fresh.signal)
    return cached


def commit(repo: Path, plugin: str) -> None:
    write(repo, ".dun/config.yaml", DISABLED)
    write(repo, ".dun/plugins/c.yaml", f"id: c\nchecks:\n{plugin}")
    git(repo, "add", "-A")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "plugin")


def test_a_refused_checkbox_file_is_reused_while_unchanged(repo: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    write(outside, "plan.md", "- [ ] outside\n")
    write(repo, "plans/inside.md", "- [ ] inside\n")
    (repo / "plans/linked.md").symlink_to(outside / "plan.md")
    commit(repo, "  - {id: boxes, type: checkboxes, files: ['plans/*.md']}\n")
    age(repo, outside)
    first = result(repo, "boxes")
    assert first.status is Status.ERROR and "outside the repository" in first.signal
    assert result(repo, "boxes").cached  # was run again every time
    write(outside, "plan.md", "- [x] outside\n")  # what the link leads to: still refused
    age(outside)
    assert agree(repo, "boxes").status is Status.ERROR
    (repo / "plans/linked.md").unlink()  # the link now leads inside
    (repo / "plans/linked.md").symlink_to("inside.md")
    age(repo)
    assert agree(repo, "boxes").status is Status.FAIL


def test_a_chmod_under_core_filemode_false_is_seen(repo: Path) -> None:
    """git status under core.fileMode=false does not report a `chmod +x`; what the command runs does change. The
    git-status check still reports the tree clean: the mode is looked at for the caches only."""
    write(repo, "run.sh", "#!/bin/sh\nexit 0\n")
    commit(repo, "  - {id: runs, type: command, command: 'test -x run.sh && ./run.sh', inputs: {}}\n"
                 "  - {id: tree, type: git-status}\n")
    git(repo, "config", "core.fileMode", "false")
    age(repo)
    assert result(repo, "runs").status is Status.FAIL  # not executable
    assert result(repo, "runs").cached
    for mode in (0o755, 0o644, 0o755):
        os.chmod(repo / "run.sh", mode)
        assert agree(repo, "runs").status is (Status.PASS if mode & 0o100 else Status.FAIL)
    assert result(repo, "tree").status is Status.PASS


def test_ignored_modules_a_test_runner_reads_on_its_own_are_seen(repo: Path) -> None:
    """The runner collects an ignored test module and imports a generated, ignored `_version.py`: neither is a file
    the check declares, both change what it reports."""
    write(repo, ".gitignore", "tests/test_local*.py\npkg/_version.py\n__pycache__/\n")
    write(repo, "setup.cfg", "[metadata]\nname = pkg\n")  # a Python project: git names what it ignores
    write(repo, "pkg/__init__.py", "")
    write(repo, "pkg/_version.py", "VERSION = '1'\n")
    write(repo, "tests/__init__.py", "")
    write(repo, "tests/test_tracked.py", "import unittest\n\nfrom pkg._version import VERSION\n\n\n"
                                         "class T(unittest.TestCase):\n    def test_v(self):\n"
                                         "        self.assertEqual(VERSION, '1')\n")
    write(repo, "tests/test_local.py", "import unittest\n\n\nclass L(unittest.TestCase):\n"
                                       "    def test_ok(self):\n        self.assertEqual(1, 1)\n")
    commit(repo, f"  - {{id: suite, type: command, command: \"'{sys.executable}' -B -m unittest discover -s tests "
                 f"-t .\", inputs: {{}}}}\n")
    age(repo)
    assert result(repo, "suite").status is Status.PASS
    assert result(repo, "suite").cached
    steps = [("tests/test_local.py", "1, 1", "1, 2"), ("tests/test_local.py", "1, 2", "1, 1"),
             ("pkg/_version.py", "'1'", "'2'")]
    for rel, old, new in steps:
        write(repo, rel, (repo / rel).read_text().replace(old, new))
        age(repo)
        assert agree(repo, "suite").status is (Status.FAIL if new in ("1, 2", "'2'") else Status.PASS), rel


def test_an_installed_module_rewritten_by_sed_i_is_seen(repo: Path) -> None:
    """An agent "fixing" a dependency: `sed -i` on a module deep inside an installed package of the project's own
    virtual environment (sed writes a new file and renames it over the old one: the package's listing moves)."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(repo / ".venv")], check=True)
    (site,) = (repo / ".venv/lib").glob("python*/site-packages")
    write(site, "extpkg/__init__.py", "")
    write(site, "extpkg/sub/__init__.py", "")
    write(site, "extpkg/sub/mod.py", "X = 1\n")
    write(repo, ".gitignore", ".venv/\n")
    commit(repo, "  - id: imports\n    type: command\n    command: '{python} -B -c \"import extpkg.sub.mod as m; "
                 "assert m.X == 1\"'\n    inputs: {}\n")
    age(repo)
    assert result(repo, "imports").status is Status.PASS
    assert result(repo, "imports").cached
    for old, new in (("1", "2"), ("2", "1")):
        subprocess.run(["sed", "-i", f"s/X = {old}/X = {new}/", str(site / "extpkg/sub/mod.py")], check=True)
        age(site / "extpkg/sub")  # dated back: only the package's own listing tells (its ctime)
        assert agree(repo, "imports").status is (Status.FAIL if new == "2" else Status.PASS)


PLUGIN = """\
  - {id: boxes, type: checkboxes, files: ['plans/*.md']}
  - {id: runs, type: command, command: 'test -x run.sh && ./run.sh', inputs: {}}
  - {id: suite, type: command, command: "'PYTHON' -B -m unittest discover -s tests -t .", inputs: {}}
  - id: imports
    type: command
    command: '{python} -B -c "import extpkg.sub.mod as m; assert m.X == 1"'
    inputs: {}
"""
STEPS = st.sampled_from(["chmod", "local test", "version", "new local test", "sed", "tick outside", "retarget"])


def age_tree(repo: Path, *more: Path) -> None:
    """`age`, but for the virtual environment (dating it back would change every listing's ctime)."""
    for dirpath, dirnames, filenames in os.walk(repo):
        dirnames[:] = [d for d in dirnames if d not in (".git", ".venv")]
        for name in [*filenames, *dirnames, "."]:
            os.utime(os.path.join(dirpath, name), ns=(OLD_NS, OLD_NS), follow_symlinks=False)
    age(*more)


def toggle(path: Path, one: str, other: str) -> None:
    text = path.read_text()
    path.write_text(text.replace(one, other) if one in text else text.replace(other, one))


def step(name: str, repo: Path, outside: Path) -> None:
    site = next((repo / ".venv/lib").glob("python*/site-packages"))
    if name == "chmod":
        os.chmod(repo / "run.sh", (repo / "run.sh").stat().st_mode ^ 0o111)
    elif name == "local test":
        toggle(repo / "tests/test_local.py", "1, 1", "1, 2")
    elif name == "version":
        toggle(repo / "pkg/_version.py", "'1'", "'2'")
    elif name == "new local test":
        added = repo / "tests/test_local2.py"
        if added.exists():
            added.unlink()
        else:
            write(repo, "tests/test_local2.py", "import unittest\n\n\nclass N(unittest.TestCase):\n"
                                                "    def test_no(self):\n        self.fail()\n")
    elif name == "sed":
        mod = site / "extpkg/sub/mod.py"
        value = "2" if "X = 1" in mod.read_text() else "1"
        subprocess.run(["sed", "-i", f"s/X = ./X = {value}/", str(mod)], check=True)
        age(site / "extpkg/sub")
    elif name == "tick outside":
        toggle(outside / "plan.md", "[ ]", "[x]")
    else:
        link = repo / "plans/linked.md"
        inside = os.readlink(link) == "inside.md"
        link.unlink()
        link.symlink_to(outside / "plan.md" if inside else "inside.md")


@settings(max_examples=1, deadline=None, phases=[Phase.explicit, Phase.reuse, Phase.generate],  # no shrink: minutes
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(steps=st.lists(STEPS, min_size=2, max_size=4))
@example(steps=["tick outside", "chmod", "local test", "version", "new local test", "sed", "retarget"])  # each once
def test_sequences_of_these_changes_agree_with_a_fresh_run(steps: list[str], tmp_path_factory: pytest.TempPathFactory
                                                            ) -> None:
    top = tmp_path_factory.mktemp("classes")
    repo, outside = top / "repo", top / "outside"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    write(outside, "plan.md", "- [ ] outside\n")
    write(repo, "plans/inside.md", "- [ ] inside\n")
    (repo / "plans/linked.md").symlink_to(outside / "plan.md")
    write(repo, "run.sh", "#!/bin/sh\nexit 0\n")
    write(repo, ".gitignore", ".venv/\ntests/test_local*.py\npkg/_version.py\n__pycache__/\n")
    write(repo, "setup.cfg", "[metadata]\nname = pkg\n")
    write(repo, "pkg/__init__.py", "")
    write(repo, "pkg/_version.py", "VERSION = '1'\n")
    write(repo, "tests/__init__.py", "")
    write(repo, "tests/test_tracked.py", "import unittest\n\nfrom pkg._version import VERSION\n\n\nclass T("
                                         "unittest.TestCase):\n    def test_v(self):\n"
                                         "        self.assertEqual(VERSION, '1')\n")
    write(repo, "tests/test_local.py", "import unittest\n\n\nclass L(unittest.TestCase):\n"
                                       "    def test_ok(self):\n        self.assertEqual(1, 1)\n")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(repo / ".venv")], check=True)
    site = next((repo / ".venv/lib").glob("python*/site-packages"))
    write(site, "extpkg/__init__.py", "")
    write(site, "extpkg/sub/__init__.py", "")
    write(site, "extpkg/sub/mod.py", "X = 1\n")
    commit(repo, PLUGIN.replace("PYTHON", sys.executable))
    git(repo, "config", "core.fileMode", "false")
    age(repo, outside)
    open_session(repo).report()
    for name in steps:
        step(name, repo, outside)
        age_tree(repo, outside)
        cached = {r.id: (r.status, r.signal) for r in open_session(repo).report().results if r.plugin == "c"}
        fresh = {r.id: (r.status, r.signal) for r in open_session(repo, fresh=True).report().results if r.plugin == "c"}
        assert cached == fresh, (steps, name)


def test_a_refused_link_made_to_lead_inside_through_an_ignored_link_is_seen(repo: Path, tmp_path: Path) -> None:
    """The tracked link's text and what it leads to stay the same; where it leads (outside or not) is what moved:
    an ignored link to a directory on its way now points inside the repository."""
    outside = tmp_path / "outside"
    write(outside, "plan.md", "- [ ] same\n")
    write(repo, "kept/plan.md", "- [ ] same\n")
    (repo / "via").symlink_to(outside)
    (repo / "plans").mkdir()
    (repo / "plans/linked.md").symlink_to("../via/plan.md")
    write(repo, ".gitignore", "via\n")
    commit(repo, "  - {id: boxes, type: checkboxes, files: ['plans/*.md']}\n")
    age(repo, outside)
    assert result(repo, "boxes").status is Status.ERROR
    assert result(repo, "boxes").cached
    (repo / "via").unlink()
    (repo / "via").symlink_to("kept")
    age(repo)
    assert agree(repo, "boxes").status is Status.FAIL
