"""`junit-xml`: JUnit XML test reports, the format nearly every test runner can write (pytest `--junitxml`, jest-junit,
cargo-nextest, gotestsum, Maven Surefire, PHPUnit ...). One item per failed or errored test case.

The report is untrusted input: defusedxml refuses entity tricks, junitparser reads the test cases and their results.
"""

from __future__ import annotations

import os
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import defusedxml.ElementTree as SafeET
from defusedxml import DefusedXmlException
from junitparser import Attr, Error, Failure, Skipped, TestCase

from dun.checks.parsers.base import DocumentParser, ParseContext, Parsed, as_int, bounded, plural, repo_path
from dun.checks.parsers.frames import located, message_lines, project_frames, title_line
from dun.core.textfiles import read_bytes
from dun.engine.model import Item
from dun.engine.sanitize import strip_ansi

# pytest's traceback entries: `tests/test_a.py:12: in test_x` (--tb=short) or `tests/test_a.py:12: AssertionError`.
_PYTEST_FRAME = re.compile(r"^(?P<file>[^\s:][^:\n]*?):(?P<line>\d+): (?:in (?P<func>\S+)|\w)", re.M)
# Any `path.ext:line` in a stack trace (jest's `at f (/abs/x.test.js:5:17)`, Go's `x_test.go:12:`).
_LOCATION = re.compile(r"(?P<file>[\w./\\@+-]*[\w-]\.[A-Za-z]\w*):(?P<line>\d+)")
TAIL_FRAMES = 3
_JS_STACK = re.compile(r"^\s+at\s|^\s*❯\s", re.M)  # node's and vitest's stacks: the innermost frame first


class _Case(TestCase):
    """A test case with the location attributes pytest (xunit1), jest-junit and others add."""

    file = Attr()
    line = Attr()


class JUnitParser(DocumentParser):
    def parse(self, data: bytes) -> Parsed:
        ctx = self.ctx
        try:
            root = SafeET.fromstring(data)
        except (ET.ParseError, DefusedXmlException) as exc:
            return Parsed(problem=f"not a JUnit XML report: {exc}")
        if root.tag not in ("testsuites", "testsuite"):
            return Parsed(problem=f"not a JUnit XML report: root element <{root.tag}>")
        counts = {"failed": 0, "error": 0, "passed": 0, "skipped": 0}
        items: list[Item] = []
        syntax: dict[tuple[str | None, int, str], list[str]] = {}  # one broken file: one item, not one per importer
        describes = _bun_describes(root) if root.get("name") == "bun test" else {}
        projects = _vitest_projects(root, self.source)
        for suite in root.iter("testsuite"):
            badge = f"[{projects[suite]}] " if suite in projects else ""
            pytest = suite.get("name") == "pytest" or (root.get("name") or "").startswith("pytest")
            for element in _final_attempts(suite.findall("testcase")) if pytest else suite.findall("testcase"):
                if suite in describes and element.get("file"):  # bun: `describe > test`, the file the item's own
                    element.set("name", " > ".join([*describes[suite], element.get("name") or ""]))
                    element.set("classname", element.get("file") or "")
                case: _Case = _Case.fromelem(element)  # type: ignore[no-untyped-call]  # junitparser leaves it untyped
                outcome = _outcome(case)
                counts[outcome] += 1
                if outcome in ("failed", "error"):
                    broken = _syntax_error(case, ctx)
                    if broken is not None:
                        syntax.setdefault(broken, []).append(case.file or case.name or "")
                    else:
                        item = _item(case, outcome, pytest, ctx)
                        items.append(Item(text=badge + item.text, file=item.file, line=item.line) if badge else item)
        for (file, line, text), importers in reversed(syntax.items()):
            shown = ", ".join(importers[:5]) + (f" and {len(importers) - 5} more" if len(importers) > 5 else "")
            items.insert(0, Item(text=bounded(f"{text}\n(imported by {shown})"), file=file, line=line))
        tally = [f"{counts['failed']} failed", plural(counts["error"], "error"), f"{counts['passed']} passed",
                 f"{counts['skipped']} skipped"]
        summary = ", ".join(t for t in tally if not t.startswith("0 "))
        return Parsed(items, summary=summary or "no test cases")


    def from_output(self, output: list[str]) -> list[Item]:
        from dun.checks.parsers.unhandled import vitest_unhandled

        return vitest_unhandled(output, self.ctx)


def _final_attempts(cases: list[ET.Element]) -> list[ET.Element]:
    """pytest-rerunfailures writes each attempt of a test it re-ran as a <testcase> of its own, the earlier ones
    empty: counted, a test re-run twice was three passed tests. An empty case with the same test after it is an
    earlier attempt; a test's second case holding a result (an error in teardown after a failure) stays."""
    later: set[tuple[str | None, str | None]] = set()
    kept: list[ET.Element] = []
    for element in reversed(cases):
        key = (element.get("classname"), element.get("name"))
        if key in later and not len(element):
            continue
        later.add(key)
        kept.append(element)
    return kept[::-1]


def _bun_describes(root: ET.Element) -> dict[ET.Element, list[str]]:
    """bun's report nests a <testsuite> per describe block inside its file's; its testcases' classname lists those
    blocks innermost first (`inner > outer`). Each suite -> its describe titles, outermost first."""
    titles: dict[ET.Element, list[str]] = {}

    def walk(suite: ET.Element, above: list[str]) -> None:
        titles[suite] = above
        for child in suite.findall("testsuite"):
            walk(child, [*above, child.get("name") or ""])

    for top in root.findall("testsuite"):  # a file's suite: its name is the file, not a describe block
        walk(top, [])
    return titles


def _outcome(case: TestCase) -> str:
    results = case.result
    if any(isinstance(r, Failure) for r in results):
        return "failed"
    if any(isinstance(r, Error) for r in results):
        return "error"
    if any(isinstance(r, Skipped) for r in results):
        return "skipped"
    return "passed"


def _item(case: _Case, outcome: str, pytest: bool, ctx: ParseContext) -> Item:
    result = next(r for r in case.result if isinstance(r, Failure if outcome == "failed" else Error))
    text = strip_ansi(result.text or "")
    message = strip_ansi(result.message or "").strip()
    raised = [line[4:] for line in text.splitlines() if line.startswith("E   ")]  # pytest's exception lines
    if raised and raised[0].strip() not in message:
        message = f"{message}: " + "\n".join(raised) if message else "\n".join(raised)
    whole = message_lines(text)  # mocha's and others' message attribute keeps only the first line of the body
    first = message.split("\n", 1)[0].strip()
    # (an XML attribute's line breaks read back as spaces: compare the words)
    if not pytest and not raised and len(whole) >= len(message) and (" ".join(first.split()) in " ".join(whole.split())
                                                                     or not first):
        message = whole
    message = "\n".join(line for line in message.splitlines() if line.strip())  # pytest's diffs pad with blanks
    # a doctest's `/abs/repo/pkg/mod.py:4: DocTestFailure`: the repository's own paths as the items give them
    message = message.replace(f"{os.path.realpath(ctx.root)}/", "").replace(f"{ctx.root}/", "")
    if not message:
        message = next((line.strip() for line in text.splitlines() if line.strip()), outcome)
    file = case.file or _file_from_classname(case.classname or "", ctx.cwd)
    frames = [(m["file"], int(m["line"]), m["func"]) for m in _PYTEST_FRAME.finditer(text)]
    if pytest and file and not (ctx.cwd / file).is_file():
        # pytest writes `file` from its rootdir (a `-c tests/pytest.ini` puts it in tests/), its traceback from
        # where it ran: the traceback's path of the same file is the one from here
        bases = dict.fromkeys(os.path.dirname(f) for f, _, _ in frames if not os.path.isabs(f))
        file = next((f for f, _, _ in frames if _same_file(f, file) and (ctx.cwd / f).is_file()), None) or \
            next((p for base in bases if base and (ctx.cwd / (p := f"{base}/{file}")).is_file()), file)
    if not frames:
        frames = [(m["file"], int(m["line"]), None) for m in _LOCATION.finditer(text)]
    line = None
    if not pytest and file and _JS_STACK.search(text):
        # vitest, jest-junit: the innermost project frame is the failing assertion, in a helper when the test called
        # one; the test's own call into it is named after the message
        where, call = located([text], ctx, repo_path(file, ctx))
        if where is None:  # frames only in installed code: the test's own line, from its title
            title = (case.name or "").rsplit(" > ", 1)[-1]
            return Item(text=f"{_test_id(case, file, pytest)}: {bounded(message)}", file=repo_path(file, ctx),
                        line=title_line(repo_path(file, ctx), title, ctx))
        return Item(text=f"{_test_id(case, file, pytest)}: {bounded(message)}{call}", file=where[0], line=where[1])
    at = None  # the failing statement's file when it is not the test's own
    if file:
        inside = [n for f, n, _ in frames if _same_file(f, file)]
        line = inside[-1] if inside else None  # the deepest frame in the test's own file: the failing statement
        own = [(f, n) for f, n, _ in frames if not os.path.isabs(f) and (ctx.cwd / f).is_file()]
        if line is None and pytest and own:  # a fixture's setup or teardown that failed in conftest.py
            at, line = own[-1]
    elif frames:
        # no file attribute: the project's own frame, never the runner's (node_modules/tape/lib/test.js)
        own = project_frames(text, ctx)
        if own:
            file, line = own[0] if _JS_STACK.search(text) else own[-1]  # JavaScript stacks list the innermost first
        else:
            file, line = frames[-1][0], frames[-1][1]
    if line is None and case.line and case.line.strip().isdigit():
        declared = int(case.line)
        line = declared + 1 if pytest else as_int(declared)  # pytest writes the 0-based line of the `def`
    if line is None and file and not pytest:  # no stack (vitest's thrown string): the test's own line, by its title
        line = title_line(repo_path(file, ctx), (case.name or "").rsplit(" > ", 1)[-1], ctx)
    body = f"{_test_id(case, file, pytest)}: {bounded(message)}"
    if len(frames) > 1:
        body += "".join(f"\n  at {f}:{n}" + (f" in {func}" if func else "") for f, n, func in frames[-TAIL_FRAMES:])
    return Item(text=body, file=repo_path(at or file, ctx), line=line)


_SYNTAX = re.compile(r"^E?\s*(SyntaxError|IndentationError|TabError): ")
_SYNTAX_PLACE = re.compile(r'^E?\s*File "(?P<file>[^"]+)", line (?P<line>\d+)$')


def _syntax_error(case: _Case, ctx: ParseContext) -> tuple[str | None, int, str] | None:
    """A module that does not parse, as every test file importing it reports it: (file, line, text) at the broken
    line, not at each importer's import statement."""
    results = [r for r in case.result if isinstance(r, Failure | Error)]
    lines = strip_ansi(results[0].text or "").splitlines() if results else []
    error = next((i for i, line in enumerate(lines) if _SYNTAX.match(line)), None)
    if error is None:
        return None
    place = next((i for i in range(error - 1, -1, -1) if _SYNTAX_PLACE.match(lines[i])), None)
    if place is None:
        return None
    found = _SYNTAX_PLACE.match(lines[place])
    assert found is not None
    code = [line[1:] if line.startswith("E") else line for line in lines[place + 1:error]]
    indent = min((len(c) - len(c.lstrip()) for c in code if c.strip()), default=0)
    text = "\n".join([lines[error].lstrip("E").strip(), *("    " + c[indent:] for c in code)])
    return repo_path(found["file"], ctx), int(found["line"]), text


def _same_file(found: str, wanted: str) -> bool:
    found, wanted = found.replace("\\", "/"), wanted.replace("\\", "/")
    return found == wanted or found.endswith("/" + wanted.lstrip("./")) or wanted.endswith("/" + found.lstrip("./"))


def _file_from_classname(classname: str, cwd: Path) -> str | None:
    """pytest's xunit2 reports have no file: `tests.test_a.TestThing` names the module `tests/test_a.py`; vitest's
    class name is the test file itself (`test/calc.test.ts`)."""
    if "/" in classname and (cwd / classname).is_file():
        return classname
    parts = classname.split(".")
    for end in range(len(parts), 0, -1):
        candidate = "/".join(parts[:end]) + ".py"
        if (cwd / candidate).is_file():
            return candidate
    return None


def _test_id(case: TestCase, file: str | None, pytest: bool) -> str:
    name, classname = case.name or "", case.classname or ""
    if file and classname == file and name:  # vitest: the file is the item's own; `describe > test` is the name
        return name
    if pytest and file and file.endswith(".py"):
        module = file[:-3].replace("/", ".")
        inner = classname[len(module):].lstrip(".") if classname.startswith(module) else ""
        return "::".join(p for p in (file, *inner.split("."), name) if p)
    if not classname or name.startswith(classname):
        return name or classname
    return f"{classname}::{name}"


def _vitest_projects(root: ET.Element, source: Path | None) -> dict[ET.Element, str]:
    """The vitest project (`projects`, by its name) of each top-level <testsuite>, from the list dun's reporter
    (dun/checks/js/vitest-projects.mjs) writes beside the report, `FILE.projects.json`: one entry per test file, in
    the report's order, each naming its file, used only where every file matches (a list of another run names
    nothing). vitest's JUnit names the file only: the same test failing in two projects was two identical items."""
    if source is None:
        return {}
    import json  # only where a report file is read

    try:
        listed = json.loads(read_bytes(Path(f"{source}.projects.json"), 4 * 1024 * 1024))
    except (OSError, ValueError):
        return {}
    suites = list(root) if root.tag == "testsuites" else [root]
    suites = [s for s in suites if s.tag == "testsuite"]
    if not isinstance(listed, list) or len(listed) != len(suites):
        return {}
    out: dict[ET.Element, str] = {}
    for suite, entry in zip(suites, listed, strict=True):
        if not isinstance(entry, dict) or entry.get("file") != suite.get("name"):
            return {}
        name = entry.get("project")
        if isinstance(name, str) and name.strip():
            out[suite] = name.strip()
    return out
