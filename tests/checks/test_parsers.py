"""The command check's output parsers, fed the documents and streams real tools write."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from dun.checks.parsers.base import ParseContext, Parsed
from dun.checks.parsers.run import ParserRun
from dun.core.proc import MAX_LINE_BYTES
from dun.engine.model import Item

ESC = "\x1b"


def options(kind: str, **extra: Any) -> dict[str, Any]:
    base = {"type": kind, "pattern": None, "file": None, "issue_path": "", "issue_fields": None,
            "fail_on_items": False, "max_items": 50}
    return {**base, **extra}


def parse(root: Path, kind: str, output: str, cwd: Path | None = None, **extra: Any) -> Parsed:
    run = ParserRun(options(kind, **extra), ParseContext(root, cwd or root))
    for line in output.split("\n"):
        run.feed(line)
    return run.finish()


# --- junit-xml --------------------------------------------------------------------------------------------------

PYTEST_XUNIT1 = """<?xml version="1.0" encoding="utf-8"?><testsuites name="pytest tests"><testsuite name="pytest"
 errors="1" failures="2" skipped="1" tests="5"><testcase classname="tests.test_a" name="test_long"
 file="tests/test_a.py" line="4"><failure message="AssertionError: assert 'aaa' == 'bbb'&#10;  &#10;  - bbb&#10;  + aaa"
>#x1B[1m#x1B[31mtests/test_a.py#x1B[0m:8: in test_long
    assert a == b
E   AssertionError: assert 'aaa' == 'bbb'</failure></testcase><testcase classname="tests.test_a.TestThing"
 name="test_method[a b]" file="tests/test_a.py" line="10"><failure message="AssertionError: x should be 3"
>tests/test_a.py:20: in test_method
    helper.check(4)
src/helper.py:2: in check
    assert x == 3
E   AssertionError: x should be 3</failure></testcase><testcase classname="" name="tests.test_broken"
 file="tests/test_broken.py" line="0"><error message="collection failure">tests/test_broken.py:1: in &lt;module&gt;
    import nothere
E   ModuleNotFoundError: No module named 'nothere'</error></testcase><testcase classname="tests.test_a"
 name="test_ok" file="tests/test_a.py" line="30"/><testcase classname="tests.test_a" name="test_skip"
 file="tests/test_a.py" line="33"><skipped message="nope"/></testcase></testsuite></testsuites>"""


def test_junit_pytest_items_have_node_id_failing_line_and_full_message(tmp_path: Path) -> None:
    parsed = parse(tmp_path, "junit-xml", PYTEST_XUNIT1)
    assert parsed.summary == "2 failed, 1 error, 1 passed, 1 skipped"
    long, method, broken = parsed.items
    assert (long.file, long.line) == ("tests/test_a.py", 8)  # the failing statement, not the def line
    assert long.text == "tests/test_a.py::test_long: AssertionError: assert 'aaa' == 'bbb'\n  - bbb\n  + aaa"
    assert (method.file, method.line) == ("tests/test_a.py", 20)  # the last frame in the test's own file
    assert method.text.startswith("tests/test_a.py::TestThing::test_method[a b]: AssertionError: x should be 3")
    assert method.text.endswith("\n  at tests/test_a.py:20 in test_method\n  at src/helper.py:2 in check")
    assert broken.file == "tests/test_broken.py" and broken.line == 1
    assert "No module named 'nothere'" in broken.text  # a generic message gets pytest's exception lines
    assert all("#x1B" not in i.text and ESC not in i.text for i in parsed.items)


def test_junit_def_line_when_the_trace_names_no_line_of_the_test(tmp_path: Path) -> None:
    xml = ('<testsuite name="pytest"><testcase classname="t" name="test_x" file="t.py" line="6">'
           '<failure message="boom">somewhere/else.py:3: in f</failure></testcase></testsuite>')
    [item] = parse(tmp_path, "junit-xml", xml).items
    assert (item.file, item.line) == ("t.py", 7)  # pytest's line attribute is 0-based


def test_junit_message_is_bounded(tmp_path: Path) -> None:
    xml = (f'<testsuite><testcase classname="c" name="n"><failure message="{"x" * 5000}"/></testcase>'
           "</testsuite>")
    [item] = parse(tmp_path, "junit-xml", xml).items
    assert 500 <= len(item.text) <= 520 and item.text.endswith("…")


def test_junit_xunit2_finds_the_file_from_the_class_name(tmp_path: Path) -> None:
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_b.py").write_text("")
    xml = ('<testsuites><testsuite name="pytest"><testcase classname="tests.test_b.TestK" name="test_y">'
           '<failure message="AssertionError">tests/test_b.py:9: in test_y\nE   AssertionError</failure>'
           "</testcase></testsuite></testsuites>")
    [item] = parse(tmp_path, "junit-xml", xml).items
    assert item == Item("tests/test_b.py::TestK::test_y: AssertionError", "tests/test_b.py", 9)


def test_junit_jest_report_with_absolute_stack_paths(tmp_path: Path) -> None:
    xml = f"""<testsuites name="jest tests"><testsuite name="sum" tests="2" failures="1">
<testcase classname="sum adds" name="sum adds 1 + 2" file="src/sum.test.js"><failure>Error: expect(received).toBe(3)
    at Object.&lt;anonymous&gt; ({tmp_path}/src/sum.test.js:5:17)
    at Promise.then.completed ({tmp_path}/node_modules/jest-circus/build/utils.js:298:28)</failure></testcase>
<testcase classname="sum other" name="sum other"/></testsuite></testsuites>"""
    parsed = parse(tmp_path, "junit-xml", xml)
    assert parsed.summary == "1 failed, 1 passed"
    [item] = parsed.items
    assert (item.file, item.line) == ("src/sum.test.js", 5)
    assert item.text.startswith("sum adds 1 + 2: Error: expect(received).toBe(3)")


def test_junit_without_a_file_takes_the_projects_frame_not_the_runners(tmp_path: Path) -> None:
    # tap-xunit's report of a tape failure: the stack starts in tape itself, the message attribute is "---"
    xml = f"""<testsuites><testsuite name="math adds" tests="2" failures="1">
<testcase name="#2 sum is wrong"><failure message="---">---
    operator: equal
    expected: 3
    actual:   2
    at: Test.&lt;anonymous&gt; ({tmp_path}/test/math.js:4:5)
    stack: |-
      Error: sum is wrong
          at Test.assert [as _assert] ({tmp_path}/node_modules/tape/lib/test.js:489:48)
          at Test.&lt;anonymous&gt; ({tmp_path}/test/math.js:4:5)
</failure></testcase><testcase name="#1 one plus one"/></testsuite></testsuites>"""
    [item] = parse(tmp_path, "junit-xml", xml).items
    assert (item.file, item.line) == ("test/math.js", 4)
    assert "expected: 3" in item.text and "actual:   2" in item.text


def test_junit_keeps_the_whole_failure_body_when_the_message_is_its_first_line(tmp_path: Path) -> None:
    # mocha's xunit reporter: message= holds the first line only, the body the expression and the values
    xml = """<testsuite name="Mocha Tests" tests="1" failures="1"><testcase classname="math" name="math adds"
 time="0"><failure message="Expected values to be strictly equal:">AssertionError [ERR_ASSERTION]: Expected values \
to be strictly equal:

2 !== 3

    at Context.&lt;anonymous&gt; (test/math.test.js:4:12)
    at process.processImmediate (node:internal/timers:483:21)</failure></testcase></testsuite>"""
    [item] = parse(tmp_path, "junit-xml", xml.replace("\\\n", "")).items
    assert (item.file, item.line) == ("test/math.test.js", 4)
    assert item.text == "math adds: AssertionError [ERR_ASSERTION]: Expected values to be strictly equal:\n2 !== 3"


def test_junit_a_syntax_error_is_one_item_at_the_broken_line_not_one_per_importer(tmp_path: Path) -> None:
    case = """<testcase classname="" name="tests.{name}" file="tests/{name}.py"><error message="collection failure"
>tests/{name}.py:2: in &lt;module&gt;
    from pkg import broken
E     File "{root}/pkg/broken.py", line 3
E       def f(:
E             ^
E   SyntaxError: invalid syntax</error></testcase>"""
    xml = ('<testsuites><testsuite name="pytest" errors="2">' + case.format(name="test_a", root=tmp_path) +
           case.format(name="test_b", root=tmp_path) + "</testsuite></testsuites>")
    parsed = parse(tmp_path, "junit-xml", xml)
    assert parsed.items == [Item("SyntaxError: invalid syntax\n    def f(:\n          ^\n"
                                 "(imported by tests/test_a.py, tests/test_b.py)", "pkg/broken.py", 3)]
    assert parsed.summary == "2 errors"


# --- tap --------------------------------------------------------------------------------------------------------

def test_tap14_subtests_name_their_parents_and_a_failed_parent_is_not_an_item(tmp_path: Path) -> None:
    tap = f"""TAP version 14
# Subtest: math
    # Subtest: adds
    not ok 1 - adds
      ---
      location: '{tmp_path}/test/a.test.js:5:11'
      error: |-
        Expected values to be strictly equal:

        2 !== 3
      expected: 3
      actual: 2
      operator: 'strictEqual'
      stack: |-
        TestContext.<anonymous> ({tmp_path}/test/a.test.js:6:12)
        Test.runInAsyncScope (node:async_hooks:206:9)
      ...
    ok 2 - passes
    not ok 3 - later # TODO not written yet
    ok 4 - flaky # SKIP
    1..4
not ok 1 - math
  ---
  failureType: 'subtestsFailed'
  ...
not ok 2 - no diagnostics
Bail out! database down
1..2
# pass 1
# fail 2
"""
    parsed = parse(tmp_path, "tap", tap)
    assert [(i.file, i.line) for i in parsed.items] == [("test/a.test.js", 6), (None, None)]
    assert parsed.items[0].text == ("math > adds: Expected values to be strictly equal:\n\n2 !== 3\n"
                                    "operator: strictEqual")
    assert parsed.items[1].text == "no diagnostics"
    assert parsed.summary == "2 failed, 1 passed, 2 skipped"


def test_tap_node_file_that_does_not_load_is_an_item_at_its_syntax_error(tmp_path: Path) -> None:
    tap = f"""TAP version 13
# {tmp_path}/test/broken.test.js:3
#   const a = ;
#             ^
# SyntaxError: Unexpected token ';'
#     at wrapSafe (node:internal/modules/cjs/loader:1464:18)
# Node.js v20.20.2
# Subtest: {tmp_path}/test/broken.test.js
not ok 1 - {tmp_path}/test/broken.test.js
  ---
  location: '{tmp_path}/test/broken.test.js:1:1'
  failureType: 'testCodeFailure'
  error: 'test failed'
  ...
1..1
"""
    [item] = parse(tmp_path, "tap", tap).items
    assert (item.file, item.line) == ("test/broken.test.js", 3)
    assert item.text == "test/broken.test.js: SyntaxError: Unexpected token ';'"


def test_tap_run_that_stops_before_its_plan_is_an_item_at_the_thrown_error(tmp_path: Path) -> None:
    tap = f"""TAP version 13
# throws
{tmp_path}/test/x.js:12
  throw new Error('boom');
  ^

Error: boom
    at Test.<anonymous> ({tmp_path}/test/x.js:12:9)
    at Test.run ({tmp_path}/node_modules/tape/lib/test.js:151:28)
"""
    [item] = parse(tmp_path, "tap", tap).items
    assert (item.file, item.line, item.text) == ("test/x.js", 12, "throws: stopped: Error: boom")


@pytest.mark.parametrize("xml", [
    "<testsuite><testcase",
    "<html><body/></html>",
    '<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "aaaa"><!ENTITY b "&a;&a;&a;">]><testsuite name="&b;"/>',
])
def test_junit_bad_or_hostile_reports_are_problems_not_crashes(tmp_path: Path, xml: str) -> None:
    parsed = parse(tmp_path, "junit-xml", xml)
    assert parsed.items == [] and parsed.problem.startswith("not a JUnit XML report")


def test_report_file_replaces_the_output_and_a_missing_one_is_named(tmp_path: Path) -> None:
    report = tmp_path / "out" / "junit.xml"
    run = ParserRun(options("junit-xml", file="out/junit.xml"), ParseContext(tmp_path, tmp_path))
    report.parent.mkdir()
    report.write_text("stale")
    run.before()
    assert not report.exists()  # a stale report from an earlier run is never read
    run.feed("<testsuite>not this</testsuite>")
    assert run.finish().problem == "no report written to out/junit.xml"
    report.write_text('<testsuite><testcase name="t"><error message="boom"/></testcase></testsuite>')
    again = ParserRun(options("junit-xml", file="out/junit.xml"), ParseContext(tmp_path, tmp_path))
    assert again.finish().items == [Item("t: boom")]


# --- go-test-json -----------------------------------------------------------------------------------------------


def go_events(*events: tuple[str, str, str, str]) -> str:
    return "\n".join(json.dumps({"Action": a, "Package": p, "Test": t, "Output": o} if o else
                                {"Action": a, "Package": p, **({"Test": t} if t else {})}) for a, p, t, o in events)


def test_go_test_json_paths_from_the_repository_root(tmp_path: Path) -> None:
    (tmp_path / "go.mod").write_text("module example.com/m\n\ngo 1.21\n")
    pkg = "example.com/m/internal/calc"
    stream = go_events(
        ("run", pkg, "TestAdd", ""), ("output", pkg, "TestAdd", "    calc_test.go:12: got -1, want 3\n"),
        ("output", pkg, "TestAdd", "        second line\n"), ("output", pkg, "TestAdd", "--- FAIL: TestAdd\n"),
        ("fail", pkg, "TestAdd", ""),
        ("output", pkg, "TestT/one_case", "    calc_test.go:30: nope\n"), ("fail", pkg, "TestT/one_case", ""),
        ("fail", pkg, "TestT", ""), ("pass", pkg, "TestOK", ""), ("fail", pkg, "", ""),
    )
    stream += "\n# example.com/m/broken\nbroken/broken.go:3:23: undefined: thing\n"
    parsed = parse(tmp_path, "go-test-json", stream)
    assert parsed.items == [
        Item("build error: undefined: thing", "broken/broken.go", 3),
        Item("TestAdd (example.com/m/internal/calc): got -1, want 3\nsecond line", "internal/calc/calc_test.go", 12),
        Item("TestT/one_case (example.com/m/internal/calc): nope", "internal/calc/calc_test.go", 30),
    ]
    assert parsed.summary == "3 failed, 1 passed; 1 package failed to build"


def test_go_test_json_run_in_a_sub_directory_module(tmp_path: Path) -> None:
    (tmp_path / "svc").mkdir()
    (tmp_path / "svc" / "go.mod").write_text("module example.com/svc\n")
    stream = go_events(("output", "example.com/svc/api", "TestX", "    api_test.go:4: bad\n"),
                       ("fail", "example.com/svc/api", "TestX", ""))
    [item] = parse(tmp_path, "go-test-json", stream, cwd=tmp_path / "svc").items
    assert (item.file, item.line) == ("svc/api/api_test.go", 4)


def test_go_test_json_panic_points_at_the_first_frame_in_the_repository(tmp_path: Path) -> None:
    (tmp_path / "go.mod").write_text("module example.com/m\n")
    stream = go_events(
        ("output", "example.com/m", "TestP", "panic: assignment to entry in nil map [recovered]\n"),
        ("output", "example.com/m", "TestP", "\t/usr/lib/go/src/testing/testing.go:1396 +0x24e\n"),
        ("output", "example.com/m", "TestP", f"\t{tmp_path}/main_test.go:7 +0x2e\n"),
        ("fail", "example.com/m", "TestP", ""))
    [item] = parse(tmp_path, "go-test-json", stream).items
    assert item == Item("TestP (example.com/m): panic: assignment to entry in nil map [recovered]", "main_test.go", 7)


# --- json, json-lines, sarif --------------------------------------------------------------------------------------


def test_json_with_issue_path_and_field_mapping(tmp_path: Path) -> None:
    document = {"report": {"problems": [
        {"where": {"path": "src/a.py", "row": 3}, "code": "E1", "msg": "bad thing"},
        {"where": {"path": str(tmp_path / "src/b.py"), "row": "9"}, "code": "E2", "msg": "worse"},
    ]}}
    output = "warning: something on stderr\n" + json.dumps(document, indent=2)
    parsed = parse(tmp_path, "json", output, issue_path="report.problems",
                   issue_fields={"file": "where.path", "line": "where.row", "text": ["code", "msg"]})
    assert parsed.items == [Item("E1 bad thing", "src/a.py", 3), Item("E2 worse", "src/b.py", 9)]


def test_json_default_field_names_and_a_root_list(tmp_path: Path) -> None:
    output = json.dumps([{"id": "bd-1", "title": "Fix the parser"}, {"file": "x.go", "line": 2, "message": "m"}])
    parsed = parse(tmp_path, "json", output)
    assert parsed.items == [Item("Fix the parser"), Item("m", "x.go", 2)]
    beads = parse(tmp_path, "json", output, issue_fields={"text": ["id", "title"]})
    assert beads.items[0] == Item("bd-1 Fix the parser")


def test_json_lines_skip_noise_and_count_past_max_items(tmp_path: Path) -> None:
    lines = ["progress 10%"] + [json.dumps({"file": f"f{n}.py", "line": n, "message": f"m{n}"}) for n in range(1, 6)]
    parsed = parse(tmp_path, "json-lines", "\n".join(lines), max_items=3)
    assert [i.text for i in parsed.items] == ["m1", "m2", "m3", "... and 2 more"]


def test_an_overlong_json_line_split_by_the_reader_is_joined_again(tmp_path: Path) -> None:
    message = "x" * (3 * MAX_LINE_BYTES)
    line = json.dumps({"file": "a.py", "line": 1, "message": message})
    run = ParserRun(options("json-lines"), ParseContext(tmp_path, tmp_path))
    for start in range(0, len(line), MAX_LINE_BYTES):  # what core.proc hands over for one long line
        run.feed(line[start:start + MAX_LINE_BYTES])
    [item] = run.finish().items
    assert item.file == "a.py" and item.text.startswith("xxx")


SARIF = {
    "version": "2.1.0",
    "runs": [{
        "tool": {"driver": {"name": "ruff", "rules": [{"id": "F401", "defaultConfiguration": {"level": "error"}}]}},
        "originalUriBaseIds": {"%SRCROOT%": {"uri": "file:///ROOT/"}},
        "results": [
            {"ruleId": "F401", "message": {"text": "`os` imported but unused"},
             "locations": [{"physicalLocation": {"artifactLocation": {"uri": "src/a.py", "uriBaseId": "%SRCROOT%"},
                                                 "region": {"startLine": 1, "startColumn": 8}}}]},
            {"ruleId": "E501", "level": "warning", "message": {"text": "Line too long"},
             "locations": [{"physicalLocation": {"artifactLocation": {"uri": "file:///ROOT/src/b%20c.py"},
                                                 "region": {"startLine": 40}}}]},
            {"ruleId": "F841", "message": {"text": "suppressed"}, "suppressions": [{"kind": "inSource"}]},
            {"ruleId": "X1", "kind": "pass", "message": {"text": "fine"}},
            {"message": {"text": "no location at all"}},
        ],
    }],
}


def test_sarif_results_with_rules_levels_and_uris(tmp_path: Path) -> None:
    text = json.dumps(SARIF).replace("/ROOT", str(tmp_path))
    parsed = parse(tmp_path, "sarif", text)
    assert parsed.items == [
        Item("F401: `os` imported but unused", "src/a.py", 1),
        Item("[warning] E501: Line too long", "src/b c.py", 40),
        Item("[warning] no location at all"),
    ]
    assert parsed.summary == "3 results from ruff"


def test_sarif_that_is_not_sarif_is_a_problem(tmp_path: Path) -> None:
    assert parse(tmp_path, "sarif", "{}").problem == "invalid SARIF: no 'runs' list"
    assert parse(tmp_path, "sarif", "oops").problem.startswith("invalid SARIF (not JSON)")


# --- lines and regex under forced colour ------------------------------------------------------------------------


def test_regex_items_from_coloured_output_hold_no_escape_codes(tmp_path: Path) -> None:
    out = f"{ESC}[1msrc/a.py{ESC}[0m:12:3: {ESC}[31mF401{ESC}[0m unused\x07 import"
    run = ParserRun(options("regex", pattern=r"^(?P<file>[^:]+):(?P<line>\d+):\d+: (?P<text>.*)$"),
                    ParseContext(tmp_path, tmp_path))
    from dun.engine.sanitize import strip_ansi

    run.feed(strip_ansi(out))  # the command check strips each line before parsing
    [item] = run.finish().items
    assert item == Item("F401 unused\ufffd import", "src/a.py", 12)


# --- cargo ------------------------------------------------------------------------------------------------------

def test_cargo_test_reads_panics_of_old_and_new_rust_and_a_test_returning_err(tmp_path: Path) -> None:
    out = """running 3 tests
test a::old ... FAILED
test a::new ... FAILED
test a::err ... FAILED

failures:

---- a::old stdout ----
some output the test printed
thread 'a::old' panicked at 'assertion failed: `(left == right)`
  left: `1`,
 right: `2`', src/a.rs:7:5
note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace
---- a::new stdout ----
thread 'a::new' (77) panicked at src/a.rs:12:9:
index out of bounds: the len is 3 but the index is 5
---- a::err stdout ----
Error: "file missing"

failures:
    a::old
    a::new
    a::err

test result: FAILED. 2 passed; 3 failed; 1 ignored; 0 measured; 0 filtered out; finished in 0.01s
"""
    parsed = parse(tmp_path, "cargo-test", out)
    assert [(i.file, i.line, i.text) for i in parsed.items] == [
        ("src/a.rs", 7, "a::old: assertion failed: `(left == right)`\n  left: `1`,\n right: `2`"),
        ("src/a.rs", 12, "a::new: index out of bounds: the len is 3 but the index is 5"),
        (None, None, 'a::err: Error: "file missing"'),
    ]
    assert parsed.summary == "3 failed, 2 passed, 1 ignored"


# --- jest-json, mocha-json, ava: the reports as the runners write them (the runners themselves: test_js_projects) --

def test_jest_json_items_at_the_innermost_project_frame_with_the_message(tmp_path: Path) -> None:
    stack = (f"Error: expect(received).toBe(expected) // Object.is equality\n\nExpected: 3\nReceived: 2\n"
             f"    at toBe ({tmp_path}/node_modules/expect/build/index.js:10:5)\n"
             f"    at check ({tmp_path}/src/check.js:4:3)\n    at Object.<anonymous> ({tmp_path}/test/a.test.js:9:5)")
    doc = {"numFailedTests": 1, "numPassedTests": 3, "numPendingTests": 1, "numRuntimeErrorTestSuites": 1,
           "testResults": [
               {"name": f"{tmp_path}/test/a.test.js", "status": "failed", "message": "", "assertionResults": [
                   {"ancestorTitles": ["math", "sums"], "title": "adds", "status": "failed",
                    "failureMessages": [stack], "location": {"line": 8, "column": 3}},
                   {"ancestorTitles": [], "title": "ok", "status": "passed", "failureMessages": []}]},
               {"name": f"{tmp_path}/test/b.test.js", "status": "failed", "assertionResults": [],
                "message": f"SyntaxError: Unexpected token (3:12)\n    at parse ({tmp_path}/test/b.test.js:3:12)"}]}
    parsed = parse(tmp_path, "jest-json", json.dumps(doc))
    assert [(i.file, i.line, i.text) for i in parsed.items] == [
        ("src/check.js", 4, "math > sums > adds: expect(received).toBe(expected) // Object.is equality\n\n"
                            "Expected: 3\nReceived: 2\n  at test/a.test.js:9"),
        ("test/b.test.js", 3, "test/b.test.js: SyntaxError: Unexpected token (3:12)")]
    assert parsed.summary == "1 failed, 3 passed, 1 skipped, 1 file not run"


def test_mocha_json_names_the_suite_and_adds_expected_and_actual(tmp_path: Path) -> None:
    doc = {"stats": {"passes": 2, "failures": 1, "pending": 0}, "failures": [
        {"title": "adds", "fullTitle": "math adds", "file": f"{tmp_path}/test/m.js",
         "err": {"message": "sum is off", "expected": "3", "actual": "2",
                 "stack": "AssertionError: sum is off\n    at Context.<anonymous> (test/m.js:4:12)"}}]}
    [item] = parse(tmp_path, "mocha-json", json.dumps(doc)).items
    assert (item.file, item.line, item.text) == ("test/m.js", 4, "math > adds: sum is off\nexpected: 3\nactual: 2")


def test_ava_report_blocks_with_the_file_line_ava_prints(tmp_path: Path) -> None:
    out = f"""
  ✘ [fail]: math › adds
  ✘ [fail]: math › throws Error thrown in test
  ✔ math › passes
  ─

  math › adds

  test/math.js:3

   2: test('adds', t => {{
   3:   t.is(1 + 1, 3);
   4: }});

  Difference (- actual, + expected):

  - 2
  + 3

  › test/math.js:3:5



  math › throws

  Error thrown in test:

  Error {{
    message: 'boom',
  }}

  Error: boom
      at {tmp_path}/test/math.js:9:9
      at Test.callFn ({tmp_path}/node_modules/ava/lib/test.js:525:26)

  ─

  2 tests failed
"""
    parsed = parse(tmp_path, "ava", out)
    assert [(i.file, i.line, i.text) for i in parsed.items] == [
        ("test/math.js", 3, "math › adds: Difference (- actual, + expected):\n- 2\n+ 3"),
        ("test/math.js", 9, "math › throws: Error thrown in test:\nError {\n  message: 'boom',\n}\nError: boom")]
    assert parsed.summary == "2 failed, 1 passed"


def test_cargo_test_reads_libtests_json_where_a_nightly_compiler_writes_it(tmp_path: Path) -> None:
    out = """{ "type": "suite", "event": "started", "test_count": 3 }
{ "type": "test", "event": "started", "name": "tests::doubles" }
{ "type": "test", "name": "tests::doubles", "event": "failed", "stdout": "\\nthread 'tests::doubles' (10570) panicked \
at src/lib.rs:20:9:\\nassertion `left == right` failed: two doubled is four\\n  left: 4\\n right: 5\\nnote: run with \
`RUST_BACKTRACE=1` environment variable to display a backtrace\\n" }
{ "type": "test", "name": "tests::passes", "event": "ok" }
{ "type": "suite", "event": "failed", "passed": 1, "failed": 1, "ignored": 1, "measured": 0, "filtered_out": 0 }"""
    parsed = parse(tmp_path, "cargo-test", out.replace("\\\n", ""))
    assert [(i.file, i.line, i.text) for i in parsed.items] == [
        ("src/lib.rs", 20,
         "tests::doubles: assertion `left == right` failed: two doubled is four\n  left: 4\n right: 5")]
    assert parsed.summary == "1 failed, 1 passed, 1 ignored"


def test_a_runner_that_stops_before_its_report_is_an_item_at_the_error_it_printed(tmp_path: Path) -> None:
    run = ParserRun(options("mocha-json", file=".dun/cache/mocha.json"), ParseContext(tmp_path, tmp_path))
    run.before()
    for line in [f"Exception during run: {tmp_path}/test/b.test.js:2", "  const a = ;", "            ^", "",
                 "SyntaxError: Unexpected token ';'", "    at wrapSafe (node:internal/modules/cjs/loader:1464:18)"]:
        run.feed(line)
    parsed = run.finish()
    assert parsed.items == [Item("the run stopped before its report: SyntaxError: Unexpected token ';'",
                                 "test/b.test.js", 2)]
    assert parsed.problem == "no report written to .dun/cache/mocha.json"
