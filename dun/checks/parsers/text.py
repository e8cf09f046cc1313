"""`lines` and `regex`: plain output lines as items."""

from __future__ import annotations

import re
from typing import Any

from dun.checks.parsers.base import LineParser, ParseContext, Parsed, as_int, bounded, repo_path
from dun.engine.model import Item


class LinesParser(LineParser):
    """Every non-blank line is an item; with `pattern`, only the lines it matches."""

    def __init__(self, options: dict[str, Any], ctx: ParseContext) -> None:
        super().__init__(options, ctx)
        self.regex = re.compile(options["pattern"]) if options.get("pattern") else None
        self.found: list[tuple[str, dict[str, str | Any]]] = []
        self.extra = 0  # matches past max_items: counted, not kept, so memory stays bounded

    def feed(self, line: str) -> None:
        if not line.strip():
            return
        match = self.regex.search(line) if self.regex else None
        if self.regex is not None and match is None:
            return
        if len(self.found) >= self.options["max_items"]:
            self.extra += 1
            return
        self.found.append((line, match.groupdict() if match else {}))

    def result(self) -> Parsed:
        ctx = self.ctx
        items = []
        for line, groups in self.found:
            items.append(Item(text=bounded(groups.get("text") or line), file=repo_path(groups.get("file"), ctx),
                              line=as_int(groups.get("line"))))
        return Parsed(items, extra=self.extra)


class RegexParser(LinesParser):
    """Each line `pattern` matches is an item; the named groups `file`, `line` and `text` fill it."""
