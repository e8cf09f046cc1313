"""The recorded looks at a project's files that dun/checks/ecosystems.py, jsproject.py, pyrunner.py, unrun.py,
and a command check's placeholders (jsenv.py, pyenv.py) answer from: every look at the disk (a file's content or
existence, a directory's listing, a place on PATH) goes through `seen`, so `reads` can tell exactly what an answer
depended on. The `test-suites` check declares that as its inputs; a command check's early start
(dun/engine/launch.py) happens only while none of it has moved."""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Callable
from contextvars import ContextVar
from pathlib import Path
from typing import TypeVar

from dun.core.textfiles import read_bytes

_T = TypeVar("_T")
# while `reads` runs: every path looked at (a file read or tested, a directory listed)
_SEEN: ContextVar[set[str] | None] = ContextVar("dun_looked_seen", default=None)


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


_P = TypeVar("_P", str, Path)


def seen(path: _P) -> _P:
    recorded = _SEEN.get()
    if recorded is not None:
        recorded.add(str(path))
    return path


def is_file(path: Path) -> bool:
    return seen(path).is_file()


def is_dir(path: Path) -> bool:
    return seen(path).is_dir()


def executable(path: Path) -> bool:
    """Whether `path` is a file this user may run (links followed)."""
    return seen(path).is_file() and os.access(path, os.X_OK)


def which(program: str) -> str | None:
    """`shutil.which(program)`, every place on PATH it could be found recorded (a stamp tells whether the program
    is there, and which one: the first)."""
    import shutil  # here: most answers never ask

    if os.sep in program:
        seen(program)
    else:
        for directory in os.environ.get("PATH", os.defpath).split(os.pathsep):
            seen(os.path.join(directory, program))
    return shutil.which(program)


def glob_paths(directory: Path, pattern: str) -> list[Path]:
    """The paths under `directory` matching `pattern` (`/`-separated; `*`, `?`, `[...]` within a name, `**` for any
    number of directories), sorted; every directory listed is recorded. Links to directories are not followed."""
    found: list[Path] = []

    def walk(here: Path, parts: list[str]) -> None:
        if not parts:
            return
        head, rest = parts[0], parts[1:]
        if head == "**":
            walk(here, rest)
            for name in dir_names(here, dirs_only=True):
                walk(here / name, parts)
            return
        literal = not re.search(r"[*?\[]", head)
        for name in [head] if literal else dir_names(here, dirs_only=bool(rest)):
            if not literal and not fnmatch.fnmatchcase(name, head):
                continue
            path = here / name
            if rest:
                if not literal or is_dir(path):
                    walk(path, rest)
            elif not literal or is_file(path):
                found.append(path)

    walk(directory, pattern.split("/"))
    return sorted(found)


def dir_names(directory: Path, dirs_only: bool) -> list[str]:
    try:
        with os.scandir(seen(directory)) as entries:
            return [e.name for e in entries if not dirs_only or e.is_dir(follow_symlinks=False)]
    except OSError:
        return []


def read(path: Path, root: Path, limit: int = 1024 * 1024) -> str:
    """The file's text; '' for one that is missing, too large, not regular or a link out of the project."""
    seen(path)
    try:
        return read_bytes(path, limit, root=root).decode("utf-8", "replace")
    except (OSError, ValueError):
        return ""

