from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

from dun.engine.model import CheckResult, Item, Report, Status
from dun.output import github, jsonfmt, junit, llm, text
from dun.output.base import FormatOptions


def sample() -> Report:
    results = [
        CheckResult(id="tests", plugin="python", type="command", status=Status.FAIL, priority=10,
                    signal="exit 1: 2 failed", detail="tail line", next="fix the tests",
                    items=[Item("assert 1 == 2", "tests/test_a.py", 12), Item("no location")]),
        CheckResult(id="docs", plugin="docs", type="files", status=Status.WARN, priority=60, signal="1 missing",
                    items=[Item("missing: docs/x.md, with comma", "docs/x.md")]),
        CheckResult(id="lint", plugin="py", type="command", status=Status.PASS, priority=50, signal="exit 0"),
        CheckResult(id="go", plugin="go", type="command", status=Status.SKIP, priority=10, signal="not applicable"),
        CheckResult(id="cov", plugin="python", type="coverage", status=Status.ERROR, priority=40,
                    signal="coverage.xml: not well-formed"),
    ]
    return Report(root=Path("/r"), results=results, duration_s=1.25)


def test_json_is_stable_and_complete() -> None:
    data = json.loads(jsonfmt.render(sample(), FormatOptions()))
    assert data["schema_version"] == 1
    assert data["summary"] == {"pass": 1, "fail": 1, "warn": 1, "skip": 1, "error": 1, "total": 5,
                               "actionable": 2, "exit_code": 1}
    first = data["checks"][0]
    assert set(first) == {"id", "plugin", "type", "status", "priority", "level", "signal", "detail", "next",
                          "items", "duration_s"}
    assert first["level"] == "HIGH"
    assert first["items"][0] == {"file": "tests/test_a.py", "line": 12, "text": "assert 1 == 2"}


def test_text_hides_passes_unless_verbose_and_colors_on_request() -> None:
    out = text.render(sample(), FormatOptions())
    assert "tests/test_a.py:12: assert 1 == 2" in out
    assert "next: fix the tests" in out
    assert "go " not in out  # skipped checks only with --verbose
    assert out.strip().splitlines()[-1] == "2 actionable: 1 pass, 1 fail, 1 warn, 1 skip, 1 error in 1.2s"
    assert "\x1b[" not in out
    assert "\x1b[31m" in text.render(sample(), FormatOptions(color=True))
    assert "not applicable" in text.render(sample(), FormatOptions(verbose=True))


def test_llm_is_compact_and_only_actionable() -> None:
    lines = llm.render(sample(), FormatOptions()).splitlines()
    assert lines[0] == "[HIGH] tests fail: exit 1: 2 failed"
    assert "  tests/test_a.py:12 assert 1 == 2" in lines
    assert not any("lint" in line for line in lines)


def test_junit_is_valid_xml_with_failures_and_errors() -> None:
    root = ET.fromstring(junit.render(sample(), FormatOptions()).split("\n", 1)[1])
    suite = root.find("testsuite")
    assert suite is not None
    counts = (suite.get("tests"), suite.get("failures"), suite.get("errors"), suite.get("skipped"))
    assert counts == ("5", "1", "1", "1")
    case = suite.find("testcase[@name='tests']")
    assert case is not None
    failure = case.find("failure")
    assert failure is not None and failure.get("message") == "exit 1: 2 failed"


def test_github_annotations_carry_file_line_and_escape() -> None:
    lines = github.render(sample(), FormatOptions()).splitlines()
    assert "::error file=tests/test_a.py,line=12,title=dun tests::assert 1 == 2" in lines
    assert "::warning file=docs/x.md,title=dun docs::missing: docs/x.md, with comma" in lines
    assert "::error title=dun cov::coverage.xml: not well-formed" in lines
