"""What a project uses, told from its own files: the ecosystems present, the package manager its lockfile names,
the test runner, type checker and lint script it runs, a JavaScript monorepo's workspace packages. One answer for
the built-in manifests (a command check's `uses:`), `dun init` (which checks apply), `dun check` (a test suite
nothing runs: dun/checks/unrun.py) and `dun doctor`.

Read-only and cheap: a few small files at the top of the project (never through a link out of it), no process
started. The JavaScript answers are dun/checks/jsproject.py's, the Python ones dun/checks/pyrunner.py's; every look
at the disk goes through dun/checks/looked.py, whose `reads` tells what an answer depended on.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from dun.checks.jsproject import js_has_tests, js_tools
from dun.checks.looked import is_file
from dun.checks.pyrunner import python_has_tests, python_runner
from dun.checks.rustrunner import uses_nextest


@dataclass
class Ecosystem:
    name: str  # javascript, rust, python, go
    marker: str  # the file that says so
    tools: list[str] = field(default_factory=list)  # what the project uses: npm, vitest, typescript, unittest...
    tests: bool = False  # the project has a test suite


def uses(root: Path, tool: str) -> bool:
    """Whether the project at `root` uses `tool` (a name `detect` lists); only the files that can tell are read."""
    if tool in ("pytest", "unittest"):
        return any(is_file(root / m) for m in ("pyproject.toml", "setup.py", "setup.cfg")) and \
            python_runner(root) == tool
    if tool in ("nextest", "libtest"):  # the runner cargo's tests run under (dun/checks/rustrunner.py)
        return is_file(root / "Cargo.toml") and uses_nextest(root) == (tool == "nextest")
    if tool == "go":
        return is_file(root / "go.mod") or is_file(root / "go.work")
    if tool == "cargo":
        return is_file(root / "Cargo.toml")
    return is_file(root / "package.json") and tool in js_tools(root)


def detect(root: Path) -> list[Ecosystem]:
    found: list[Ecosystem] = []
    if is_file(root / "package.json"):
        found.append(Ecosystem("javascript", "package.json", js_tools(root), js_has_tests(root)))
    if is_file(root / "Cargo.toml"):
        found.append(Ecosystem("rust", "Cargo.toml", ["cargo", "nextest"] if uses_nextest(root) else ["cargo"], True))
    python = next((m for m in ("pyproject.toml", "setup.py", "setup.cfg") if is_file(root / m)), None)
    if python is not None:
        found.append(Ecosystem("python", python, [python_runner(root)], python_has_tests(root)))
    go = next((m for m in ("go.mod", "go.work") if is_file(root / m)), None)
    if go is not None:
        found.append(Ecosystem("go", go, ["go"], True))
    return found

