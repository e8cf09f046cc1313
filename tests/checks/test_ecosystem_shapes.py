"""Project shapes beyond the one-runner fixtures (issue 25, an independent pass): each class of wrong item found on
a real run. Most tests feed the parser the output the runner really wrote (recorded from node 20, cargo 1.95, Python
3.11), so they are fast and fail on the parser as it was; where the runner's own report matters (vitest) it runs, from
the pinned runners tests/e2e/install_js_runners.sh installs."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from checks_support import git, write
from test_js_projects import DUN, RUNNERS, run_check
from test_js_projects import _missing as js_missing
from test_parsers import parse

from dun.checks.jsenv import script_args

# --- unittest: the runner's totals, an unexpected success, a failure inside a helper ----------------------------

UNITTEST = """\
test_expected_failure (tests.test_calc.TestCalc.test_expected_failure) ... expected failure
test_helper (tests.test_calc.TestCalc.test_helper) ... ERROR
test_skipped (tests.test_calc.TestCalc.test_skipped) ... skipped 'not yet'
test_unexpected_success (tests.test_calc.TestCalc.test_unexpected_success) ... unexpected success
test_x (tests.test_calc.TestCalc.test_x) ... FAIL

======================================================================
ERROR: test_helper (tests.test_calc.TestCalc.test_helper)
----------------------------------------------------------------------
Traceback (most recent call last):
  File "{root}/tests/test_calc.py", line 7, in test_helper
    check(-1)
  File "{root}/pkg/calc.py", line 3, in check
    raise ValueError(f"negative: {{x}}")
ValueError: negative: -1

======================================================================
FAIL: test_x (tests.test_calc.TestCalc.test_x)
----------------------------------------------------------------------
Traceback (most recent call last):
  File "{root}/tests/test_calc.py", line 19, in test_x
    self.assertEqual(1, 2)
AssertionError: 1 != 2

======================================================================
UNEXPECTED SUCCESS: test_unexpected_success (tests.test_calc.TestCalc.test_unexpected_success)
----------------------------------------------------------------------
Ran 5 tests in 0.001s

FAILED (failures=1, errors=1, skipped=1, expected failures=1, unexpected successes=1)
"""
UNITTEST_MODULE = """\
import unittest
from pkg.calc import check


class TestCalc(unittest.TestCase):
    def test_helper(self):
        check(-1)

    @unittest.expectedFailure
    def test_expected_failure(self):
        self.assertEqual(1, 2)

    @unittest.expectedFailure
    def test_unexpected_success(self):
        self.assertEqual(1, 1)

    def test_x(self):
        self.assertEqual(1, 2)
"""


def test_unittest_counts_every_kind_and_locates_an_unexpected_success_and_a_helpers_caller(tmp_path: Path) -> None:
    write(tmp_path, "tests/test_calc.py", UNITTEST_MODULE)
    parsed = parse(tmp_path, "unittest", UNITTEST.format(root=tmp_path))
    # `expected failures=1` was read as `failures=1`, hiding the real count; unexpected successes fail the run
    assert parsed.summary == "1 failed, 1 error, 1 unexpected success, 1 skipped, 1 expected failure; 5 tests run"
    items = {i.text.split(":", 1)[0]: i for i in parsed.items}
    unexpected = items["tests.test_calc.TestCalc.test_unexpected_success"]
    assert (unexpected.file, unexpected.line) == ("tests/test_calc.py", 14)  # its def: there is no traceback
    helper = items["tests.test_calc.TestCalc.test_helper"]
    assert (helper.file, helper.line) == ("pkg/calc.py", 3)
    assert helper.text == "tests.test_calc.TestCalc.test_helper: ValueError: negative: -1\n  at tests/test_calc.py:7"


# --- cargo test: #[should_panic], one test name failing in two crates ----------------------------------------------

CARGO = """\
     Running unittests src/lib.rs (target/debug/deps/core-bff02467bb006f96)

running 3 tests
test tests::should_panic_but_does_not - should panic ... FAILED
test tests::should_panic_wrong_message - should panic ... FAILED
test tests::it_works ... FAILED

failures:

---- tests::should_panic_but_does_not stdout ----
note: test did not panic as expected at core/src/lib.rs:27:8
---- tests::should_panic_wrong_message stdout ----

thread 'tests::should_panic_wrong_message' (7831) panicked at core/src/lib.rs:12:9:
expected a positive number, got -5
note: panic did not contain expected string
      panic message: "expected a positive number, got -5"
 expected substring: "wrong text"
---- tests::it_works stdout ----

thread 'tests::it_works' (7832) panicked at core/src/lib.rs:39:9:
core is broken

failures:
    tests::it_works
    tests::should_panic_but_does_not
    tests::should_panic_wrong_message

test result: FAILED. 0 passed; 3 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.01s

error: test failed, to rerun pass `-p core --lib`
     Running unittests src/main.rs (target/debug/deps/app-3908235aad9a2899)

running 1 test
test tests::it_works ... FAILED

failures:

---- tests::it_works stdout ----

thread 'tests::it_works' (7840) panicked at app/src/main.rs:9:9:
app is broken

failures:
    tests::it_works

test result: FAILED. 0 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s
"""


def test_cargo_should_panic_tests_and_a_name_failing_in_two_crates(tmp_path: Path) -> None:
    parsed = parse(tmp_path, "cargo-test", CARGO)
    assert [(i.file, i.line, i.text) for i in parsed.items] == [
        # the status line's ` - should panic` is not part of the name: the test's output was lost with it
        ("core/src/lib.rs", 27, "tests::should_panic_but_does_not: test did not panic as expected"),
        ("core/src/lib.rs", 12, "tests::should_panic_wrong_message: expected a positive number, got -5\n"
                                "note: panic did not contain expected string\n"
                                '      panic message: "expected a positive number, got -5"\n'
                                ' expected substring: "wrong text"'),
        # two crates' `tests::it_works`: two items, each with its own panic (one was dropped, the other's text lost)
        ("core/src/lib.rs", 39, "tests::it_works (in core (src/lib.rs)): core is broken"),
        ("app/src/main.rs", 9, "tests::it_works (in app (src/main.rs)): app is broken"),
    ]
    assert parsed.summary == "4 failed"


# --- node --test: a timed-out test counts, a helper's failure names the test's call --------------------------------

NODE_TAP = """\
TAP version 13
# Subtest: calc
    # Subtest: helper
    not ok 1 - helper
      ---
      duration_ms: 0.166303
      location: '{root}/test/calc.test.js:19:3'
      failureType: 'testCodeFailure'
      error: 'total should be 10 but was 7'
      code: 'ERR_TEST_FAILURE'
      stack: |-
        check (file://{root}/lib/calc.js:3:23)
        TestContext.<anonymous> (file://{root}/test/calc.test.js:20:5)
        Test.runInAsyncScope (node:async_hooks:206:9)
      ...
    # Subtest: times out
    not ok 2 - times out
      ---
      duration_ms: 101.2
      location: '{root}/test/calc.test.js:16:3'
      failureType: 'testTimeoutFailure'
      error: 'test timed out after 100ms'
      code: 'ERR_TEST_FAILURE'
      ...
    1..2
not ok 1 - calc
  ---
  duration_ms: 105.1
  type: 'suite'
  location: '{root}/test/calc.test.js:5:1'
  failureType: 'subtestsFailed'
  error: '2 subtests failed'
  code: 'ERR_TEST_FAILURE'
  ...
1..1
# tests 2
# suites 1
# pass 0
# fail 1
# cancelled 1
# skipped 0
# todo 0
"""


def test_node_tap_counts_a_timed_out_test_and_names_the_tests_call_into_a_helper(tmp_path: Path) -> None:
    parsed = parse(tmp_path, "tap", NODE_TAP.format(root=tmp_path))
    assert [(i.file, i.line, i.text) for i in parsed.items] == [
        ("lib/calc.js", 3, "calc > helper: total should be 10 but was 7\n  at test/calc.test.js:20"),
        ("test/calc.test.js", 16, "calc > times out: test timed out after 100ms"),
    ]
    assert parsed.summary == "1 failed, 1 cancelled"  # node tallies the timed-out test as `cancelled`, not `fail`


# --- {js-args:node --test}: node's own options before --test are the project's too ---------------------------------

def test_node_options_before_test_are_kept_and_other_programs_are_not_taken_for_node(tmp_path: Path) -> None:
    cases = {
        "node --import tsx --test 'test/**/*.test.ts'": "--import tsx 'test/**/*.test.ts'",  # TypeScript via tsx
        "node --require ./setup.js --test spec/": "--require ./setup.js spec/",
        "NODE_ENV=test node --test --test-reporter spec test/": "test/",
        "node scripts/build.js --test": "",  # a script given --test is not node's test runner
    }
    from dun.checks.jsproject import js_tools

    for script, args in cases.items():
        write(tmp_path, "package.json", json.dumps({"scripts": {"test": script}}))
        assert script_args(tmp_path, "node --test") == args, script
        assert ("node-test" in js_tools(tmp_path)) is bool(args), script  # build.js --test: not node's runner


# --- a toolchain that is not installed: its checks skip, so test-suites must say so (never "nothing actionable") ----

def test_a_suite_whose_toolchain_is_missing_is_a_warning_naming_the_program(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    from types import SimpleNamespace

    from dun.checks.looked import reads
    from dun.checks.suites import _answer
    from dun.checks.unrun import unrun_suites
    from dun.engine.model import Status

    write(tmp_path, "Cargo.toml", "[package]\nname = 'x'\n")
    write(tmp_path, "go.mod", "module x\n")
    write(tmp_path, "package.json", json.dumps({"scripts": {"test": "node --test"}}))
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    monkeypatch.setenv("PATH", str(bin_dir))
    found, seen = reads(lambda: unrun_suites(tmp_path))
    assert [(marker, why.split(",")[0]) for marker, why in found] == [
        ("package.json", "a javascript test suite"), ("Cargo.toml", "a rust test suite"), ("go.mod", "a go test suite")]
    assert "`cargo` is not installed (not on PATH): its built-in checks are skipped" in found[1][1]
    assert str(bin_dir / "cargo") in seen  # installing it there is a change the cached answer sees
    outcome = _answer(SimpleNamespace(next=None), tmp_path)  # type: ignore[arg-type]
    assert outcome.status is Status.WARN and outcome.next is not None
    assert outcome.next.startswith("Install what is missing (or put it on PATH)")
    for program in ("node", "cargo", "go"):
        write(bin_dir, program, "#!/bin/sh\n")
        (bin_dir / program).chmod(0o755)
    assert unrun_suites(tmp_path) == []


# --- vitest on TypeScript (ESM): nested describe, it.each, an inline snapshot, a thrown string, a timeout -----------

VITEST_TS = {
    "package.json": json.dumps({"name": "vts", "type": "module", "private": True, "scripts": {"test": "vitest run"},
                                "devDependencies": {"vitest": "*"}}),
    "src/calc.ts": """\
export function add(a: number, b: number): number {
  return a + b + (a === 2 ? 1 : 0);
}
export function check(total: number): void {
  if (total !== 10) throw new Error(`total should be 10 but was ${total}`); // FAIL: helper
}
""",
    "test/calc.test.ts": """\
import { describe, it, expect } from 'vitest';
import { add, check } from '../src/calc';

describe('calc', () => {
  describe('add', () => {
    it.each([[1, 1, 2], [2, 2, 4]])('add(%i, %i) = %i', (a: number, b: number, want: number) => {
      expect(add(a, b)).toBe(want); // FAIL: each
    });
  });
  it('snapshot', () => {
    expect({ a: 1 }).toMatchInlineSnapshot(`
      {
        "a": 2,
      }
    `); // FAIL: snapshot
  });
  it('throws a string', () => {
    throw 'not an error';
  });
  it('times out', async () => { // FAIL: timeout
    await new Promise((r) => setTimeout(r, 5000));
  }, 100);
  it('helper', () => {
    check(7); // FAIL: call
  });
});
""",
    "test/broken.test.ts": "import { it } from 'vitest';\nconst a: number = ;\n",
}


def test_vitest_typescript_items_keep_diffs_snapshots_timeouts_and_full_names(tmp_path: Path) -> None:
    if js_missing() is not None:
        pytest.skip(str(js_missing()))
    for rel, text in VITEST_TS.items():
        write(tmp_path, rel, text)
    write(tmp_path, ".gitignore", "node_modules\n")
    (tmp_path / "node_modules").symlink_to(RUNNERS / "node_modules")
    git(tmp_path, "init", "-q", "-b", "main")
    marks = {line.split("// FAIL: ")[1]: (rel, n) for rel in ("src/calc.ts", "test/calc.test.ts")
             for n, line in enumerate(VITEST_TS[rel].splitlines(), 1) if "// FAIL: " in line}
    check = run_check(tmp_path, "vitest")
    items = {i["text"].split(": ", 1)[0]: i for i in check["items"]}
    assert set(items) == {"test/broken.test.ts", "calc > add > add(2, 2) = 4", "calc > snapshot",
                          "calc > throws a string", "calc > times out", "calc > helper"}, items
    where = {name: (i["file"], i["line"]) for name, i in items.items()}
    assert where["test/broken.test.ts"] == ("test/broken.test.ts", 2)
    assert where["calc > add > add(2, 2) = 4"] == marks["each"]
    assert "expected 5 to be 4" in items["calc > add > add(2, 2) = 4"]["text"]
    # vitest's JSON had no diff of a snapshot, and `STACK_TRACE_ERROR` for a timeout
    assert where["calc > snapshot"][0] == "test/calc.test.ts"
    assert '-   "a": 2,\n+   "a": 1,' in items["calc > snapshot"]["text"]
    assert where["calc > times out"] == marks["timeout"]
    assert "Test timed out in 100ms" in items["calc > times out"]["text"]
    assert where["calc > throws a string"] == ("test/calc.test.ts", 17)  # no stack: the test's own line
    assert "not an error" in items["calc > throws a string"]["text"]
    assert where["calc > helper"] == marks["helper"]
    assert items["calc > helper"]["text"].endswith(f"\n  at test/calc.test.ts:{marks['call'][1]}")


# --- a Rust workspace where one crate does not compile: the other crates' tests still run --------------------------

def test_a_crate_that_does_not_compile_does_not_hide_the_other_crates_failing_tests(tmp_path: Path) -> None:
    import shutil

    from test_rust_projects import dun_check

    if shutil.which("cargo") is None:
        pytest.skip("cargo is not installed: the Rust workspace cannot build")
    write(tmp_path, "Cargo.toml", '[workspace]\nmembers = ["core", "app"]\nresolver = "2"\n')
    for name in ("core", "app"):
        write(tmp_path, f"{name}/Cargo.toml", f'[package]\nname = "{name}"\nversion = "0.1.0"\nedition = "2021"\n')
    write(tmp_path, "core/src/lib.rs", "#[cfg(test)]\nmod tests {\n    #[test]\n    #[should_panic]\n"
                                       "    fn must_panic() {}\n}\n")
    write(tmp_path, "app/src/main.rs", 'fn main() {\n    let x: i32 = "no";\n    println!("{}", x);\n}\n')
    write(tmp_path, ".gitignore", "target\n")
    git(tmp_path, "init", "-q", "-b", "main")
    check = dun_check(tmp_path, "cargo-test")["cargo-test"]
    assert [(i["file"], i["line"], i["text"].split("\n")[0]) for i in check["items"]] == [
        ("app/src/main.rs", 2, "E0308: mismatched types (expected `i32`, found `&str`)"),
        ("core/src/lib.rs", 5, "tests::must_panic: test did not panic as expected")]  # cargo ran none of them
    assert check["signal"].startswith("exit 101: 1 failed; 1 compile error")


# --- JavaScript monorepos: the root's `test` runs each workspace package's own ------------------------------------

def test_workspace_packages_come_from_package_json_or_pnpm_workspace_yaml(tmp_path: Path) -> None:
    from dun.checks.jsproject import delegates, workspace_dirs

    for rel in ("packages/a", "packages/b", "packages/node_modules/x", "apps/web", "tools/gen"):
        write(tmp_path, f"{rel}/package.json", "{}")
    write(tmp_path, "package.json", json.dumps({"workspaces": {"packages": ["packages/*", "!packages/b"]}}))
    assert workspace_dirs(tmp_path) == [tmp_path / "packages/a"]
    write(tmp_path, "package.json", json.dumps({"scripts": {"test": "pnpm -r test"}}))
    write(tmp_path, "pnpm-workspace.yaml",
          "packages:\n  - 'apps/*'\n  - \"tools/gen\"\n  # - packages/*\ncatalog: {}\n")
    assert workspace_dirs(tmp_path) == [tmp_path / "apps/web", tmp_path / "tools/gen"]
    scripts = {"pnpm -r test": True, "npm test --workspaces --if-present": True, "npm -ws test": True,
               "yarn workspaces foreach run test": True, "lerna run test": True, "turbo run test": True, "": True,
               "jest": False, "vitest run --project web": False, "npm test --workspace=packages/a": False}
    for script, runs_packages in scripts.items():
        write(tmp_path, "package.json", json.dumps({"scripts": {"test": script}}))
        assert delegates(tmp_path) is runs_packages, script


def test_reports_of_several_packages_are_one_result(tmp_path: Path) -> None:
    from dun.checks.parsers.base import Parsed
    from dun.checks.parsers.run import _merged
    from dun.engine.model import Item

    merged = _merged([Parsed([Item("a", "packages/a/x.js", 1)], summary="2 failed, 3 passed, 1 file not run"),
                      Parsed([Item("b", "packages/b/y.js", 2)], summary="1 failed, 1 skipped, 2 files not run"),
                      Parsed(summary="no tests ran")])
    assert merged.summary == "3 failed, 3 passed, 3 files not run, 1 skipped"
    assert [i.file for i in merged.items] == ["packages/a/x.js", "packages/b/y.js"]


MONOREPO = {
    "package.json": json.dumps({"name": "mono", "private": True, "workspaces": ["packages/*"],
                                "scripts": {"test": "npm test --workspaces --if-present"}}),
    "packages/alpha/package.json": json.dumps({"name": "alpha", "scripts": {"test": "mocha"}}),
    "packages/alpha/test/alpha.test.js": "const assert = require('node:assert');\ndescribe('alpha', () => {\n"
                                         "  it('adds', () => {\n    assert.strictEqual(1 + 1, 3); // FAIL\n"
                                         "  });\n});\n",
    "packages/beta/package.json": json.dumps({"name": "beta", "scripts": {"test": "mocha spec/"}}),
    "packages/beta/spec/beta.js": "const assert = require('node:assert');\nit('beta reads its own cwd', () => {\n"
                                  "  assert.ok(require('fs').existsSync('spec/beta.js'));\n"
                                  "  assert.strictEqual('b', 'c'); // FAIL\n});\n",
    "packages/gamma/package.json": json.dumps({"name": "gamma", "scripts": {"test": "node --test"}}),
    "packages/gamma/test/g.test.js": "const test = require('node:test');\nconst assert = require('node:assert');\n"
                                     "test('gamma', () => {\n  assert.deepStrictEqual([1], [2]); // FAIL\n});\n",
    "packages/delta/package.json": json.dumps({"name": "delta", "scripts": {"test": "ava"}}),
    "packages/docs/package.json": json.dumps({"name": "docs"}),
}


def run_checks(root: Path, *check_ids: str) -> dict[str, dict[str, Any]]:
    """`run_check` for several checks in one `dun check`: one start of dun, the runners side by side."""
    proc = subprocess.run([DUN, "check", "--format", "json", "--only", ",".join(check_ids)], cwd=root,
                          capture_output=True, text=True, timeout=300,
                          env={**os.environ, "FORCE_COLOR": "1", "CI": "1"})
    assert proc.returncode in (0, 1), proc.stderr
    return {c["id"]: c for c in json.loads(proc.stdout)["checks"] if c["id"] in check_ids}


def monorepo(root: Path) -> Path:
    if js_missing() is not None:
        pytest.skip(str(js_missing()))
    for rel, text in MONOREPO.items():
        write(root, rel, text)
    write(root, ".gitignore", "node_modules\n")
    (root / "node_modules").symlink_to(RUNNERS / "node_modules")
    git(root, "init", "-q", "-b", "main")
    return root


def test_a_monorepos_failures_in_several_packages_are_items_at_each_packages_files(tmp_path: Path) -> None:
    monorepo(tmp_path)
    marks = {(rel, n) for rel, text in MONOREPO.items() for n, line in enumerate(text.splitlines(), 1)
             if "// FAIL" in line}
    # mocha at the root found no test files and said so as one error; each package's mocha now runs in its package
    # one dun run for the three checks (they run side by side), as a user's `dun check` runs them
    first = run_checks(tmp_path, "mocha", "node-test", "test-suites")
    mocha, node, suites = first["mocha"], first["node-test"], first["test-suites"]
    found = {(i["file"], i["line"]) for i in mocha["items"] + node["items"]}
    assert found == marks, (mocha, node)
    assert mocha["signal"].startswith("exit 1: 2 failed;"), mocha["signal"]
    assert any(i["text"].startswith("alpha > adds:") and "2 !== 3" in i["text"] for i in mocha["items"])
    # AVA is not run per package: said, not silent
    assert [(i["file"], i["text"]) for i in suites["items"]] == [("packages/delta/package.json", (
        "workspace package packages/delta runs ava, which dun runs only at the top of a project, not in each "
        "workspace package"))]
    for rel, text in MONOREPO.items():
        write(tmp_path, rel, "\n".join(line for line in text.splitlines() if "// FAIL" not in line) + "\n")
    fixed = run_checks(tmp_path, "mocha", "node-test")
    assert fixed["mocha"]["status"] == "pass" and fixed["node-test"]["status"] == "pass"


# --- a failure with no stack (a thrown string, a timeout) is at its test's own line; no diff said twice -------------

MOCHA_SPEC = """\
import assert from 'node:assert/strict';
describe('outer', () => {
  describe('inner', () => {
    it('throws a string', () => {
      throw 'not an error';
    });
    it('times out', async function () {
      this.timeout(100);
      await new Promise((r) => setTimeout(r, 3000));
    });
    it('deep', () => {
      assert.deepEqual({ a: [1, 2] }, { a: [1, 3] });
    });
  });
});
"""


def test_mocha_failures_without_a_stack_are_at_the_tests_own_line(tmp_path: Path) -> None:
    write(tmp_path, "test/a.spec.mjs", MOCHA_SPEC)
    spec = f"{tmp_path}/test/a.spec.mjs"
    diff = "Expected values to be strictly deep-equal:\n+ actual - expected\n\n  {\n    a: [\n      1,\n" \
           "+     2\n-     3\n    ]\n  }"
    timeout = f'Timeout of 100ms exceeded. For async tests and hooks, ensure "done()" is called. ({spec})'
    report = {"stats": {"passes": 0, "failures": 3}, "failures": [
        {"title": "throws a string", "fullTitle": "outer inner throws a string", "file": spec,
         "err": {"stack": 'Error: the string "not an error" was thrown, throw an Error :)\n'
                          "    at process.processImmediate (node:internal/timers:483:21)",
                 "message": 'the string "not an error" was thrown, throw an Error :)'}},
        {"title": "times out", "fullTitle": "outer inner times out", "file": spec,
         "err": {"stack": f"Error: {timeout}\n    at listOnTimeout (node:internal/timers:581:17)", "message": timeout}},
        {"title": "deep", "fullTitle": "outer inner deep", "file": spec,
         "err": {"stack": f"AssertionError [ERR_ASSERTION]: {diff}\n    at Context.<anonymous> (file://{spec}:12:14)",
                 "message": diff, "actual": '{\n  "a": [\n    1\n    2\n  ]\n}',
                 "expected": '{\n  "a": [\n    1\n    3\n  ]\n}'}}]}
    write(tmp_path, ".dun/cache/mocha.json", json.dumps(report))
    parsed = parse(tmp_path, "mocha-json", "", file=".dun/cache/mocha.json")
    assert [(i.file, i.line) for i in parsed.items] == [("test/a.spec.mjs", 4), ("test/a.spec.mjs", 7),
                                                         ("test/a.spec.mjs", 12)]
    assert parsed.items[1].text.endswith("(test/a.spec.mjs)")  # the project's path, not the machine's
    assert parsed.items[2].text == f"outer inner > deep: {diff}"  # the diff once, not again as JSON


def test_unittest_subtests_with_a_message_keep_it_in_the_name(tmp_path: Path) -> None:
    out = """\
======================================================================
FAIL: test_msg (test_more.TestSub.test_msg) [case] (i=1)
----------------------------------------------------------------------
Traceback (most recent call last):
  File "{root}/tests/test_more.py", line 12, in test_msg
    self.assertEqual(i, 0)
AssertionError: 1 != 0

======================================================================
FAIL: test_msg_only (test_more.TestSub.test_msg_only) [only a message]
----------------------------------------------------------------------
Traceback (most recent call last):
  File "{root}/tests/test_more.py", line 16, in test_msg_only
    self.assertTrue(False)
AssertionError: False is not true

----------------------------------------------------------------------
Ran 2 tests in 0.001s

FAILED (failures=2)
"""
    parsed = parse(tmp_path, "unittest", out.format(root=tmp_path))
    assert [(i.file, i.line, i.text) for i in parsed.items] == [
        ("tests/test_more.py", 12, "test_more.TestSub.test_msg [case] (i=1): AssertionError: 1 != 0"),
        ("tests/test_more.py", 16,
         "test_more.TestSub.test_msg_only [only a message]: AssertionError: False is not true"),
    ]


# --- a project in a subdirectory (backend/go.mod, frontend/package.json): the checks run at the root only ----------

def test_projects_in_subdirectories_are_a_warning_not_nothing_actionable(tmp_path: Path) -> None:
    from dun.checks.looked import reads
    from dun.checks.unrun import unrun_suites

    write(tmp_path, "backend/go.mod", "module example.com/backend\n")
    write(tmp_path, "frontend/package.json", json.dumps({"scripts": {"test": "vitest run"}}))
    write(tmp_path, "services/api/setup.py", "")
    write(tmp_path, "services/api/tests/test_a.py", "import unittest\n")
    write(tmp_path, "tests/fixtures/package.json", json.dumps({"scripts": {"test": "jest"}}))  # a fixture
    write(tmp_path, "crates/one/Cargo.toml", "[package]\nname = 'one'\n")
    write(tmp_path, "docs/package.json", json.dumps({"scripts": {"test": "jest"}}))
    found, seen = reads(lambda: unrun_suites(tmp_path))
    assert [marker for marker, _ in found] == ["backend/go.mod", "frontend/package.json", "crates/one/Cargo.toml",
                                               "services/api/setup.py"]
    assert found[0][1] == ("a go project in backend/ whose tests no built-in check runs (they run at the repository "
                           "root): add a check with `cwd: backend`")
    assert str(tmp_path / "backend" / "go.mod") in seen  # a project added there is a change the cache sees
    write(tmp_path, "Cargo.toml", "[workspace]\nmembers = ['crates/*']\n")  # a root workspace runs its crates
    assert "crates/one/Cargo.toml" not in [marker for marker, _ in unrun_suites(tmp_path)]


def test_doctor_shows_the_program_each_workspace_package_runs(tmp_path: Path) -> None:
    root = monorepo(tmp_path)
    proc = subprocess.run([DUN, "doctor", "--json"], cwd=root, capture_output=True, text=True, timeout=120)
    rows = {c["check"]: c for c in json.loads(proc.stdout)["checks"]}
    # it showed `(cd` NOT FOUND: the first word of the command run in each package
    assert {name: (row["program"], row["path"]) for name, row in rows.items()} == {
        "mocha (packages/alpha)": ("../../node_modules/.bin/mocha", str(root / "node_modules/.bin/mocha")),
        "mocha (packages/beta)": ("../../node_modules/.bin/mocha", str(root / "node_modules/.bin/mocha")),
        "node-test (packages/gamma)": ("node", rows["node-test (packages/gamma)"]["path"])}
    assert rows["node-test (packages/gamma)"]["found"] is True


# --- TypeScript project references: a solution-style tsconfig.json holds no file, `tsc --noEmit` passed on it -----

def test_a_solution_style_tsconfig_is_type_checked_through_its_references(tmp_path: Path) -> None:
    if js_missing() is not None:
        pytest.skip(str(js_missing()))
    write(tmp_path, "package.json", json.dumps({"name": "r", "private": True, "devDependencies": {"typescript": "*"}}))
    write(tmp_path, "tsconfig.json",
          '{\n  // the projects\n  "files": [],\n  "references": [{"path": "packages/a"}]\n}\n')
    write(tmp_path, "packages/a/tsconfig.json",
          '{"compilerOptions": {"composite": true, "strict": true, "outDir": "dist", "lib": ["es5"], "types": []},'
          ' "include": ["src"]}\n')  # lib es5 alone: tsc reads no DOM types, seconds faster
    write(tmp_path, "packages/a/src/a.ts", 'export const n: number = "x";\n')
    write(tmp_path, ".gitignore", "node_modules\ndist\n")
    (tmp_path / "node_modules").symlink_to(RUNNERS / "node_modules")
    git(tmp_path, "init", "-q", "-b", "main")
    both = run_checks(tmp_path, "tsc-build", "tsc")
    assert both["tsc-build"]["items"] == [{"file": "packages/a/src/a.ts", "line": 1,
                                           "text": "error TS2322: Type 'string' is not assignable to type 'number'."}]
    assert both["tsc"]["status"] == "skip"  # it passed, having checked no file


# --- a `test` script that runs other scripts by name (`npm run test:unit`, `run-s test:*`) -------------------------

def test_the_runner_and_its_arguments_come_from_the_scripts_the_test_script_runs(tmp_path: Path) -> None:
    from dun.checks.jsproject import delegates, js_tools

    scripts = {"test": "npm run lint && npm run test:unit", "test:unit": "mocha --recursive test/unit", "lint": "true"}
    write(tmp_path, "package.json", json.dumps({"scripts": scripts}))
    # mocha ran without its arguments: "No test files found", one error where test/unit held the failures
    assert "mocha" in js_tools(tmp_path) and script_args(tmp_path, "mocha") == "--recursive test/unit"
    scripts = {"test": "run-s test:*", "test:unit": "vitest run --dir src", "test:types": "tsc --noEmit"}
    write(tmp_path, "package.json", json.dumps({"scripts": scripts}))
    assert "vitest" in js_tools(tmp_path) and script_args(tmp_path, "vitest") == "--dir src"
    write(tmp_path, "package.json", json.dumps({"workspaces": ["packages/*"], "scripts": {
        "test": "yarn test:all", "test:all": "yarn workspaces foreach -A run test"}}))
    write(tmp_path, "packages/a/package.json", json.dumps({"scripts": {"test": "jest"}}))
    assert delegates(tmp_path) and "jest" in js_tools(tmp_path)


# --- vitest `projects: ['packages/*']` run from the root: its frames are relative to each project ------------------

def test_vitest_projects_frames_are_placed_under_their_project(tmp_path: Path) -> None:
    write(tmp_path, "packages/a/test/a.test.js", "x\n")
    write(tmp_path, "packages/a/src/check.js", "x\n")
    xml = """<?xml version="1.0" encoding="UTF-8" ?>
<testsuites name="vitest tests" tests="2" failures="2" errors="0" time="0.1">
  <testsuite name="packages/a/test/a.test.js" tests="2" failures="2" errors="0" skipped="0" time="0.1">
    <testcase classname="packages/a/test/a.test.js" name="a &gt; fails" time="0.03">
      <failure message="expected 'a' to be 'z' // Object.is equality" type="AssertionError">
AssertionError: expected 'a' to be 'z' // Object.is equality
 ❯ test/a.test.js:3:15
      </failure>
    </testcase>
    <testcase classname="packages/a/test/a.test.js" name="a &gt; helper" time="0.01">
      <failure message="total should be 10" type="Error">
Error: total should be 10
 ❯ check src/check.js:2:9
 ❯ test/a.test.js:7:5
      </failure>
    </testcase>
  </testsuite>
</testsuites>"""
    write(tmp_path, ".dun/cache/vitest.xml", xml)
    parsed = parse(tmp_path, "junit-xml", "", file=".dun/cache/vitest.xml")
    assert [(i.file, i.line, i.text.split(":")[0]) for i in parsed.items] == [
        ("packages/a/test/a.test.js", 3, "a > fails"), ("packages/a/src/check.js", 2, "a > helper")]
    assert parsed.items[1].text.endswith("\n  at packages/a/test/a.test.js:7")


# --- unittest discovery that found nothing: not an all-clear while test modules are there --------------------------

def test_a_unittest_run_of_no_test_fails_when_test_modules_are_there(tmp_path: Path) -> None:
    out = "\n----------------------------------------------------------------------\nRan 0 tests in 0.000s\n\nOK\n"
    assert parse(tmp_path, "unittest", out).items == []  # no test module: nothing to run is right
    write(tmp_path, "tests/calc_test.py", "import unittest\n")  # named outside discovery's `test*.py`
    [item] = parse(tmp_path, "unittest", out).items
    assert item.text.startswith("no test ran: discovery found no test module")


def test_unittest_runs_with_the_discovery_arguments_the_project_gives_it(tmp_path: Path) -> None:
    from dun.checks.pyrunner import unittest_args

    assert unittest_args(tmp_path) == "-s ."
    write(tmp_path, "tests/test_a.py", "")
    assert unittest_args(tmp_path) == "-s tests"  # not a package: discovery from the root would not enter it
    write(tmp_path, ".github/workflows/ci.yml",
          "jobs:\n  t:\n    steps:\n      - run: python -m unittest discover src/tests '*_spec.py' .\n")
    assert unittest_args(tmp_path) == "-s src/tests -p '*_spec.py' -t ."
    write(tmp_path, "Makefile", 'test:\n\tpython -m unittest discover -v --start-directory=tests -p "*_test.py"\n')
    assert unittest_args(tmp_path) == "-s tests -p '*_test.py'"  # the Makefile is read before the workflows


def test_tape_an_error_thrown_in_an_async_test_is_the_message_not_a_name(tmp_path: Path) -> None:
    out = f"""TAP version 13
# async throws
not ok 1 Error: async boom
  ---
    operator: error
    stack: |-
      Error: async boom
          at Test.<anonymous> (file://{tmp_path}/test/a.js:17:9)
          at process.processTicksAndRejections (node:internal/process/task_queues:95:5)
  ...

1..1
# tests 1
# pass  0
# fail  1
"""
    [item] = parse(tmp_path, "tap", out).items
    assert (item.file, item.line, item.text) == ("test/a.js", 17, "async throws: Error: async boom")
