"""The `parser` mapping of the command check: its schema and validation, cheap to import (every dun command loads
the command check; the parsers themselves are imported only when a check uses one)."""

from __future__ import annotations

import re
from typing import Any

from dun.config.schema import Field

# name -> (module, class); imported when a check uses it: every dun command loads this module, and the XML
# libraries alone would add tens of milliseconds to each start.
KINDS: dict[str, tuple[str, str]] = {
    "lines": ("text", "LinesParser"), "regex": ("text", "RegexParser"), "json-lines": ("jsondoc", "JsonLinesParser"),
    "go-test-json": ("gotest", "GoTestParser"), "junit-xml": ("junit", "JUnitParser"),
    "json": ("jsondoc", "JsonParser"), "sarif": ("sarif", "SarifParser"), "tap": ("tap", "TapParser"),
    "jest-json": ("jstest", "JestParser"), "mocha-json": ("jstest", "MochaParser"), "ava": ("ava", "AvaParser"),
    "cargo-test": ("cargo", "CargoTestParser"), "cargo-messages": ("cargo", "CargoMessagesParser"),
    "unittest": ("unittest", "UnittestParser"),
}


PARSER_FIELDS = {
    "type": Field("str", "`lines`, `regex`, `junit-xml`, `go-test-json`, `json`, `json-lines`, `sarif`, `tap`, "
                         "`jest-json` (jest, vitest), `mocha-json`, `ava`, `cargo-test`, `cargo-messages` or "
                         "`unittest`.",
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


def validate_parser(options: dict[str, object]) -> list[tuple[str, str]]:
    kind = options["type"]
    if options.get("pattern") and kind not in ("lines", "regex"):
        return [("parser", f"'pattern' is for the lines and regex parsers, not {kind!r}")]
    if options.get("issue_fields") and kind not in ("json", "json-lines"):
        return [("parser", f"'issue_fields' is for the json and json-lines parsers, not {kind!r}")]
    return _validate_pattern(options)


def _validate_pattern(options: dict[str, Any]) -> list[tuple[str, str]]:
    if options["type"] == "regex" and not options.get("pattern"):
        return [("parser", "parser type 'regex' needs a pattern")]
    if options.get("pattern"):
        try:
            re.compile(options["pattern"])
        except re.error as exc:
            return [("parser", f"invalid regex {options['pattern']!r}: {exc}")]
    return []
