"""`ava`: AVA's own report. AVA writes no JSON or JUnit report, and its TAP output places an assertion at AVA's
own frame; its default report names each failing test with the file and line of the failing assertion, the
assertion's difference (actual against expected) or the thrown error and its stack, so that report is read.

After the list of results, a line of `─` opens the failures: one block each (title, `file:line`, the code around
it, the details, `› file:line:column`), separated by blank lines, closed by another `─`.
"""

from __future__ import annotations

import os
import re
import textwrap

from dun.checks.parsers.base import LineParser, ParseContext, Parsed, bounded, repo_path
from dun.checks.parsers.frames import first_project_frame, title_line
from dun.engine.model import Item

_RULE = re.compile(r"^\s*─+\s*$")
_RESULT = re.compile(r"^\s*(?P<mark>✔|✘|-)\s")
_LOCATION = re.compile(r"^\s*(?:›\s*)?(?:file://)?(?P<file>[^\s:]+\.[A-Za-z]\w*):(?P<line>\d+)(?::\d+)?\s*$")
_EXCERPT = re.compile(r"^\s*\d+:\s")
_FRAME_LINE = re.compile(r"^\s+at\s")
_TOTALS = re.compile(r"^\s*(?P<count>\d+) (?:tests? )?(?P<what>failed|passed|skipped|todo|known failures?)")
_UNCAUGHT = re.compile(r"^\s*(?:Uncaught exception|Unhandled rejection) in (?P<file>\S+)")
_ERROR = re.compile(r"^\s*[\w.]*(?:Error|Exception)\b[^:]*:\s*\S")
MAX_LINES = 20_000
MAX_BLOCK = 200
MAX_TEST_FILES = 5_000  # looked at for a test's declaration
_TEST_FILE = re.compile(r"(^|/)(test|tests|__tests__)/|(^|[./-])(test|spec)\.[cm]?[jt]sx?$"
                        r"|(^|/)test-[^/]*\.[cm]?[jt]sx?$")
_SCRIPT = re.compile(r"\.[cm]?[jt]sx?$")


class AvaParser(LineParser):
    def __init__(self, options: dict[str, object], ctx: ParseContext) -> None:
        super().__init__(options, ctx)
        self.rules = 0
        self.lines: list[str] = []  # the failure section
        self.marks = {"✔": 0, "✘": 0, "-": 0}
        self.totals: dict[str, int] = {}
        self.uncaught: list[list[str]] = []  # `Uncaught exception in FILE` blocks

    def feed(self, line: str) -> None:
        totals = _TOTALS.match(line)
        if totals:
            self.totals[totals["what"].split()[0]] = int(totals["count"])
            return
        uncaught = _UNCAUGHT.match(line)
        if uncaught:  # a test file that threw outside any test (one that does not parse): before the results
            self.uncaught.append([line.strip()])
            return
        if _RULE.match(line):
            self.rules += 1
            return
        result = _RESULT.match(line)
        if result and self.rules == 0:
            self.marks[result["mark"]] += 1
            if self.uncaught:
                self.uncaught.append([])  # the block above has ended
            return
        if self.uncaught and self.uncaught[-1] and self.rules == 0:
            if len(self.uncaught[-1]) < MAX_BLOCK:
                self.uncaught[-1].append(line.rstrip())
        elif self.rules == 1 and len(self.lines) < MAX_LINES:
            self.lines.append(line.rstrip())

    def result(self) -> Parsed:
        section = self.lines if self.rules >= 2 else []  # one rule alone closes a run without failures
        items = [self._uncaught(block) for block in self.uncaught if block]
        items += [self._item(block) for block in _blocks(section)]
        failed = self.totals.get("failed", self.marks["✘"])
        passed = self.totals.get("passed", self.marks["✔"])
        tally = [f"{failed} failed", f"{passed} passed", f"{self.totals.get('skipped', self.marks['-'])} skipped"]
        return Parsed(items, summary=", ".join(t for t in tally if not t.startswith("0 ")) or "no tests ran")

    def _uncaught(self, block: list[str]) -> Item:
        header = _UNCAUGHT.match(block[0])
        assert header is not None
        error = next((line.strip() for line in block if _ERROR.match(line)), header.group(0).strip())
        place = next((m for line in block[1:] if (m := _LOCATION.match(line))), None)
        file, line = (repo_path(place["file"], self.ctx), int(place["line"])) if place else (None, None)
        if file is None:
            frame = first_project_frame(["\n".join(block)], self.ctx)
            file, line = frame if frame else (repo_path(header["file"], self.ctx), None)
        return Item(text=bounded(f"{header['file']}: {error}"), file=file, line=line)

    def _item(self, block: list[str]) -> Item:
        title = block[0].strip()
        where: tuple[str, int] | None = None
        message: list[str] = []
        for at, line in enumerate(block[1:], 1):
            if line.strip() == "Error" and at + 1 < len(block) and _FRAME_LINE.match(block[at + 1]):
                continue  # AVA's own error for a rejection with a non-Error: its stack is AVA's
            location = _LOCATION.match(line)
            if location:
                path = repo_path(location["file"], self.ctx)
                where = where or ((path, int(location["line"])) if path else None)
            elif not _EXCERPT.match(line) and not _FRAME_LINE.match(line) and line.strip():
                message.append(line.rstrip())
        if where is None:
            where = first_project_frame(["\n".join(block)], self.ctx)
        if where is None:  # a thrown string or object has no stack: the test's own declaration
            where = _declared(title, self.ctx)
        body = textwrap.dedent("\n".join(message))  # the block's margin, not a diff's own indentation
        text = f"{title}: {body}" if message else title
        return Item(text=bounded(text), file=where[0] if where else None, line=where[1] if where else None)


def _blocks(lines: list[str]) -> list[list[str]]:
    """Failures are separated by two or more blank lines; one blank line separates the parts of one."""
    blocks: list[list[str]] = []
    current: list[str] = []
    blank = 0
    for line in lines:
        if not line.strip():
            blank += 1
            continue
        if blank >= 2 and current:
            blocks.append(current)
            current = []
        blank = 0
        current.append(line)
    if current:
        blocks.append(current)
    return blocks


def _declared(title: str, ctx: ParseContext) -> tuple[str, int] | None:
    """Where the test titled `title` is declared: AVA names a test `FILE › TITLE` when the run has several files
    (FILE its path under the test directory, without `.test.js`), else `TITLE`; the one test file, of those whose
    path fits, that writes the title as a string literal once."""
    *prefix, name = title.split(" › ")
    found: list[tuple[str, int]] = []
    for file in _test_files(ctx.root):
        stem = _SCRIPT.sub("", file)
        stem = re.sub(r"[.-](test|spec)$", "", stem)
        if prefix and not (stem == "/".join(prefix) or stem.endswith("/" + "/".join(prefix))):
            continue
        line = title_line(file, name, ctx)
        if line is not None:
            found.append((file, line))
    return found[0] if len(found) == 1 else None


def _test_files(root: os.PathLike[str] | str) -> list[str]:
    files: list[str] = []
    for top, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d != "node_modules" and not d.startswith("."))
        rel = os.path.relpath(top, root).replace(os.sep, "/")
        for name in sorted(names):
            path = name if rel == "." else f"{rel}/{name}"
            if _SCRIPT.search(name) and _TEST_FILE.search(path):
                files.append(path)
                if len(files) >= MAX_TEST_FILES:
                    return files
    return files
