"""`unittest`: the report of `python -m unittest -v` (discovery honours each module's `load_tests`, so doctests
a project loads that way run too).

One item per `FAIL:` or `ERROR:` block: the test's id (`tests.test_math.TestMath.test_adds`), a subtest with its
parameters (`... (i=2, name='case')`), a doctest as `pkg.mod.add (doctest)` at its failing example; located at the
deepest frame of the traceback in the project's code, with the exception's text (`AssertionError: 2 != 3`). A
SyntaxError is one item at the broken file and line, however many test modules failed to import it.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from dun.checks.parsers.base import LineParser, ParseContext, Parsed, bounded, plural, repo_path
from dun.core.textfiles import read_bytes
from dun.engine.model import Item

_RULE = re.compile(r"^={70}$")
_DASHES = re.compile(r"^-{70}$")
_HEADER = re.compile(r"^(?P<kind>FAIL|ERROR|UNEXPECTED SUCCESS): (?P<rest>.+)$")
_FRAME = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+)(?:, in (?P<func>.+))?$')
_RAN = re.compile(r"^Ran (?P<count>\d+) tests? in ")
_TOTALS = re.compile(r"^(?P<verdict>FAILED|OK|NO TESTS RAN)(?: \((?P<counts>[^)]*)\))?$")
_SYNTAX = re.compile(r"^(SyntaxError|IndentationError|TabError): ")
MAX_BLOCK = 400


class UnittestParser(LineParser):
    def __init__(self, options: dict[str, object], ctx: ParseContext) -> None:
        super().__init__(options, ctx)
        self.blocks: list[list[str]] = []
        self.current: list[str] | None = None
        self.ran: int | None = None
        self.totals: dict[str, int] = {}

    def feed(self, line: str) -> None:
        if _RULE.match(line):
            self.current = []
            self.blocks.append(self.current)
            return
        ran = _RAN.match(line)
        if ran:
            self.current = None
            self.ran = int(ran["count"])
            return
        totals = _TOTALS.match(line.strip())
        if totals and self.current is None:
            # `failures=4, errors=2, expected failures=1, unexpected successes=1`: keys hold spaces
            self.totals = {k.strip().replace(" ", "_"): int(v)
                           for k, v in re.findall(r"([a-z][a-z ]*)=(\d+)", totals["counts"] or "")}
            return
        if self.current is not None and len(self.current) < MAX_BLOCK:
            self.current.append(line.rstrip())

    def result(self) -> Parsed:
        items: list[Item] = []
        syntax: dict[tuple[str | None, int | None, str], list[str]] = {}
        for block in self.blocks:
            while block and (_DASHES.match(block[-1]) or not block[-1].strip()):
                block.pop()  # the rule before `Ran N tests`
            header = _HEADER.match(block[0]) if block else None
            if header is None:
                continue
            name = _test_name(header["rest"], block[1] if len(block) > 1 else "")
            found = self._syntax_error(block)
            if found is not None:
                syntax.setdefault(found, []).append(name)
                continue
            items.append(self._item(header["kind"], name, block))
        for (file, line, text), importers in syntax.items():
            shown = ", ".join(importers[:5]) + (f" and {len(importers) - 5} more" if len(importers) > 5 else "")
            items.insert(0, Item(text=bounded(f"{text}\n(imported by {shown})"), file=file, line=line))
        if self.ran == 0 and not items and _test_modules(self.ctx.cwd):
            # exit 0 before Python 3.12: all clear on a suite discovery did not find
            items.append(Item(text="no test ran: discovery found no test module (its pattern is `test*.py` unless "
                                   "the project's own `python -m unittest discover -p PATTERN` names another)"))
        return Parsed(items, summary=self._summary())

    def _summary(self) -> str:
        failures, errors = self.totals.get("failures", 0), self.totals.get("errors", 0)
        unexpected = self.totals.get("unexpected_successes", 0)  # they fail the run too
        parts = [f"{failures} failed", plural(errors, "error"),
                 f"{unexpected} unexpected success" + ("es" if unexpected != 1 else ""),
                 f"{self.totals.get('skipped', 0)} skipped",
                 plural(self.totals.get("expected_failures", 0), "expected failure")]
        summary = ", ".join(p for p in parts if not p.startswith("0 "))
        ran = f"{plural(self.ran, 'test')} run" if self.ran is not None else ""
        return "; ".join(p for p in (summary, ran) if p) or "no tests ran"

    def _item(self, kind: str, name: str, block: list[str]) -> Item:
        call = ""
        doctest = next((i for i, line in enumerate(block) if line == "Failed example:" or
                        line.startswith("Exception raised:")), None)
        if doctest is not None and doctest > 0 and (frame := _FRAME.match(block[doctest - 1])):
            where = self._place(frame)
            message = "\n".join(block[doctest:])
        else:
            where = own = None
            method = name.split(" ", 1)[0].rsplit(".", 1)[-1]
            for line in block:
                frame = _FRAME.match(line)
                if frame and frame["func"] is not None:
                    place = self._place(frame)
                    where = place or where  # the deepest frame in the project
                    own = place if place is not None and frame["func"] == method else own
            message = _exception(block)
            if own is not None and where != own:  # failed in a helper: the test's own call into it
                call = f"\n  at {own[0]}:{own[1]}"
        if kind == "UNEXPECTED SUCCESS":  # no traceback: the test method's own line
            message = "passed, but is marked expectedFailure"
            where = _method_line(name, self.ctx)
        return Item(text=bounded(f"{name}: {message or kind}") + call, file=where[0] if where else None,
                    line=where[1] if where else None)

    def _place(self, frame: re.Match[str]) -> tuple[str, int] | None:
        path = repo_path(frame["file"], self.ctx)
        if not path or path.startswith("/") or "site-packages/" in path or path.startswith("../"):
            return None
        return path, int(frame["line"])

    def _syntax_error(self, block: list[str]) -> tuple[str | None, int | None, str] | None:
        error = next((i for i, line in enumerate(block) if _SYNTAX.match(line)), None)
        if error is None:
            return None
        place = next((m for line in reversed(block[:error]) if (m := _FRAME.match(line)) and m["func"] is None),
                     None)
        where = self._place(place) if place else None
        code = block[block.index(place.string) + 1:error] if place else []
        text = "\n".join([block[error], *code])
        return (where[0] if where else None, where[1] if where else None, text)


def _test_modules(cwd: Path) -> bool:
    """Whether there are test modules a discovery could have meant: `*test*.py` at the top or in tests/, test/."""
    for directory in (cwd, cwd / "tests", cwd / "test"):
        try:
            if any(n.endswith(".py") and "test" in n and n != "__init__.py" for n in os.listdir(directory)):
                return True
        except OSError:
            continue
    return False


def _method_line(test_id: str, ctx: ParseContext) -> tuple[str, int] | None:
    """`tests.test_a.T.test_x` -> (tests/test_a.py, the line of `def test_x`): the module is looked for from where
    discovery ran and from its usual start directories."""
    parts = test_id.split(" ", 1)[0].split(".")
    if len(parts) < 2:
        return None
    method = parts[-1]
    for end in range(len(parts) - 1, 0, -1):
        for start in (ctx.cwd, ctx.cwd / "tests", ctx.cwd / "test"):
            path = start.joinpath(*parts[:end]).with_suffix(".py")
            try:
                text = read_bytes(path, 4 * 1024 * 1024, root=ctx.root).decode("utf-8", "replace")
            except (OSError, ValueError):
                continue
            found = re.search(rf"^[ \t]*(?:async[ \t]+)?def[ \t]+{re.escape(method)}\b", text, re.M)
            shown = repo_path(str(path), ctx)
            return (shown, text.count("\n", 0, found.start()) + 1) if found and shown else None
    return None


def _test_name(rest: str, second: str) -> str:
    """`test_x (pkg.tests.T.test_x) [msg] (i=2)` -> `pkg.tests.T.test_x [msg] (i=2)`; a doctest ->
    `pkg.mod.f (doctest)`."""
    if second.startswith("Doctest: "):
        return f"{second[len('Doctest: '):].strip()} (doctest)"
    # a subtest: ` [its message]`, ` (its parameters)`, or both
    match = re.match(r"^(?P<method>\S+) \((?P<id>[^)]*)\)(?P<params>(?: \[.*?\])?(?: \(.*\))?)$", rest)
    if match is None:
        return rest
    test_id = match["id"]
    if test_id.startswith("unittest.loader._FailedTest."):
        return test_id[len("unittest.loader._FailedTest."):]
    if not test_id.endswith("." + match["method"]):
        test_id = f"{test_id}.{match['method']}"  # before Python 3.11 the parentheses held the class only
    return test_id + (match["params"] or "")


def _exception(block: list[str]) -> str:
    """The lines after the traceback: the exception and its message (chained exceptions: the last)."""
    start = None
    for i, line in enumerate(block):
        if line.startswith("Traceback (most recent call last):"):
            start = None
        elif start is None and line and not line.startswith((" ", "-")) and i > 0 and not _HEADER.match(line) \
                and not line.startswith("Doctest: "):
            start = i
    if start is None:
        return ""
    return "\n".join(line for line in block[start:] if line.strip())
