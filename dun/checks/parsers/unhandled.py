"""Errors a runner prints but leaves out of its report file: vitest's unhandled errors (a rejected promise or an
exception thrown after a test ended). vitest fails the run for them (exit 1, `Errors  1 error`) while every test in
its JUnit report passed; read from the terminal output the command check keeps (its last lines), each is an item at
its first frame in the project's code, named after the test vitest says was running."""

from __future__ import annotations

import re

from dun.checks.parsers.base import ParseContext, bounded
from dun.checks.parsers.frames import first_project_frame, message_lines
from dun.engine.model import Item
from dun.engine.sanitize import strip_ansi

# `⎯⎯⎯⎯ Unhandled Rejection ⎯⎯⎯⎯⎯`, `⎯⎯⎯ Uncaught Exception ⎯⎯⎯`, `⎯⎯⎯ Unhandled Error ⎯⎯⎯`
_HEADER = re.compile(r"^⎯+\s*(?P<kind>Unhandled Rejection|Uncaught Exception|Unhandled Error)\s*⎯+\s*$")
_END = re.compile(r"^⎯|^\s*Test Files\s")
_LATEST = re.compile(r'^The latest test that might\'ve caused the error is "(?P<name>.*?)"')
_ORIGIN = re.compile(r'^This error originated in "(?P<file>[^"]+)" test file')


def vitest_unhandled(output: list[str], ctx: ParseContext) -> list[Item]:
    items: list[Item] = []
    lines = [strip_ansi(line).rstrip() for line in output]
    for at, line in enumerate(lines):
        header = _HEADER.match(line.strip())
        if header is None:
            continue
        section: list[str] = []
        for following in lines[at + 1:]:
            if _END.match(following.strip()):
                break
            section.append(following)
        error = message_lines("\n".join(section)).split("\n", 1)[0].strip() or header["kind"]
        test = next((m["name"] for m in map(_LATEST.match, section) if m), None)
        origin = next((m["file"] for m in map(_ORIGIN.match, section) if m), None)
        frame = first_project_frame(section, ctx)
        name = " > ".join(n for n in (origin, test) if n) or "vitest"
        items.append(Item(text=bounded(f"{name}: {header['kind'].lower()}: {error}"),
                          file=frame[0] if frame else origin, line=frame[1] if frame else None))
    return items
