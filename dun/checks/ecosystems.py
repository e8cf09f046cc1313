"""What a project uses, told from its own files: the ecosystems present, the package manager its lockfile names,
the test runner, type checker and lint script it runs, a JavaScript monorepo's workspace packages. One answer for
the built-in manifests (a command check's `uses:`), `dun init` (which checks apply), `dun check` (a test suite
nothing runs: dun/checks/unrun.py) and `dun doctor`.

Read-only and cheap: a few small files at the top of the project (never through a link out of it), no process
started. Every look at the disk goes through `_seen` (a file's content or existence, a directory's listing), so
`reads` can tell exactly what an answer depended on: the `test-suites` check declares that as its inputs.
"""

from __future__ import annotations

import fnmatch
import json
import os
import re
from collections.abc import Callable, Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from dun.core.textfiles import read_bytes

JS_RUNNERS = ("node-test", "vitest", "jest", "mocha", "ava", "tape")
# lockfile -> package manager, in the order a project that has several is most likely to mean
LOCKFILES = (("pnpm-lock.yaml", "pnpm"), ("yarn.lock", "yarn"), ("bun.lockb", "bun"), ("bun.lock", "bun"),
             ("package-lock.json", "npm"), ("npm-shrinkwrap.json", "npm"))
_NPM_DEFAULT_TEST = "no test specified"
_PYTEST_FILES = ("pyproject.toml", "setup.cfg", "tox.ini", "pytest.ini", "requirements-dev.txt",
                 "requirements_dev.txt", "requirements-test.txt", "requirements/test.txt", "dev-requirements.txt",
                 "test-requirements.txt", "Pipfile", "noxfile.py", "requirements.txt", "setup.py", "hatch.toml",
                 "Makefile", ".github/workflows")
_UNITTEST_FILES = ("tox.ini", "Makefile", "setup.cfg", "pyproject.toml", "noxfile.py", ".github/workflows")


@dataclass
class Ecosystem:
    name: str  # javascript, rust, python, go
    marker: str  # the file that says so
    tools: list[str] = field(default_factory=list)  # what the project uses: npm, vitest, typescript, unittest...
    tests: bool = False  # the project has a test suite


_T = TypeVar("_T")
# while `reads` runs: every path looked at (a file read or tested, a directory listed)
_SEEN: ContextVar[set[str] | None] = ContextVar("dun_ecosystems_seen", default=None)


def reads(answer: Callable[[], _T]) -> tuple[_T, list[str]]:
    """`answer()` and every path it looked at: what it depends on, as stamps can tell (a file's stamp for its
    content and existence, a directory's for its listing)."""
    seen: set[str] = set()
    token = _SEEN.set(seen)
    try:
        value = answer()
    finally:
        _SEEN.reset(token)
    return value, sorted(seen)


def _seen(path: Path) -> Path:
    recorded = _SEEN.get()
    if recorded is not None:
        recorded.add(str(path))
    return path


def _is_file(path: Path) -> bool:
    return _seen(path).is_file()


def _is_dir(path: Path) -> bool:
    return _seen(path).is_dir()


def _glob(directory: Path, pattern: str) -> list[Path]:
    """The paths under `directory` matching `pattern` (`/`-separated; `*`, `?`, `[...]` within a name, `**` for any
    number of directories), sorted; every directory listed is recorded. Links to directories are not followed."""
    found: list[Path] = []

    def walk(here: Path, parts: list[str]) -> None:
        if not parts:
            return
        head, rest = parts[0], parts[1:]
        if head == "**":
            walk(here, rest)
            for name in _names(here, dirs_only=True):
                walk(here / name, parts)
            return
        literal = not re.search(r"[*?\[]", head)
        for name in [head] if literal else _names(here, dirs_only=bool(rest)):
            if not literal and not fnmatch.fnmatchcase(name, head):
                continue
            path = here / name
            if rest:
                if not literal or _is_dir(path):
                    walk(path, rest)
            elif not literal or _is_file(path):
                found.append(path)

    walk(directory, pattern.split("/"))
    return sorted(found)


def _names(directory: Path, dirs_only: bool) -> list[str]:
    try:
        with os.scandir(_seen(directory)) as entries:
            return [e.name for e in entries if not dirs_only or e.is_dir(follow_symlinks=False)]
    except OSError:
        return []


def _read(path: Path, root: Path, limit: int = 1024 * 1024) -> str:
    """The file's text; '' for one that is missing, too large, not regular or a link out of the project."""
    _seen(path)
    try:
        return read_bytes(path, limit, root=root).decode("utf-8", "replace")
    except (OSError, ValueError):
        return ""


def package_json(directory: str) -> dict[str, object]:
    try:
        data = json.loads(_read(Path(directory) / "package.json", Path(directory)) or "{}")
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def npm_scripts(pkg: Mapping[str, object]) -> dict[str, str]:
    scripts = pkg.get("scripts")
    return {str(k): str(v) for k, v in scripts.items()} if isinstance(scripts, dict) else {}


# another script run by name: `npm run test:unit`, `yarn test:unit`, `pnpm run x`, `bun run x`; `run-s test:*`
_RUN_SCRIPT = re.compile(r"\b(?:npm\s+run(?:-script)?|pnpm(?:\s+run)?|yarn(?:\s+run)?|bun\s+run)\s+"
                         r"(?:(?:-s|--silent)\s+)?(?P<name>[\w:.][\w:.-]*)")
_RUN_ALL = re.compile(r"\b(?:npm-run-all|run-s|run-p)\b(?P<names>[^&|;]*)")


def test_script(scripts: Mapping[str, str], name: str = "test", depth: int = 0) -> str:
    """The `test` script with each script it runs by name put in its place (`"test": "npm run test:unit"` and
    `"test:unit": "mocha test/unit"` is `mocha test/unit`): what it really runs, for the runner and its arguments."""
    text = scripts.get(name, "")
    if depth >= 3:
        return text

    def named(match: re.Match[str]) -> str:
        target = match["name"]
        return test_script(scripts, target, depth + 1) if target in scripts and target != name else match[0]

    def each(match: re.Match[str]) -> str:
        found = [key for word in match["names"].split() if not word.startswith("-")
                 for key in scripts if fnmatch.fnmatchcase(key, word) and key != name]
        return " && ".join(test_script(scripts, key, depth + 1) for key in dict.fromkeys(found)) or match[0]

    return _RUN_ALL.sub(each, _RUN_SCRIPT.sub(named, text))


def _dependencies(pkg: Mapping[str, object]) -> set[str]:
    names: set[str] = set()
    for key in ("dependencies", "devDependencies", "optionalDependencies"):
        section = pkg.get(key)
        if isinstance(section, dict):
            names.update(str(k) for k in section)
    return names


def package_manager(directory: Path) -> str:
    declared = str(package_json(str(directory)).get("packageManager") or "").split("@", 1)[0]
    if declared in ("npm", "pnpm", "yarn", "bun"):
        return declared
    return next((pm for lock, pm in LOCKFILES if _is_file(directory / lock)), "npm")


# runners a workspace root runs once per package, each package's report read apart (see jsenv.expand_js): those that
# write a report file. AVA and tape print theirs, with paths relative to where they ran.
WORKSPACE_RUNNERS = ("node-test", "vitest", "jest", "mocha")
# a `test` script that runs each workspace package's own: npm -ws / --workspaces, pnpm -r / --filter, yarn
# workspaces, lerna, turbo, nx
_DELEGATES = re.compile(r"--workspaces\b|(?:^|\s)-ws\b|\b(?:pnpm|yarn)\b[^&|;]*\s(?:-r|--recursive|--filter|"
                        r"workspaces)\b|\blerna\s+run\b|\bturbo\b[^&|;]*\btest\b|\bnx\s+run-many\b")


def workspace_dirs(directory: Path) -> list[Path]:
    """The workspace packages a package.json (`workspaces`) or pnpm-workspace.yaml (`packages:`) declares: each
    directory a pattern matches that holds a package.json, outside node_modules."""
    declared = package_json(str(directory)).get("workspaces")
    if isinstance(declared, dict):
        declared = declared.get("packages")
    patterns = [str(p) for p in declared] if isinstance(declared, list) else []
    pnpm = _read(directory / "pnpm-workspace.yaml", directory)
    listed = re.search(r"^packages:[ \t]*\n((?:[ \t]+.*\n?|[ \t]*\n)*)", pnpm, re.M)
    if listed:
        patterns += [m.strip().strip("'\"") for m in re.findall(r"^[ \t]*-[ \t]*(.+?)[ \t]*$", listed[1], re.M)]
    found: list[Path] = []
    patterns = [p.strip().rstrip("/").removeprefix("./") for p in patterns]
    excluded = [p[1:].removeprefix("./") for p in patterns if p.startswith("!")]  # `!packages/legacy`
    for pattern in patterns:
        if not pattern or pattern.startswith(("!", "/")) or ".." in pattern.split("/"):
            continue
        for marker in _glob(directory, f"{pattern}/package.json"):
            rel = marker.parent.relative_to(directory).as_posix()
            if "node_modules" not in marker.parts and marker.parent != directory and marker.parent not in found \
                    and not any(fnmatch.fnmatchcase(rel, x) for x in excluded):
                found.append(marker.parent)
    return sorted(found)


def delegates(directory: Path) -> bool:
    """Whether the project at `directory` is a workspace root whose tests are its packages' own: it declares
    workspaces, and its `test` script runs theirs (or there is none)."""
    test = test_script(npm_scripts(package_json(str(directory))))
    if test.strip() and _NPM_DEFAULT_TEST not in test and not _DELEGATES.search(test):
        return False
    return bool(workspace_dirs(directory))


def js_tools(directory: Path) -> list[str]:
    pkg = package_json(str(directory))
    if not pkg:
        return []
    scripts, deps = npm_scripts(pkg), _dependencies(pkg)
    test = test_script(scripts)
    if delegates(directory):  # a monorepo: the runners its packages use, each run in its package
        used = {tool for sub in workspace_dirs(directory) for tool in js_tools(sub)}
        return [package_manager(directory), *(r for r in WORKSPACE_RUNNERS if r in used),
                *_js_extras(directory, scripts, deps)]
    words = set(re.findall(r"[\w@/.-]+", test))
    named = (["node-test"] if _NODE_TEST.search(test) else []) + \
        [runner for runner in JS_RUNNERS[1:] if runner in words]
    # the runners the test script names; else the one among the dependencies (a script dun cannot read)
    tools = [package_manager(directory), *(named or [r for r in JS_RUNNERS[1:] if r in deps])]
    return tools + _js_extras(directory, scripts, deps)


# `node --test`, with node's own options before --test (`--import tsx`); not `node scripts/x.js --test`
_NODE_TEST = re.compile(r"\bnode(?:\s+--?[\w-]+(?:=\S+|\s+(?!-)[^\s&|;]+)?)*?\s+--test\b")


def _js_extras(directory: Path, scripts: dict[str, str], deps: set[str]) -> list[str]:
    tools: list[str] = []
    if "typescript" in deps and _is_file(directory / "tsconfig.json"):
        # a solution-style tsconfig (`"files": []` and `references`) holds no file itself: `tsc --noEmit` checks
        # nothing there and passes; `tsc --build` checks each project it references
        config = _read(directory / "tsconfig.json", directory)
        solution = re.search(r'"references"\s*:\s*\[\s*\{', config) and \
            re.search(r'"(files|include)"\s*:\s*\[\s*\]', config)
        tools.append("typescript-build" if solution else "typescript")
    if "lint" in scripts:
        tools.append("lint-script")
    return tools


def js_has_tests(directory: Path) -> bool:
    test = npm_scripts(package_json(str(directory))).get("test", "")
    if delegates(directory):
        return any(js_has_tests(sub) for sub in workspace_dirs(directory))
    return bool(test.strip()) and _NPM_DEFAULT_TEST not in test


def _mentions(root: Path, names: tuple[str, ...], pattern: re.Pattern[str]) -> bool:
    for name in names:
        path = root / name
        if _is_dir(path):
            if any(pattern.search(_read(p, root, 256 * 1024)) for p in _glob(path, "*.y*ml")[:20]):
                return True
        elif pattern.search(_read(path, root)):
            return True
    return False


_PYTEST = re.compile(r"pytest")
_UNITTEST = re.compile(r"-m\s+unittest\b|\bunittest\s+discover\b")


def python_runner(root: Path) -> str:
    """`pytest` or `unittest`: the runner the project's own files name; a project naming neither runs unittest when
    its tests are `unittest.TestCase` classes, else pytest (plain `def test_` functions need it)."""
    uses_pytest = _is_file(root / "conftest.py") or _is_file(root / "tests" / "conftest.py") or \
        _mentions(root, _PYTEST_FILES, _PYTEST)
    if uses_pytest:
        return "pytest"
    if _mentions(root, _UNITTEST_FILES, _UNITTEST):
        return "unittest"
    return "unittest" if any(_UNITTEST_CASE.search(_read(p, root, 256 * 1024)) for p in _test_files(root)) else "pytest"


_DISCOVER = re.compile(r"-m\s+unittest\s+discover\b(?P<args>[^\n&|;]*)")
_DISCOVER_OPTIONS = {"-s": "-s", "--start-directory": "-s", "-p": "-p", "--pattern": "-p", "-t": "-t",
                     "--top-level-directory": "-t"}


def unittest_args(root: Path) -> str:
    """What `python -m unittest discover` is given here: the start directory, pattern and top-level directory the
    project's own command names (tox.ini, a Makefile, setup.cfg, pyproject.toml, noxfile.py, a workflow), else
    `-s tests` for a tests/ that is not a package (discovery from the root would not enter it), else `-s .`."""
    import shlex  # here: most commands never ask

    for name in _UNITTEST_FILES:
        path = root / name
        files = _glob(path, "*.y*ml")[:20] if _is_dir(path) else [path]
        for found in (m for f in files for m in _DISCOVER.finditer(_read(f, root, 256 * 1024))):
            words = _shell_words(found["args"])
            if words is None:
                continue
            picked: dict[str, str] = {}
            positional = [w for w in words if not w.startswith("-")]
            for i, word in enumerate(words):
                option = _DISCOVER_OPTIONS.get(word.split("=", 1)[0])
                if option and "=" in word:
                    picked[option] = word.split("=", 1)[1]
                elif option and i + 1 < len(words):
                    picked[option] = words[i + 1]
                    positional = [w for w in positional if w != words[i + 1]]
            for option, value in zip(("-s", "-p", "-t"), positional, strict=False):  # `discover START PATTERN TOP`
                picked.setdefault(option, value)
            if picked:
                return " ".join(f"{o} {shlex.quote(v)}" for o, v in picked.items())
    tests = root / "tests"
    return "-s tests" if _is_dir(tests) and not _is_file(tests / "__init__.py") else "-s ."


def _shell_words(text: str) -> list[str] | None:
    """The words of a command's arguments; a YAML or TOML string's closing quote after them is dropped."""
    import shlex

    for candidate in (text.strip(), text.strip()[:-1]):
        try:
            return shlex.split(candidate)
        except ValueError:
            continue
    return None


_UNITTEST_CASE = re.compile(r"^\s*(import unittest|from unittest import)", re.M)


def _test_files(root: Path, limit: int = 20) -> list[Path]:
    found: list[Path] = []
    for pattern in ("test_*.py", "tests/test_*.py", "test/test_*.py", "tests/**/test_*.py", "*/tests/test_*.py"):
        for path in _glob(root, pattern):
            if path not in found:
                found.append(path)
            if len(found) >= limit:
                return found
    return found


def python_has_tests(root: Path) -> bool:
    return any(_is_dir(root / d) for d in ("tests", "test")) or bool(_glob(root, "test_*.py"))


def uses(root: Path, tool: str) -> bool:
    """Whether the project at `root` uses `tool` (a name `detect` lists); only the files that can tell are read."""
    if tool in ("pytest", "unittest"):
        return any(_is_file(root / m) for m in ("pyproject.toml", "setup.py", "setup.cfg")) and \
            python_runner(root) == tool
    if tool in ("cargo", "go"):
        return _is_file(root / ("Cargo.toml" if tool == "cargo" else "go.mod"))
    return _is_file(root / "package.json") and tool in js_tools(root)


def detect(root: Path) -> list[Ecosystem]:
    found: list[Ecosystem] = []
    if _is_file(root / "package.json"):
        found.append(Ecosystem("javascript", "package.json", js_tools(root), js_has_tests(root)))
    if _is_file(root / "Cargo.toml"):
        found.append(Ecosystem("rust", "Cargo.toml", ["cargo"], True))
    python = next((m for m in ("pyproject.toml", "setup.py", "setup.cfg") if _is_file(root / m)), None)
    if python is not None:
        found.append(Ecosystem("python", python, [python_runner(root)], python_has_tests(root)))
    if _is_file(root / "go.mod"):
        found.append(Ecosystem("go", "go.mod", ["go"], True))
    return found
