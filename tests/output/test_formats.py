from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

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
                               "actionable": 2, "exit_code": 1, "cached": 0}
    first = data["checks"][0]
    assert set(first) == {"id", "plugin", "type", "status", "priority", "level", "signal", "detail", "next",
                          "items", "duration_s", "cached", "cached_since"}
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


# --- untrusted text: escape codes and control characters, in every format -------------------------------------------

HOSTILE_TEXT = "\x1b[1m\x1b[31mE   assert 1 == 2\x1b[0m bell\x07 nul\x00 #x1B[31mred#x1B[0m \x1b]0;title\x07done"


def hostile() -> Report:
    many = [Item(f"finding {n}", f"src/f{n}.py", n) for n in range(1, 56)]
    results = [
        CheckResult(id="tests", plugin="python", type="command", status=Status.FAIL, priority=10,
                    signal="exit 1: \x1b[31m1 failed\x1b[0m\nsecond line", detail="\n".join(
                        [f"tail {n} \x1b[2mdim\x1b[0m" for n in range(1, 41)]), next="fix it\x0c now",
                    items=[Item(HOSTILE_TEXT + "\n  - bbb\n  + aaa", "tests/t\udcff.py", 3),
                           Item("no file for this one 100% sure, really: yes")]),
        CheckResult(id="lint", plugin="lint", type="command", status=Status.WARN, priority=60, signal="55 findings",
                    items=many),
    ]
    return Report(root=Path("/r"), results=results, duration_s=0.5)


def _clean(text: str) -> bool:
    return not any(ch in text for ch in "\x1b\x00\x07\x0c") and "#x1B" not in text


def test_text_strips_escape_codes_and_keeps_message_lines_together() -> None:
    out = text.render(hostile(), FormatOptions())
    assert _clean(out)
    assert "        - tests/t\udcff.py:3: E   assert 1 == 2 bell\ufffd nul\ufffd red done\n" \
           "              - bbb\n              + aaa\n" in out
    tail = [line for line in out.splitlines() if line.strip().startswith("| tail")]
    assert len(tail) == 0  # items shown: the output tail only with --verbose
    verbose = text.render(hostile(), FormatOptions(verbose=True))
    assert len([line for line in verbose.splitlines() if line.strip().startswith("| tail")]) == 40  # all of it


def test_llm_strips_escape_codes() -> None:
    out = llm.render(hostile(), FormatOptions())
    assert _clean(out)
    assert "[HIGH] tests fail: exit 1: 1 failed second line" in out.splitlines()


def test_junit_is_valid_for_a_junit_reader_whatever_the_tools_printed() -> None:
    from junitparser import Failure, JUnitXml

    document = junit.render(hostile(), FormatOptions())
    xml = JUnitXml.fromstring(document.encode("utf-8"))
    suite = next(iter(xml))
    assert (suite.name, suite.tests, suite.failures, suite.errors) == ("dun", 2, 1, 0)
    case = next(c for c in suite if c.name == "tests")
    [failure] = [r for r in case.result if isinstance(r, Failure)]
    assert failure.message == "exit 1: 1 failed\nsecond line"
    assert "E   assert 1 == 2 bell\ufffd nul\ufffd red done" in (failure.text or "")
    assert _clean(document)


ANNOTATION = re.compile(r"^::(error|warning) (file=[^,:\s]+,(line=\d+,)?)?title=[^:,]+::[^\r\n]*$")


def test_github_annotations_are_well_formed_and_never_drop_an_item() -> None:
    lines = github.render(hostile(), FormatOptions()).splitlines()
    annotations, summary = lines[:-1], lines[-1]
    assert all(ANNOTATION.match(line) for line in annotations), [a for a in annotations if not ANNOTATION.match(a)]
    assert _clean("\n".join(annotations))
    tests = [a for a in annotations if "title=dun tests::" in a]
    assert len(tests) == 2
    assert tests[0].startswith("::error file=tests/t\udcff.py,line=3,title=dun tests::E   assert 1 == 2")
    assert tests[0].endswith("%0A  - bbb%0A  + aaa")
    assert tests[1] == "::error title=dun tests::no file for this one 100%25 sure, really: yes"
    lint = [a for a in annotations if "title=dun lint::" in a]
    assert len(lint) == 51 and lint[-1] == "::warning title=dun lint::... and 5 more: 55 findings"
    assert summary.startswith("1 actionable")


def test_json_matches_its_schema_and_holds_no_control_characters() -> None:
    import jsonschema

    schema = json.loads((Path(jsonfmt.__file__).parent / "report.schema.json").read_text())
    for report in (sample(), hostile()):
        data = json.loads(jsonfmt.render(report, FormatOptions()))
        jsonschema.validate(data, schema)
    data = json.loads(jsonfmt.render(hostile(), FormatOptions()))
    assert data["checks"][0]["items"][0]["text"].startswith("E   assert 1 == 2 bell\ufffd nul\ufffd red done")
    bad = {**data, "checks": [{**data["checks"][0], "signal": "escape \x1b[31m"}]}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, schema)  # the schema itself refuses control characters


def test_a_cached_result_says_since_when_in_every_format() -> None:
    import time

    report = sample()
    made = time.mktime((2026, 3, 4, 5, 6, 0, 0, 0, -1))
    for r in report.results:
        r.cached, r.since = True, made
    opts = FormatOptions()
    for render in (text.render, llm.render, github.render):
        out = render(report, opts)
        assert "since 2026-03-04 05:06" in out and "2026-03-04 05" in out.split("\n")[0], render
    data = json.loads(jsonfmt.render(report, opts))
    assert data["checks"][0]["cached_since"] == time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime(made))
    assert 'name="dun.cached_since"' in junit.render(report, opts)
