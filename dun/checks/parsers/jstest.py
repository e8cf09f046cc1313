"""`jest-json` and `mocha-json`: the JSON reports of jest (`--json --outputFile`), vitest (`--reporter=json`, the
same shape) and mocha (`--reporter json`). One item per failing test: its full name (describe blocks joined with
` > `), the failing assertion's file and line (the innermost frame in the project's code, not the runner's), and the
message with its expected and actual values."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from dun.checks.parsers.base import DocumentParser, Parsed, as_int, bounded, plural, repo_path
from dun.checks.parsers.frames import first_project_frame, located, message_lines, title_line
from dun.engine.model import Item
from dun.engine.sanitize import strip_ansi


def _load(data: bytes) -> tuple[dict[str, Any] | None, str]:
    try:
        doc = json.loads(data.decode("utf-8-sig", "replace"))
    except ValueError as exc:
        return None, f"not a JSON test report: {exc}"
    return (doc, "") if isinstance(doc, dict) else (None, "not a JSON test report: not an object")


class JestParser(DocumentParser):
    def parse(self, data: bytes) -> Parsed:
        doc, problem = _load(data)
        if doc is None:
            return Parsed(problem=problem)
        ctx = self.ctx
        items: list[Item] = []
        suites = doc.get("testResults")
        suites = suites if isinstance(suites, list) else []
        projects = _projects(doc, suites)
        for suite, project in zip(suites, projects, strict=True):
            if not isinstance(suite, dict):
                continue
            file = repo_path(str(suite.get("name") or suite.get("testFilePath") or ""), ctx)
            failing = [a for a in suite.get("assertionResults") or [] if isinstance(a, dict)
                       and a.get("status") == "failed"]
            badge = f"[{project}] " if project else ""
            for case in failing:
                items.append(self._case(case, file, badge))
            message = strip_ansi(str(suite.get("message") or suite.get("failureMessage") or ""))
            if suite.get("status") == "failed" and not failing and message.strip():
                items.append(self._suite_failure(message, file, badge))
        failed, passed = as_int(doc.get("numFailedTests")) or 0, as_int(doc.get("numPassedTests")) or 0
        skipped = (as_int(doc.get("numPendingTests")) or 0) + (as_int(doc.get("numTodoTests")) or 0)
        broken = as_int(doc.get("numRuntimeErrorTestSuites")) or 0
        tally = [f"{failed} failed", f"{passed} passed", f"{skipped} skipped", plural(broken, "file") + " not run"]
        summary = ", ".join(t for t in tally if not t.startswith("0 ")) or "no tests ran"
        return Parsed(items, summary=summary)

    def _suite_failure(self, message: str, file: str | None, badge: str) -> Item:
        """The file did not run: a syntax error (babel's `SyntaxError: FILE: message (line:column)`), a failing
        import, a hook outside any test."""
        parse = _PARSE_ERROR.search(message)
        if parse:
            where = repo_path(parse["file"], self.ctx)
            return Item(text=bounded(f"{badge}{file or where}: {parse['error']}: {parse['text']}"), file=where,
                        line=int(parse["line"]))
        frame = first_project_frame([message], self.ctx)
        return Item(text=bounded(f"{badge}{file or 'test file'}: {message_lines(message) or message}"),
                    file=frame[0] if frame else file, line=frame[1] if frame else None)

    def _case(self, case: dict[str, Any], file: str | None, badge: str) -> Item:
        titles = [str(t) for t in case.get("ancestorTitles") or []] + [str(case.get("title") or "")]
        name = " > ".join(t for t in titles if t) or str(case.get("fullName") or "test")
        failures = [strip_ansi(str(m)) for m in case.get("failureMessages") or []]
        where, call = located(failures, self.ctx, file)
        location = _mapping(case.get("location"))
        line = where[1] if where else as_int(location.get("line"))
        message = "\n".join(message_lines(m) for m in failures) or "failed"
        return Item(text=bounded(f"{badge}{name}: {_drop_error_prefix(message)}") + call,
                    file=where[0] if where else file, line=line)


_PARSE_ERROR = re.compile(r"(?P<error>\w*Error): (?P<file>[^\s:]+\.\w+): (?P<text>[^\n]*?) \((?P<line>\d+):\d+\)")


def _projects(doc: dict[str, Any], suites: list[object]) -> list[str | None]:
    """The jest project (`projects`, by its `displayName`) each entry of `suites` ran in, None where it has none:
    dun's results processor (dun/checks/js/jest-projects.cjs) lists them as `dunProjects`, in the same order; a
    report with a `displayName` of its own is read too. jest's JSON names the file only, and the same test failing
    in two projects was two identical items, neither saying where to re-run it."""
    listed = doc.get("dunProjects")
    if not isinstance(listed, list) or len(listed) != len(suites):
        listed = [s.get("displayName") if isinstance(s, dict) else None for s in suites]
    out: list[str | None] = []
    for name in listed:
        if isinstance(name, dict):
            name = name.get("name")
        out.append(name if isinstance(name, str) and name.strip() else None)
    return out


def _mapping(value: object) -> dict[str, object]:
    return value if isinstance(value, dict) else {}


def _drop_error_prefix(message: str) -> str:
    """jest writes `Error: expect(received).toBe(expected)`: the `Error: ` says nothing."""
    return message[len("Error: "):] if message.startswith("Error: ") else message


class MochaParser(DocumentParser):
    def parse(self, data: bytes) -> Parsed:
        doc, problem = _load(data)
        if doc is None:
            return Parsed(problem=problem)
        items = [self._failure(f) for f in doc.get("failures") or [] if isinstance(f, dict)]
        stats = _mapping(doc.get("stats"))
        tally = [f"{as_int(stats.get('failures')) or 0} failed", f"{as_int(stats.get('passes')) or 0} passed",
                 f"{as_int(stats.get('pending')) or 0} skipped"]
        return Parsed(items, summary=", ".join(t for t in tally if not t.startswith("0 ")) or "no tests ran")

    def _failure(self, failure: Mapping[str, object]) -> Item:
        title, full = str(failure.get("title") or ""), str(failure.get("fullTitle") or "")
        titles = _title_path(full, title)
        if titles is not None:  # dun's reporter: the describe blocks kept apart
            name = " > ".join(t for t in titles if t) or "test"
        else:  # mocha's own: its describe blocks joined with spaces, the levels lost
            parents = full[: -len(title)].strip() if title and full.endswith(title) else ""
            name = f"{parents} > {title}" if parents else full or title or "test"
        err = _mapping(failure.get("err"))
        file = repo_path(str(failure.get("file") or ""), self.ctx)
        stack = strip_ansi(str(err.get("stack") or ""))
        where, call = located([stack], self.ctx, file)
        message = strip_ansi(str(err.get("message") or "")).strip() or message_lines(stack) or "failed"
        message = message.replace(f"{self.ctx.root}/", "")  # a timeout names the file: `(/abs/test/a.spec.js)`
        if "expected" in err and "actual" in err and str(err["actual"]) not in message and "\n" not in message:
            message += f"\nexpected: {err['expected']}\nactual: {err['actual']}"  # no diff in the message
        line = where[1] if where else title_line(file, title, self.ctx)  # no stack: the test's own line
        return Item(text=bounded(f"{name}: {message}") + call, file=where[0] if where else file, line=line)


def _title_path(full: str, title: str) -> list[str] | None:
    """The titles dun's mocha reporter (dun/checks/js/mocha-reporter.cjs) writes as `fullTitle`: a JSON list of
    strings ending with the test's own title; None for mocha's own space-joined `fullTitle`."""
    if not full.startswith("["):
        return None
    try:
        titles = json.loads(full)
    except ValueError:
        return None
    if not isinstance(titles, list) or not titles or titles[-1] != title or not all(isinstance(t, str) for t in titles):
        return None
    return titles
