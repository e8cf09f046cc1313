"""What every output parser shares: the context it runs in, what it returns, and path and text helpers."""

from __future__ import annotations

import os
import posixpath
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dun.engine.model import Item
from dun.engine.sanitize import safe_text

MESSAGE_CHARS = 500  # an assertion message or lint text is kept whole up to this, then cut with a marker


@dataclass
class ParseContext:
    root: Path  # the repository root: item paths are made relative to it
    cwd: Path  # where the command ran: relative paths in its output are relative to this


@dataclass
class Parsed:
    items: list[Item] = field(default_factory=list)
    summary: str = ""  # the tool's own tally, e.g. "2 failed, 10 passed"
    problem: str = ""  # why the report could not be read (missing file, invalid XML)
    extra: int = 0  # items found beyond those kept


class _Parser:
    def __init__(self, options: dict[str, Any], ctx: ParseContext) -> None:
        self.options = options
        self.ctx = ctx


class LineParser(_Parser):
    """Reads the output line by line as it streams."""

    def feed(self, line: str) -> None:
        raise NotImplementedError

    def result(self) -> Parsed:
        raise NotImplementedError


class DocumentParser(_Parser):
    """Reads one whole document: a report file, or the command's output."""

    source: Path | None = None  # the report file being parsed, when it is one (set before `parse`)

    def parse(self, data: bytes) -> Parsed:
        raise NotImplementedError

    def from_output(self, output: list[str]) -> list[Item]:
        """Failures the runner printed but left out of the report file it wrote (the output's last lines)."""
        return []


def bounded(text: str, limit: int = MESSAGE_CHARS) -> str:
    text = safe_text(text).strip()
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def repo_path(path: str | None, ctx: ParseContext) -> str | None:
    """A tool's path as the repository sees it: relative to the root, '/' separators; None for none."""
    if not path:
        return None
    path = safe_text(path).strip()
    if path.startswith("file://"):
        path = path[len("file://"):]
    path = path.replace("\\", "/")
    full = path if posixpath.isabs(path) else os.path.join(ctx.cwd, path)
    root = str(ctx.root)
    normal = posixpath.normpath(full)
    for base in dict.fromkeys((root, os.path.realpath(root))):
        if normal == base or normal.startswith(base.rstrip("/") + "/"):
            return normal[len(base.rstrip("/")) + 1:] or "."
    return path if not posixpath.isabs(path) else normal  # outside the repository: keep what the tool said


def as_int(value: object) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if value > 0 else None
    if isinstance(value, str) and value.strip().isdigit():
        number = int(value.strip())
        return number if number > 0 else None
    return None


def plural(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"
