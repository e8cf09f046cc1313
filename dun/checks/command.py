"""`command`: run a shell command with a timeout; exit codes decide pass, warn or fail."""

from __future__ import annotations

import re
from typing import Any

from dun.config.schema import Field
from dun.core.proc import run_streaming
from dun.engine.checkapi import CheckContext, CheckSpec, CheckType
from dun.engine.hookspecs import hookimpl
from dun.engine.model import Item, Outcome, Status, more_item

PARSER_FIELDS = {
    "type": Field("str", "`lines`: each non-blank output line is an item; `regex`: each matching line is one.",
                  required=True, choices=("lines", "regex")),
    "pattern": Field("str", "Regex for `regex` (and an optional filter for `lines`). Named groups `file`, `line` "
                            "and `text` fill the item; without `text` the whole line is used.", default=None),
    "max_items": Field("int", "Items kept; the rest are counted.", default=50, minimum=1),
}
FIELDS = {
    "command": Field("str", "Shell command, run with `sh -c` from the repo root.", required=True),
    "cwd": Field("str", "Directory to run in, relative to the repo root.", default="."),
    "pass_codes": Field("list", "Exit codes that mean pass.", default=[0], item=Field("int", "code"), scalar_ok=True),
    "warn_codes": Field("list", "Exit codes that mean warn.", default=[], item=Field("int", "code"), scalar_ok=True),
    "tail_lines": Field("int", "Lines of output kept as the detail.", default=20, minimum=1),
    "parser": Field("map", "Turn output lines into items.", default=None, fields=PARSER_FIELDS),
}


def validate(options: dict[str, Any]) -> list[tuple[str, str]]:
    parser = options.get("parser")
    if not parser or not parser.get("pattern"):
        if parser and parser.get("type") == "regex":
            return [("parser", "parser type 'regex' needs a pattern")]
        return []
    try:
        re.compile(parser["pattern"])
    except re.error as exc:
        return [("parser", f"invalid regex {parser['pattern']!r}: {exc}")]
    return []


class _Collector:
    """Turns output lines into items as they stream, keeping at most `max_items`."""

    def __init__(self, parser: dict[str, Any] | None) -> None:
        self.kind = parser["type"] if parser else None
        self.regex = re.compile(parser["pattern"]) if parser and parser.get("pattern") else None
        self.max = parser["max_items"] if parser else 0
        self.items: list[Item] = []
        self.extra = 0

    def __call__(self, line: str) -> None:
        if self.kind is None or not line.strip():
            return
        match = self.regex.search(line) if self.regex else None
        if self.regex is not None and match is None:
            return
        if len(self.items) >= self.max:
            self.extra += 1
            return
        groups = match.groupdict() if match else {}
        lineno = groups.get("line")
        self.items.append(Item(text=(groups.get("text") or line).strip(), file=groups.get("file") or None,
                               line=int(lineno) if lineno and lineno.isdigit() else None))


def run(spec: CheckSpec, ctx: CheckContext) -> Outcome:
    opts = spec.options
    cwd = (ctx.root / opts["cwd"]).resolve()
    if not cwd.is_dir():
        return Outcome(Status.ERROR, f"working directory does not exist: {opts['cwd']}")
    collect = _Collector(opts["parser"])
    res = run_streaming(["sh", "-c", opts["command"]], cwd, spec.timeout, collect, opts["tail_lines"])
    detail = "\n".join(res.tail)
    if collect.extra:
        collect.items.append(more_item(collect.extra))
    if res.start_error:
        return Outcome(Status.ERROR, f"could not start sh: {res.start_error}")
    if res.timed_out:
        first_line = opts["command"].strip().splitlines()[0] if opts["command"].strip() else ""
        return Outcome(Status.ERROR, f"timed out after {spec.timeout:g}s: {first_line}"[:200], detail, collect.items)
    code = res.exit_code
    if code in (126, 127) and code not in opts["pass_codes"] and code not in opts["warn_codes"]:
        last = res.tail[-1] if res.tail else ""
        cause = "command not found" if code == 127 else "command not executable"
        return Outcome(Status.ERROR, f"{cause}: {last or opts['command']}", detail)
    if code in opts["pass_codes"]:
        return Outcome(Status.PASS, f"exit {code}", detail)
    status = Status.WARN if code in opts["warn_codes"] else Status.FAIL
    first = next((i.text for i in collect.items), res.tail[-1] if res.tail else "")
    signal = f"exit {code}" + (f": {first}" if first else "")
    return Outcome(status, signal[:200], detail, collect.items)


@hookimpl
def dun_check_types() -> list[CheckType]:
    return [CheckType("command", "Run a shell command; exit codes decide the status.", FIELDS, run, validate)]
