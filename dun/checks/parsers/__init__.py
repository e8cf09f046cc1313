"""Output parsers of the `command` check: turn what a tool prints, or the report file it writes, into items.

Line parsers (`lines`, `regex`, `json-lines`, `go-test-json`) read the output as it streams; document parsers
(`junit-xml`, `json`, `sarif`) read one whole document. With `file`, any of them reads that file instead.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from typing import Any

from dun.checks.parsers.base import DocumentParser, LineParser, ParseContext, Parsed
from dun.checks.parsers.gotest import GoTestParser
from dun.checks.parsers.jsondoc import JsonLinesParser, JsonParser
from dun.checks.parsers.junit import JUnitParser
from dun.checks.parsers.sarif import SarifParser
from dun.checks.parsers.text import LinesParser, RegexParser
from dun.checks.parsers.text import validate as validate_pattern
from dun.config.schema import Field
from dun.core.proc import MAX_LINE_BYTES
from dun.engine.model import more_item

__all__ = ["KINDS", "PARSER_FIELDS", "ParseContext", "Parsed", "ParserRun", "validate_parser"]

KINDS: dict[str, Callable[[dict[str, Any], ParseContext], LineParser | DocumentParser]] = {
    "lines": LinesParser, "regex": RegexParser, "json-lines": JsonLinesParser, "go-test-json": GoTestParser,
    "junit-xml": JUnitParser, "json": JsonParser, "sarif": SarifParser,
}
MAX_DOCUMENT_BYTES = 64 * 1024 * 1024  # a document read from the output is held in memory: bound it
MAX_JOINED_LINE = 1024 * 1024  # one output line longer than this is cut: no item needs more

PARSER_FIELDS = {
    "type": Field("str", "`lines`, `regex`, `junit-xml`, `go-test-json`, `json`, `json-lines` or `sarif`.",
                  required=True, choices=tuple(KINDS)),
    "pattern": Field("str", "Regex for `regex` (and an optional filter for `lines`). Named groups `file`, `line` "
                            "and `text` fill the item; without `text` the whole line is used.", default=None),
    "file": Field("str", "Read this report file (relative to `cwd`) instead of the output. It is removed before "
                         "the command runs, so a stale report is never read.", default=None),
    "issue_path": Field("str", "`json`/`json-lines`: dotted path to the list of issues; empty for the document.",
                        default=""),
    "issue_fields": Field("map", "`json`/`json-lines`: dotted paths inside one issue.", default=None, fields={
        "file": Field("str", "Path of the file the issue is about.", default=None),
        "line": Field("str", "Path of its line number.", default=None),
        "text": Field("list", "Path(s) of its text; several are joined with spaces.", default=[],
                      item=Field("str", "path"), scalar_ok=True),
    }),
    "fail_on_items": Field("bool", "A passing exit code with items still fails (a work queue such as "
                                   "`bd ready --json`).", default=False),
    "max_items": Field("int", "Items kept; the rest are counted.", default=50, minimum=1),
}


def validate_parser(options: dict[str, Any]) -> list[tuple[str, str]]:
    kind = options["type"]
    if options.get("pattern") and kind not in ("lines", "regex"):
        return [("parser", f"'pattern' is for the lines and regex parsers, not {kind!r}")]
    if options.get("issue_fields") and kind not in ("json", "json-lines"):
        return [("parser", f"'issue_fields' is for the json and json-lines parsers, not {kind!r}")]
    return validate_pattern(options)


class ParserRun:
    """One parser over one command run: fed the output lines, then finished into items."""

    def __init__(self, options: dict[str, Any], ctx: ParseContext) -> None:
        self.options = options
        self.ctx = ctx
        self.parser = KINDS[options["type"]](options, ctx)
        self.file = ctx.cwd / options["file"] if options.get("file") else None
        self.buffer: list[str] = []
        self.size = 0
        self.pending = ""  # a line the reader split at MAX_LINE_BYTES, waiting for its rest

    def before(self) -> None:
        """Remove a previous report and make its directory, so only this run's report is read."""
        if self.file is None:
            return
        self.file.parent.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(FileNotFoundError):
            self.file.unlink()

    def feed(self, line: str) -> None:
        if self.file is not None:
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
            shown = os.path.relpath(self.file, self.ctx.root)
            try:
                data = self.file.read_bytes()
            except FileNotFoundError:
                return Parsed(problem=f"no report written to {shown}")
            except OSError as exc:
                return Parsed(problem=f"cannot read {shown}: {exc.strerror or exc}")
            if isinstance(self.parser, DocumentParser):
                return self.parser.parse(data)
            for line in data.decode("utf-8", "replace").splitlines():
                self.parser.feed(line)
            return self.parser.result()
        if isinstance(self.parser, LineParser):
            return self.parser.result()
        if self.size > MAX_DOCUMENT_BYTES:
            return Parsed(problem=f"output over {MAX_DOCUMENT_BYTES // 2**20} MiB; write the report to a `file`")
        return self.parser.parse("".join(self.buffer).encode("utf-8", "surrogateescape"))
