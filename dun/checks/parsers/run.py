"""ParserRun: one parser over one command run, fed the output lines or the report file, finished into items."""

from __future__ import annotations

import collections
import contextlib
import importlib
import os
import re
import urllib.parse
from collections.abc import Callable
from pathlib import Path
from typing import Any

from dun.checks.parsers.base import DocumentParser, LineParser, ParseContext, Parsed, plural
from dun.checks.parsers.fields import KINDS
from dun.core.proc import MAX_LINE_BYTES
from dun.core.textfiles import read_bytes
from dun.engine.model import Item, more_item

MAX_DOCUMENT_BYTES = 64 * 1024 * 1024  # a document read from the output is held in memory: bound it
MAX_JOINED_LINE = 1024 * 1024  # one output line longer than this is cut: no item needs more
CRASH_LINES = 200
_ERROR_LINE = re.compile(r"^\s*[\w.]*(?:Error|Exception)\b[^:]*:\s*\S")  # `SyntaxError: Unexpected token ';'`


def make_parser(options: dict[str, Any], ctx: ParseContext) -> LineParser | DocumentParser:
    module, name = KINDS[options["type"]]
    parser_class = getattr(importlib.import_module(f"dun.checks.parsers.{module}"), name)
    parser: LineParser | DocumentParser = parser_class(options, ctx)
    return parser


class ParserRun:
    """One parser over one command run: fed the output lines, then finished into items."""

    def __init__(self, options: dict[str, Any], ctx: ParseContext) -> None:
        self.options = options
        self.ctx = ctx
        self.parser = make_parser(options, ctx)
        self.file = ctx.cwd / options["file"] if options.get("file") else None
        self.buffer: list[str] = []
        self.size = 0
        self.pending = ""  # a line the reader split at MAX_LINE_BYTES, waiting for its rest
        self.output: collections.deque[str] = collections.deque(maxlen=CRASH_LINES)

    def before(self) -> None:
        """Remove a previous report (and per-package ones) and make its directory, so only this run's are read."""
        if self.file is None:
            return
        self.file.parent.mkdir(parents=True, exist_ok=True)
        for path in [self.file, *(p for p, _ in self._package_reports())]:
            with contextlib.suppress(FileNotFoundError):
                path.unlink()

    def _package_reports(self) -> list[tuple[Path, Path]]:
        """(report, the package directory it was written from): a workspace root's runner ran in each package and
        wrote `NAME@PACKAGE-DIR.EXT` beside `NAME.EXT` (dun/checks/jsenv.py), its paths relative to the package."""
        assert self.file is not None
        stem, suffix = self.file.stem, self.file.suffix
        try:
            names = sorted(os.listdir(self.file.parent))
        except OSError:
            return []
        found = []
        for name in names:
            if name.startswith(f"{stem}@") and name.endswith(suffix) and len(name) > len(stem) + len(suffix) + 1:
                package = urllib.parse.unquote(name[len(stem) + 1:len(name) - len(suffix)])
                if not os.path.isabs(package) and ".." not in package.split("/"):
                    found.append((self.file.parent / name, self.ctx.cwd / package))
        return found

    def feed(self, line: str) -> None:
        if self.file is not None:
            self.output.append(line)  # the last lines only: what a runner that crashed before its report printed
            return
        # The reader hands over an overlong line in MAX_LINE_BYTES pieces; put them together again.
        split = len(line) * 4 >= MAX_LINE_BYTES and len(line.encode("utf-8", "replace")) >= MAX_LINE_BYTES
        if isinstance(self.parser, DocumentParser):
            if self.size <= MAX_DOCUMENT_BYTES:
                self.buffer.append(line if split else line + "\n")
                self.size += len(line) + 1
            return
        if split:
            if len(self.pending) < MAX_JOINED_LINE:
                self.pending += line
            return
        line, self.pending = self.pending + line, ""
        self.parser.feed(line)

    def finish(self) -> Parsed:
        if self.pending and isinstance(self.parser, LineParser):
            self.parser.feed(self.pending)
            self.pending = ""
        parsed = self._parse()
        kept, limit = parsed.items, self.options["max_items"]
        extra = parsed.extra + max(0, len(kept) - limit)
        parsed.items = kept[:limit] + ([more_item(extra)] if extra else [])
        return parsed

    def _parse(self) -> Parsed:
        if self.file is not None:
            packages = self._package_reports()
            if packages and not self.file.exists():
                merged = _merged([self._report(path, make_parser(self.options, ParseContext(self.ctx.root, cwd)),
                                               printed=False) for path, cwd in packages])
                return self._printed(self.parser, merged) if isinstance(self.parser, DocumentParser) else merged
            return self._report(self.file, self.parser)
        if isinstance(self.parser, LineParser):
            return self.parser.result()
        if self.size > MAX_DOCUMENT_BYTES:
            return Parsed(problem=f"output over {MAX_DOCUMENT_BYTES // 2**20} MiB; write the report to a `file`")
        return self.parser.parse("".join(self.buffer).encode("utf-8", "surrogateescape"))

    def _printed(self, parser: DocumentParser, parsed: Parsed) -> Parsed:
        """The failures the runner printed but left out of its report (once for all the packages' reports)."""
        printed = parser.from_output(list(self.output))
        if printed:
            parsed.items = [*printed, *parsed.items]
            parsed.summary = ", ".join(s for s in (parsed.summary, plural(len(printed), "unhandled error")) if s)
        from dun.checks.parsers.covfail import below_threshold

        below = below_threshold(list(self.output), self.ctx)  # pytest-cov's --cov-fail-under
        if below is not None:
            parsed.items = [*parsed.items, below[0]]
            parsed.summary = ", ".join(s for s in (parsed.summary, below[1]) if s)
        return parsed

    def _report(self, path: Path, parser: LineParser | DocumentParser, printed: bool = True) -> Parsed:
        shown = os.path.relpath(path, self.ctx.root)
        try:
            data = read_bytes(path, MAX_DOCUMENT_BYTES)
        except FileNotFoundError:
            return Parsed(_crash(list(self.output), self.ctx), problem=f"no report written to {shown}")
        except OSError as exc:
            return Parsed(problem=f"cannot read {shown}: {exc.strerror or exc}")
        if isinstance(parser, DocumentParser):
            parser.source = path
            return self._printed(parser, parser.parse(data)) if printed else parser.parse(data)
        for line in data.decode("utf-8", "replace").splitlines():
            parser.feed(line)
        return parser.result()


_PARTICIPLES = ("failed", "passed", "skipped", "cancelled")  # the same word for one test or many


def _merged(reports: list[Parsed]) -> Parsed:
    """The reports of one runner run in several packages as one: their items in turn, their tallies added up
    (`2 failed, 3 passed` and `1 failed, 1 skipped` are `3 failed, 3 passed, 1 skipped`)."""
    totals: dict[str, int] = {}
    words: list[str] = []
    for report in reports:
        for part in re.split(r"[,;] ", report.summary):
            count = re.match(r"^(\d+) (.+)$", part.strip())
            if count:
                label = _noun(count[2], lambda word: word[:-1] if word.endswith("s") else word)
                totals[label] = totals.get(label, 0) + int(count[1])
            elif part.strip() and part.strip() not in words and part.strip() != "no tests ran":
                words.append(part.strip())
    tally = [f"{n} {label}" if n == 1 else f"{n} {_noun(label, lambda word: word + 's')}"
             for label, n in totals.items() if n]
    return Parsed([i for r in reports for i in r.items], summary=", ".join(tally + words) or "no tests ran",
                  problem="; ".join(r.problem for r in reports if r.problem), extra=sum(r.extra for r in reports))


def _noun(label: str, change: Callable[[str], str]) -> str:
    """`label` with its noun changed (made one or many): the first word that is not a participle, `file` in
    `files not run`, `error` in `unhandled errors`; `failed`, `cancelled` and the like stay as they are."""
    words = label.split(" ")
    at = next((i for i, word in enumerate(words) if word not in _PARTICIPLES and not word.endswith("ed")), None)
    if at is None:
        return label
    return " ".join(change(word) if i == at else word for i, word in enumerate(words))


def _crash(output: list[str], ctx: ParseContext) -> list[Item]:
    """The runner stopped before it wrote its report (a test file that does not parse, a broken config): one item
    with the error it printed, at the first place in the project's code the output names; none when it named
    neither."""
    from dun.checks.parsers.base import bounded
    from dun.checks.parsers.frames import first_project_frame

    errors = [line.strip() for line in output if _ERROR_LINE.match(line)]
    error = next((e for e in errors if not e.startswith("Exception during run")), errors[0] if errors else None)
    if error is None:
        return []
    frame = first_project_frame(output, ctx)
    return [Item(text=bounded(f"the run stopped before its report: {error}"), file=frame[0] if frame else None,
                 line=frame[1] if frame else None)]
