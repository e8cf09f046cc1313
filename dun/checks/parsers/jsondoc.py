"""`json` and `json-lines`: any tool's JSON output, mapped to items by `issue_path` and `issue_fields`.

`issue_path` is a dotted path to the list of issues (`$`, or empty, for the document itself; numbers index lists).
`issue_fields` names, per item field, the dotted path inside one issue: `file`, `line`, and `text` (a list of
paths is joined with spaces, e.g. `[id, title]`). Without a mapping the usual names are tried.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from dun.checks.parsers.base import DocumentParser, LineParser, ParseContext, Parsed, as_int, bounded, repo_path
from dun.engine.model import Item

TEXT_KEYS = ("message", "msg", "summary", "description", "text", "title")
FILE_KEYS = ("file", "path", "filename", "file_path", "filePath", "location")
LINE_KEYS = ("line", "lineno", "line_number", "lineNumber", "row", "start_line")


def resolve(data: object, path: str) -> object:
    """The value at a dotted path (`a.b.0.c`; `$` or `$.a` accepted), or None."""
    path = path.strip()
    path = path[1:] if path.startswith("$") else path
    current = data
    for part in (p for p in path.split(".") if p):
        if isinstance(current, dict):
            current = current.get(part)
        elif isinstance(current, list) and part.lstrip("-").isdigit() and -len(current) <= int(part) < len(current):
            current = current[int(part)]
        else:
            return None
    return current


def _first(issue: Mapping[str, object], keys: tuple[str, ...]) -> object:
    return next((issue[k] for k in keys if issue.get(k) not in (None, "")), None)


class _Mapper:
    def __init__(self, options: dict[str, Any]) -> None:
        self.path = options.get("issue_path") or ""
        self.fields: dict[str, Any] = options.get("issue_fields") or {}

    def items(self, document: object, ctx: ParseContext) -> list[Item]:
        found = resolve(document, self.path)
        issues = found if isinstance(found, list) else [found] if found is not None else []
        return [item for issue in issues if (item := self.item(issue, ctx)) is not None]

    def item(self, issue: object, ctx: ParseContext) -> Item | None:
        if not isinstance(issue, dict):
            return Item(text=bounded(str(issue))) if isinstance(issue, str | int | float) and str(issue) else None
        text_paths = self.fields.get("text") or []
        if text_paths:
            parts = [resolve(issue, p) for p in text_paths]
            text = " ".join(str(p) for p in parts if p not in (None, ""))
        else:
            text = str(_first(issue, TEXT_KEYS) or "")
        file = resolve(issue, self.fields["file"]) if self.fields.get("file") else _first(issue, FILE_KEYS)
        line = resolve(issue, self.fields["line"]) if self.fields.get("line") else _first(issue, LINE_KEYS)
        file = file if isinstance(file, str) else None
        if not text and not file:
            return None
        return Item(text=bounded(text or "(no message)"), file=repo_path(file, ctx), line=as_int(line))


class JsonParser(DocumentParser):
    def parse(self, data: bytes) -> Parsed:
        text = data.decode("utf-8-sig", "replace")
        start = min((i for i in (text.find("{"), text.find("[")) if i >= 0), default=-1)
        if start < 0:
            return Parsed(problem="no JSON document in the output")
        try:
            # The output may hold other lines (stderr warnings) before and after the document.
            document, _ = json.JSONDecoder().raw_decode(text, start)
        except ValueError as exc:
            return Parsed(problem=f"invalid JSON: {exc}")
        return Parsed(_Mapper(self.options).items(document, self.ctx))


class JsonLinesParser(LineParser):
    """One JSON value per line; lines that are not JSON (progress, warnings) are passed over."""

    def __init__(self, options: dict[str, object], ctx: ParseContext) -> None:
        super().__init__(options, ctx)
        self.mapper = _Mapper(options)
        self.items: list[Item] = []
        self.extra = 0

    def feed(self, line: str) -> None:
        line = line.strip()
        if not line.startswith(("{", "[")):
            return
        try:
            document = json.loads(line)
        except ValueError:
            return
        for item in self.mapper.items(document, self.ctx):
            if len(self.items) >= self.options["max_items"]:
                self.extra += 1  # counted, not kept: memory stays bounded
            else:
                self.items.append(item)

    def result(self) -> Parsed:
        return Parsed(self.items, extra=self.extra)
