"""A Python project's test runner, told from its own files: pytest or unittest, and the arguments its own
`unittest discover` command gives. Every look goes through dun/checks/looked.py."""

from __future__ import annotations

import re
from pathlib import Path

from dun.checks.looked import glob_paths, is_dir, is_file, read
from dun.core.lazyre import LazyPattern

_PYTEST_FILES = ("pyproject.toml", "setup.cfg", "tox.ini", "pytest.ini", "requirements-dev.txt",
                 "requirements_dev.txt", "requirements-test.txt", "requirements/test.txt", "dev-requirements.txt",
                 "test-requirements.txt", "Pipfile", "noxfile.py", "requirements.txt", "setup.py", "hatch.toml",
                 "Makefile", ".github/workflows")
_UNITTEST_FILES = ("tox.ini", "Makefile", "setup.cfg", "pyproject.toml", "noxfile.py", ".github/workflows")


def _mentions(root: Path, names: tuple[str, ...], pattern: LazyPattern) -> bool:
    for name in names:
        path = root / name
        if is_dir(path):
            if any(pattern.search(read(p, root, 256 * 1024)) for p in glob_paths(path, "*.y*ml")[:20]):
                return True
        elif pattern.search(read(path, root)):
            return True
    return False


_PYTEST = LazyPattern(r"pytest")
_UNITTEST = LazyPattern(r"-m\s+unittest\b|\bunittest\s+discover\b")


def python_runner(root: Path) -> str:
    """`pytest` or `unittest`: the runner the project's own files name; a project naming neither runs unittest when
    its tests are `unittest.TestCase` classes, else pytest (plain `def test_` functions need it)."""
    uses_pytest = is_file(root / "conftest.py") or is_file(root / "tests" / "conftest.py") or \
        _mentions(root, _PYTEST_FILES, _PYTEST)
    if uses_pytest:
        return "pytest"
    if _mentions(root, _UNITTEST_FILES, _UNITTEST):
        return "unittest"
    return "unittest" if any(_UNITTEST_CASE.search(read(p, root, 256 * 1024)) for p in _test_files(root)) else "pytest"


_DISCOVER = LazyPattern(r"-m\s+unittest\s+discover\b(?P<args>[^\n&|;]*)")
_DISCOVER_OPTIONS = {"-s": "-s", "--start-directory": "-s", "-p": "-p", "--pattern": "-p", "-t": "-t",
                     "--top-level-directory": "-t"}


def unittest_args(root: Path) -> str:
    """What `python -m unittest discover` is given here: the start directory, pattern and top-level directory the
    project's own command names (tox.ini, a Makefile, setup.cfg, pyproject.toml, noxfile.py, a workflow), else
    `-s tests` for a tests/ that is not a package (discovery from the root would not enter it), else `-s .`."""
    import shlex  # here: most commands never ask

    for name in _UNITTEST_FILES:
        path = root / name
        files = glob_paths(path, "*.y*ml")[:20] if is_dir(path) else [path]
        for found in (m for f in files for m in _DISCOVER.finditer(read(f, root, 256 * 1024))):
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
    return "-s tests" if is_dir(tests) and not is_file(tests / "__init__.py") else "-s ."


_PYTEST_RUN = LazyPattern(r"(?:-m\s+pytest|\bpy\.test|(?<![\w/.-])pytest)\b(?P<args>[^\n&|;]*)")
_PYTEST_FILES_RUN = ("Makefile", "justfile", "tox.ini", "noxfile.py", "pyproject.toml", "hatch.toml", "setup.cfg",
                     ".github/workflows")


def pytest_args(root: Path) -> str:
    """The configuration file the project's own pytest command names (`pytest -c tests/pytest.ini`,
    `--config-file=...`, or the pytest.ini of the directory it runs in: `cd tests && pytest`) and its `--rootdir`,
    read from a Makefile, justfile, tox.ini, noxfile.py, pyproject.toml, hatch.toml, setup.cfg or a workflow: a
    config pytest does not find from the root (its `python_files`, `pythonpath`, `testpaths`) leaves a run with none
    of them collecting nothing, exit 5, an all-clear. '' for none."""
    import shlex

    for name in _PYTEST_FILES_RUN:
        path = root / name
        files = glob_paths(path, "*.y*ml")[:20] if is_dir(path) else [path]
        for found in (m for f in files for m in _PYTEST_RUN.finditer(read(f, root, 256 * 1024))):
            words = _shell_words(found["args"]) or []
            picked: list[str] = []
            for i, word in enumerate(words):
                option, _, value = word.partition("=")
                if option in ("-c", "--config-file", "--rootdir") and not value and i + 1 < len(words):
                    value = words[i + 1]
                elif word.startswith("-c") and len(word) > 2 and option == word:
                    option, value = "-c", word[2:]
                if option not in ("-c", "--config-file", "--rootdir") or not value or "$" in value or "{" in value:
                    continue
                if (is_dir(root / value) if option == "--rootdir" else is_file(root / value)):
                    picked.append(f"{option} {shlex.quote(value)}")
            if picked:
                return " ".join(picked)
        for found in (m for f in files for m in _CD_PYTEST.finditer(read(f, root, 256 * 1024))):
            directory = found["dir"].rstrip("/")  # `cd tests && pytest`: the config file pytest finds there
            config = next((f"{directory}/{n}" for n in ("pytest.ini", ".pytest.ini") if is_file(root / directory / n)),
                          None)
            if config and ".." not in directory.split("/") and not directory.startswith(("/", "$")):
                return f"-c {shlex.quote(config)}"
    return ""


_CD_PYTEST = LazyPattern(r"\bcd\s+(?P<dir>[\w./-]+)\s*&&[^&|;\n]*?(?:-m\s+pytest|\bpy\.test|(?<![\w/.-])pytest)\b")


def _shell_words(text: str) -> list[str] | None:
    """The words of a command's arguments; a YAML or TOML string's closing quote after them is dropped."""
    import shlex

    for candidate in (text.strip(), text.strip()[:-1]):
        try:
            return shlex.split(candidate)
        except ValueError:
            continue
    return None


_UNITTEST_CASE = LazyPattern(r"^\s*(import unittest|from unittest import)", re.M)


def _test_files(root: Path, limit: int = 20) -> list[Path]:
    found: list[Path] = []
    for pattern in ("test_*.py", "tests/test_*.py", "test/test_*.py", "tests/**/test_*.py", "*/tests/test_*.py"):
        for path in glob_paths(root, pattern):
            if path not in found:
                found.append(path)
            if len(found) >= limit:
                return found
    return found


def python_has_tests(root: Path) -> bool:
    return any(is_dir(root / d) for d in ("tests", "test")) or bool(glob_paths(root, "test_*.py"))

