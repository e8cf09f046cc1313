"""Project shapes from the second independent ecosystem pass: each was wrong before, as a user would see it.

The parsers are fed what the real runners printed on those projects (node's TAP with a long diff, tape's flat
names of nested tests, AVA's non-Error throws and ESM locations, rustdoc's crate-level and compile-fail doctests);
mocha's describe levels and a Rust panic inside a helper are run for real (skipped with a message when the pinned
JavaScript runners or cargo are missing)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from checks_support import git, write

from dun.checks.parsers.base import ParseContext, Parsed
from dun.checks.parsers.run import ParserRun

HERE = Path(__file__).parent
DUN = str(Path(sys.executable).parent / "dun")
SPEC = HERE / "projects" / "js-runners.json"
CACHE = Path(os.environ.get("DUN_E2E_CACHE", HERE.parent / "e2e" / ".cache"))
RUNNERS = CACHE / f"js-runners-{hashlib.sha256(SPEC.read_bytes()).hexdigest()[:12]}"


def parse(root: Path, kind: str, output: str) -> Parsed:
    options = {"type": kind, "pattern": None, "file": None, "issue_path": "", "issue_fields": None,
               "fail_on_items": False, "max_items": 50}
    run = ParserRun(options, ParseContext(root, root))
    for line in output.split("\n"):
        run.feed(line)
    return run.finish()


# --- node --test: a `...` line inside a diff is not the end of the YAML block -----------------------------------

NODE_TAP = """\
TAP version 13
# Subtest: Calculator
    # Subtest: builds a user
    not ok 1 - builds a user
      ---
      duration_ms: 10.4
      location: '{root}/test/math.test.js:11:3'
      failureType: 'testCodeFailure'
      error: |-
        Expected values to be strictly deep-equal:
        + actual - expected ... Lines skipped

          {{
        +   age: 4,
        -   age: 3,
            name: 'ann',
        ...
              'y'
            ]
          }}
      code: 'ERR_ASSERTION'
      name: 'AssertionError'
      operator: 'deepStrictEqual'
      stack: |-
        TestContext.<anonymous> (file://{root}/test/math.test.js:12:12)
        Test.runInAsyncScope (node:async_hooks:206:9)
      ...
    1..1
not ok 1 - Calculator
  ---
  duration_ms: 23.2
  type: 'suite'
  location: '{root}/test/math.test.js:5:1'
  failureType: 'subtestsFailed'
  error: '1 subtest failed'
  ...
1..1
# tests 1
# suites 1
# pass 0
# fail 1
"""


def test_node_diff_with_a_skipped_lines_marker_keeps_its_whole_message_and_the_assertion_line(tmp_path: Path) -> None:
    # node prints `...` inside an error's diff where it skips lines; read as the block's end, the item lost the rest
    # of the diff and the stack, so it sat at the test's declaration (line 11) instead of the assertion (line 12)
    [item] = parse(tmp_path, "tap", NODE_TAP.format(root=tmp_path)).items
    assert (item.file, item.line) == ("test/math.test.js", 12)
    assert item.text.startswith("Calculator > builds a user: Expected values to be strictly deep-equal:")
    assert "name: 'ann',\n...\n      'y'\n    ]\n  }\noperator: deepStrictEqual" in item.text


# --- tape: nested tests named with their parents ----------------------------------------------------------------

TAPE_SOURCE = """\
const test = require('tape');
const { add, user } = require('../lib');

test('math', (t) => {
  t.test('add', (st) => {
    st.test('adds two numbers', (sst) => {
      sst.equal(add(2, 3), 5, 'two plus three');
      sst.end();
    });
    st.end();
  });
  t.test('builds a user', (st) => {
    st.deepEqual(user(), { age: 3 });
    st.end();
  });
  t.end();
});

test('flat', (t) => {
  t.equal(add(1, 1), 2);
  t.end();
});
"""

TAPE_OUT = """\
TAP version 13
# math
# add
# adds two numbers
not ok 1 two plus three
  ---
    operator: equal
    expected: |-
      5
    actual: |-
      -1
    at: Test.<anonymous> ({root}/test/math.js:7:11)
  ...
# builds a user
not ok 2 should be deeply equivalent
  ---
    operator: deepEqual
    expected: |-
      {{ age: 3 }}
    actual: |-
      {{ age: 4 }}
    at: Test.<anonymous> ({root}/test/math.js:13:8)
  ...
# flat
not ok 3 should be strictly equal
  ---
    operator: equal
    expected: 2
    actual: 0
    at: Test.<anonymous> ({root}/test/math.js:20:5)
  ...

1..3
# tests 3
# pass  0
# fail  3
"""


def test_tape_nested_tests_are_named_with_their_parents(tmp_path: Path) -> None:
    # tape's TAP names every test, nested or not, as one flat `# name` comment: the parents come from the source
    write(tmp_path, "test/math.js", TAPE_SOURCE)
    items = parse(tmp_path, "tap", TAPE_OUT.format(root=tmp_path)).items
    assert [(i.file, i.line, i.text.split(": ")[0]) for i in items] == [
        ("test/math.js", 7, "math > add > adds two numbers > two plus three"),
        ("test/math.js", 13, "math > builds a user > should be deeply equivalent"),
        ("test/math.js", 20, "flat > should be strictly equal")]
    assert "expected: 5\nactual: -1" in items[0].text


def test_tape_keeps_the_printed_name_when_the_source_does_not_say_the_same(tmp_path: Path) -> None:
    # an assertion whose enclosing test in the source is not the one tape names (a helper, reformatted code)
    write(tmp_path, "test/math.js", TAPE_SOURCE.replace("t.test('builds a user'", "t.test('renamed'"))
    items = parse(tmp_path, "tap", TAPE_OUT.format(root=tmp_path)).items
    assert items[1].text.split(": ")[0] == "builds a user > should be deeply equivalent"


# --- AVA: a thrown string or object, ESM locations, diffs' indentation -----------------------------------------

AVA_SOURCE = """\
const test = require('ava');
const { add, user } = require('../lib');

test('builds a user', (t) => {
  t.deepEqual(user(), { name: 'ann', age: 3, tags: ['x'] });
});

test('throws a string', (t) => {
  if (add(1, 1) !== 2) throw 'plain string thrown';
  t.pass();
});

test('rejects with a non-error', async (t) => {
  if (add(1, 1) !== 2) await Promise.reject('rejected with a string');
  t.pass();
});
"""

AVA_OUT = """
  ✘ [fail]: {prefix}builds a user
  ✘ [fail]: {prefix}throws a string Error thrown in test
  ✘ [fail]: {prefix}rejects with a non-error
  ─

  {prefix}builds a user

  test/{path}:5

   4: test('builds a user', (t) => {{
   5:   t.deepEqual(user(), {{ name: 'ann', age: 3, tags: ['x'] }});
   6: }});

  Difference (- actual, + expected):

    {{
  -   age: 4,
  +   age: 3,
      name: 'ann',
      tags: [
        'x',
      ],
    }}

  › file://test/{path}:5:5



  {prefix}throws a string

  Error thrown in test:

  'plain string thrown'



  {prefix}rejects with a non-error

  Rejected promise returned by test. Reason:

  'rejected with a string'

  Error
      at file://{root}/node_modules/ava/lib/test.js:604:28
      at process.processTicksAndRejections (node:internal/process/task_queues:95:5)

  ─

  3 tests failed
"""


@pytest.mark.parametrize(("path", "prefix"), [("math.test.js", ""), ("sub/other.test.js", "sub › other › ")])
def test_ava_non_error_throws_are_at_their_test_and_diffs_keep_their_indentation(tmp_path: Path, path: str,
                                                                                 prefix: str) -> None:
    # AVA prints no place for a thrown string or a rejection with one; with several test files it names a test
    # `sub › other › title` for test/sub/other.test.js. A decoy file holds the same titles under another name.
    write(tmp_path, f"test/{path}", AVA_SOURCE)
    write(tmp_path, "test/decoy.test.js", AVA_SOURCE if prefix else "")
    write(tmp_path, "node_modules/ava/lib/test.js", AVA_SOURCE)  # never a project's test file
    parsed = parse(tmp_path, "ava", AVA_OUT.format(root=tmp_path, path=path, prefix=prefix))
    deep, string, rejected = parsed.items
    assert (deep.file, deep.line) == (f"test/{path}", 5)
    assert deep.text == (f"{prefix}builds a user: Difference (- actual, + expected):\n  {{\n-   age: 4,\n+   age: 3,\n"
                         "    name: 'ann',\n    tags: [\n      'x',\n    ],\n  }")  # no `› file://...` line left
    assert (string.file, string.line) == (f"test/{path}", 8)
    assert string.text == f"{prefix}throws a string: Error thrown in test:\n'plain string thrown'"
    assert (rejected.file, rejected.line) == (f"test/{path}", 13)
    assert rejected.text == (f"{prefix}rejects with a non-error: Rejected promise returned by test. Reason:\n"
                             "'rejected with a string'")  # not AVA's own `Error` with its frames


def test_ava_title_in_two_test_files_is_not_guessed(tmp_path: Path) -> None:
    write(tmp_path, "test/math.test.js", AVA_SOURCE)
    write(tmp_path, "test/copy.test.js", AVA_SOURCE)
    string = parse(tmp_path, "ava", AVA_OUT.format(root=tmp_path, path="math.test.js", prefix="")).items[1]
    assert (string.file, string.line) == (None, None)


# --- rustdoc: crate-level doctests, should_panic and compile-fail doctests ------------------------------------------

RUSTDOC_OUT = """\
   Doc-tests docy

running 3 tests
test src/lib.rs - (line 3) ... FAILED
test src/lib.rs - half (line 25) ... FAILED
test src/lib.rs - other (line 34) ... FAILED

failures:

---- src/lib.rs - (line 3) stdout ----
Test executable failed (exit status: 101).

stderr:

thread 'main' (1387) panicked at src/lib.rs:5:1:
assertion `left == right` failed
  left: 6
 right: 4
note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace


---- src/lib.rs - half (line 25) stdout ----
Test executable succeeded, but it's marked `should_panic`.
---- src/lib.rs - other (line 34) stdout ----
error[E0425]: cannot find function `nothing` in crate `docy`
  --> src/lib.rs:36:20
   |
36 | let y: i32 = docy::nothing();
   |                    ^^^^^^^ not found in `docy`

error: aborting due to 1 previous error

For more information about this error, try `rustc --explain E0425`.
Couldn't compile the test.

failures:
    src/lib.rs - (line 3)
    src/lib.rs - half (line 25)
    src/lib.rs - other (line 34)

test result: FAILED. 0 passed; 3 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.09s
"""


def test_crate_level_should_panic_and_compile_fail_doctests_at_their_doctest_with_rustdocs_words(
        tmp_path: Path) -> None:
    # the doctest that does not compile, as in the source: rustc's `-->` line is one too far down (rustdoc adds
    # `extern crate docy;` to a doctest naming the crate); the item is at the line holding the text rustc quotes
    write(tmp_path, "src/lib.rs", "//\n" * 33 + "/// ```\n/// let y: i32 = docy::nothing();\n/// ```\n")
    items = parse(tmp_path, "cargo-test", RUSTDOC_OUT).items
    assert [(i.file, i.line, i.text) for i in items] == [
        # a `//!` doctest: at its own line, not at its panic's line in rustdoc's generated file
        ("src/lib.rs", 3, "src/lib.rs - (line 3): assertion `left == right` failed\n  left: 6\n right: 4"),
        ("src/lib.rs", 25, "src/lib.rs - half (line 25): Test executable succeeded, but it's marked `should_panic`."),
        ("src/lib.rs", 35, "src/lib.rs - other (line 34): error[E0425]: cannot find function `nothing` in crate "
                           "`docy`\n  --> src/lib.rs:36:20")]


# --- Rust: a panic inside a helper names the test's call (cargo, for real) --------------------------------------

RUST_LIB = """\
pub fn add(a: i32, b: i32) -> i32 {
    a - b
}

pub fn parse(s: &str) -> i32 {
    s.parse().unwrap()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check_sum(a: i32, b: i32, want: i32) {
        assert_eq!(add(a, b), want, "sum of {} and {}", a, b);
    }

    #[test]
    fn adds_small() {
        let pairs = 1;
        check_sum(2, 3, 5 * pairs);
    }

    #[test]
    fn parses_number() {
        assert_eq!(parse("4x"), 4);
    }

    #[test]
    fn own_body() {
        assert!(add(2, 2) == 4, "two and two make {}", add(2, 2));
    }
}
"""
RUST_IT = """\
mod common;

#[test]
fn integration_helper() {
    common::expect_sum(1, 2, 3);
}
"""
RUST_COMMON = """\
pub fn expect_sum(a: i32, b: i32, want: i32) {
    assert_eq!(core_lib::add(a, b), want);
}
"""


@pytest.fixture(scope="module")
def rust_helper_check(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    if shutil.which("cargo") is None:
        pytest.skip("cargo is not installed: the Rust fixture workspace cannot build")
    import pwd

    root = tmp_path_factory.mktemp("rust-helper")
    write(root, "Cargo.toml", '[workspace]\nmembers = ["crates/core"]\nresolver = "2"\n')
    write(root, "crates/core/Cargo.toml", '[package]\nname = "core-lib"\nversion = "0.1.0"\nedition = "2021"\n')
    write(root, "crates/core/src/lib.rs", RUST_LIB)
    write(root, "crates/core/tests/it.rs", RUST_IT)
    write(root, "crates/core/tests/common/mod.rs", RUST_COMMON)
    write(root, ".gitignore", "target\n")
    git(root, "init", "-q", "-b", "main")
    account = Path(pwd.getpwuid(os.getuid()).pw_dir)  # the suite's HOME is not the one holding the toolchain
    env = {**os.environ, "CARGO_TARGET_DIR": str(root / "target"), "CARGO_NET_OFFLINE": "true",
           **{name: os.environ.get(name) or str(account / default)
              for name, default in (("RUSTUP_HOME", ".rustup"), ("CARGO_HOME", ".cargo"))}}
    proc = subprocess.run([DUN, "check", "--format", "json", "--only", "cargo-test"], cwd=root, capture_output=True,
                          text=True, env=env, timeout=600)
    assert proc.returncode == 1, proc.stderr
    [check] = [c for c in json.loads(proc.stdout)["checks"] if c["id"] == "cargo-test"]
    return check


def test_rust_panic_in_a_helper_is_at_the_assertion_and_names_the_tests_call(rust_helper_check: dict[str, Any]) -> None:
    items = {i["text"].split(": ", 1)[0]: i for i in rust_helper_check["items"]}
    assert set(items) == {"tests::adds_small", "tests::parses_number", "tests::own_body", "integration_helper"}
    small = items["tests::adds_small"]
    assert (small["file"], small["line"]) == ("crates/core/src/lib.rs", 14)  # the failing assert_eq!, in the helper
    assert small["text"].endswith("sum of 2 and 3\n  left: -1\n right: 5\n  at crates/core/src/lib.rs:20")
    parse_item = items["tests::parses_number"]  # a library function that panicked: the test's line calling it
    assert (parse_item["file"], parse_item["line"]) == ("crates/core/src/lib.rs", 6)
    assert parse_item["text"].endswith("\n  at crates/core/src/lib.rs:25")
    own = items["tests::own_body"]  # a panic in the test's own body names no call
    assert (own["file"], own["line"]) == ("crates/core/src/lib.rs", 30)
    assert own["text"] == "tests::own_body: two and two make 0"
    helper = items["integration_helper"]  # a helper module of the integration tests: the test binary's own file
    assert (helper["file"], helper["line"]) == ("crates/core/tests/common/mod.rs", 2)
    assert helper["text"].endswith("\n  at crates/core/tests/it.rs:5")


# --- mocha: describe levels kept apart (mocha, for real) ---------------------------------------------------------

MOCHA_TEST = """\
const assert = require('assert');

describe('Calculator', function () {
  describe('add()', function () {
    context('with positives', function () {
      it('adds two numbers', function () {
        assert.strictEqual(1 + 1, 3);
      });
    });
  });
});
describe('Calculator add()', function () {
  it('adds two numbers', function () {
    assert.strictEqual(2 + 2, 5);
  });
  it('passes', function () {});
});
"""


@pytest.fixture(scope="module")
def mocha_check(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    if shutil.which("node") is None:
        pytest.skip("node is not installed: the mocha fixture project cannot run")
    if not (RUNNERS / ".complete").is_file():
        pytest.skip(f"the pinned JavaScript runners are not installed in {RUNNERS}: run "
                    "tests/e2e/install_js_runners.sh (make test does)")
    root = tmp_path_factory.mktemp("mocha-levels")
    write(root, "package.json", json.dumps({"name": "levels", "private": True, "scripts": {"test": "mocha"},
                                            "devDependencies": {"mocha": "*"}}))
    write(root, "test/math.test.js", MOCHA_TEST)
    write(root, ".gitignore", "node_modules\n")
    (root / "node_modules").symlink_to(RUNNERS / "node_modules")
    git(root, "init", "-q", "-b", "main")
    proc = subprocess.run([DUN, "check", "--format", "json", "--only", "mocha"], cwd=root, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 1, proc.stderr
    [check] = [c for c in json.loads(proc.stdout)["checks"] if c["id"] == "mocha"]
    return check


def test_mocha_nested_describes_keep_their_levels(mocha_check: dict[str, Any]) -> None:
    # mocha's own JSON joins describe titles with spaces: these two tests had the same name
    assert mocha_check["signal"].startswith("exit 2: 2 failed, 1 passed")
    assert [(i["file"], i["line"], i["text"].split(":")[0]) for i in mocha_check["items"]] == [
        ("test/math.test.js", 7, "Calculator > add() > with positives > adds two numbers"),
        ("test/math.test.js", 14, "Calculator add() > adds two numbers")]
    assert "2 !== 3" in mocha_check["items"][0]["text"]


def test_mocha_report_without_dun_reporter_still_names_the_suite(tmp_path: Path) -> None:
    # a repository's own manifest on mocha's `json` reporter: the joined title, as before
    doc = {"stats": {"passes": 0, "failures": 1, "pending": 0}, "failures": [
        {"title": "adds", "fullTitle": "[x] adds", "file": f"{tmp_path}/t.js", "err": {"message": "off"}}]}
    [item] = parse(tmp_path, "mocha-json", json.dumps(doc)).items
    assert item.text == "[x] > adds: off"


# --- Go: a failing TestMain, a panic in the code a test calls ----------------------------------------------------

GO_TESTMAIN = """\
package util

import (
\t"errors"
\t"os"
\t"testing"
)

func TestMain(m *testing.M) {
\tif err := open(); err != nil {
\t\tos.Exit(1)
\t}
\tMust(errors.New("fixture missing"))
\tos.Exit(m.Run())
}
"""


def go_event(package: str, output: str) -> str:
    return json.dumps({"Action": "output", "Package": package, "Output": output})


def test_go_package_failing_in_testmain_is_at_testmain_and_a_panic_names_its_call(tmp_path: Path) -> None:
    write(tmp_path, "go.mod", "module example.com/tm\n\ngo 1.19\n")
    write(tmp_path, "db/main_test.go", GO_TESTMAIN.replace("package util", "package db"))
    write(tmp_path, "util/main_test.go", GO_TESTMAIN)
    write(tmp_path, "util/util.go",
          "package util\n\nfunc Must(err error) {\n\tif err != nil {\n\t\tpanic(err)\n\t}\n}\n")
    util, db = "example.com/tm/util", "example.com/tm/db"
    out = "\n".join([
        go_event(util, "panic: fixture missing\n"), go_event(util, "\n"), go_event(util, "goroutine 1 [running]:\n"),
        go_event(util, "example.com/tm/util.Must(...)\n"), go_event(util, f"\t{tmp_path}/util/util.go:5\n"),
        go_event(util, "example.com/tm/util.TestMain(0x7fc5b9eba108?)\n"),
        go_event(util, f"\t{tmp_path}/util/main_test.go:13 +0x49\n"), go_event(util, "main.main()\n"),
        go_event(util, "\t_testmain.go:49 +0x1d3\n"), go_event(util, f"FAIL\t{util}\t0.004s\n"),
        json.dumps({"Action": "fail", "Package": util, "Elapsed": 0.004}),
        go_event(db, "setup failed: connection refused\n"), go_event(db, f"FAIL\t{db}\t0.003s\n"),
        json.dumps({"Action": "fail", "Package": db, "Elapsed": 0.004})])
    panicked, setup = parse(tmp_path, "go-test-json", out).items
    assert (panicked.file, panicked.line) == ("util/util.go", 5)
    assert panicked.text == f"package {util}: panic: fixture missing\n  at util/main_test.go:13"
    assert (setup.file, setup.line, setup.text) == ("db/main_test.go", 9,
                                                    f"package {db}: setup failed: connection refused")


# --- Go: the build tags of the project's own `make test` --------------------------------------------------------

@pytest.mark.parametrize(("makefile", "tags"), [
    ("test:\n\tgo test -tags integration ./...\n", "-tags=integration"),
    ("lint:\n\tgo vet ./...\n\ntest: lint\n\t@go test -race -tags=integration,slow -count=1 ./...\n",
     "-tags=integration,slow"),
    ("test:\n\tGOFLAGS=-tags=e2e go test ./...\n", "-tags=e2e"),
    ("test:\n\tgo test ./...\n\ntest-integration:\n\tgo test -tags integration ./...\n", ""),  # not `make test`
    ("test:\n\tgo test -tags $(TAGS) ./...\n", ""),  # a variable: not guessed
])
def test_go_tags_come_from_the_projects_own_test_recipe(tmp_path: Path, makefile: str, tags: str) -> None:
    from dun.checks.gorunner import go_tags

    write(tmp_path, "Makefile", makefile)
    assert go_tags(tmp_path) == tags


GO_TAGGED = """\
//go:build integration

package store

import "testing"

func TestPutIntegration(t *testing.T) {
\tt.Fatalf("Put(%q) = false, want true", "key")
}
"""


@pytest.fixture(scope="module")
def go_env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """One build cache for the module's Go runs: the suite's isolated HOME would rebuild the standard library."""
    if shutil.which("go") is None:
        pytest.skip("go is not installed: the Go fixture modules cannot build")
    base = tmp_path_factory.mktemp("go")
    return {**os.environ, "GOCACHE": str(base / "cache"), "GOPATH": str(base / "path"), "GOTOOLCHAIN": "local"}


def go_checks(root: Path, env: dict[str, str], only: str) -> dict[str, dict[str, Any]]:
    git(root, "init", "-q", "-b", "main")
    proc = subprocess.run([DUN, "check", "--format", "json", "--only", only], cwd=root, capture_output=True,
                          text=True, env=env, timeout=300)
    return {c["id"]: c for c in json.loads(proc.stdout)["checks"]}


def test_go_test_runs_the_test_files_behind_the_tags_make_test_gives(tmp_path: Path, go_env: dict[str, str]) -> None:
    write(tmp_path, "go.mod", "module example.com/tags\n\ngo 1.19\n")
    write(tmp_path, "Makefile", "test:\n\tgo test -tags integration ./...\n")
    write(tmp_path, "store/store.go", "package store\n\nfunc Put(k string) bool { return k == \"\" }\n")
    write(tmp_path, "store/store_test.go", "package store\n\nimport \"testing\"\n\nfunc TestPut(t *testing.T) {}\n")
    write(tmp_path, "store/store_integration_test.go", GO_TAGGED)
    check = go_checks(tmp_path, go_env, "go-test")["go-test"]
    assert check["signal"].startswith("exit 1: 1 failed, 1 passed"), check  # without the tag: 1 passed, all clear
    assert [(i["file"], i["line"]) for i in check["items"]] == [("store/store_integration_test.go", 8)]


# --- Python: a src/ layout with no environment dun can find (tox's own) ----------------------------------------

def test_src_layout_without_an_environment_imports_the_work_trees_code(tmp_path: Path) -> None:
    write(tmp_path, "pyproject.toml", '[project]\nname = "calc"\nversion = "0.1"\n\n'
                                      '[tool.setuptools.packages.find]\nwhere = ["src"]\n')
    write(tmp_path, "tox.ini", "[testenv]\ncommands = python -m unittest discover -s tests -v\n")
    write(tmp_path, "src/calc/__init__.py", "def add(a, b):\n    return a + b\n")
    write(tmp_path, "tests/test_calc.py", "import unittest\n\nfrom calc import add\n\n\n"
                                          "class T(unittest.TestCase):\n    def test_add(self):\n"
                                          "        self.assertEqual(add(2, 3), 5)\n")
    git(tmp_path, "init", "-q", "-b", "main")
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}

    def unittest_check() -> dict[str, Any]:
        proc = subprocess.run([DUN, "check", "--format", "json", "--only", "unittest", "--no-cache"], cwd=tmp_path,
                              capture_output=True, text=True, env=env, timeout=300)
        [check] = [c for c in json.loads(proc.stdout)["checks"] if c["id"] == "unittest"]
        return check

    clean = unittest_check()  # was: ModuleNotFoundError: No module named 'calc', on a clean project
    assert (clean["status"], clean["signal"]) == ("pass", "exit 0: 1 test run"), clean
    write(tmp_path, "src/calc/__init__.py", "def add(a, b):\n    return a - b\n")
    broken = unittest_check()
    assert broken["status"] == "fail"
    assert [(i["file"], i["line"]) for i in broken["items"]] == [("tests/test_calc.py", 8)]
    assert "-1 != 5" in broken["items"][0]["text"]
    assert "`PYTHONPATH=src python3 -m unittest TEST_ID`" in broken["next"]


def test_doctor_names_the_program_a_check_runs_past_its_preparing_commands() -> None:
    from dun.cli.commands.doctor import first_program

    assert first_program("rm -f .dun/cache/x; go test -json ./... && mv a b") == "go"
    assert first_program("code=0; (cd pkg && ../node_modules/.bin/jest) || code=$?") == "../node_modules/.bin/jest"
    assert first_program("CI=1 pytest -q") == "pytest"
    assert first_program("rm -rf build") == "rm"  # nothing else: what it runs
    assert first_program("echo 'unclosed") is None


# --- jest on an ESM project: the node options its test script gives -------------------------------------------

@pytest.mark.parametrize(("script", "options"), [
    ("node --experimental-vm-modules node_modules/jest/bin/jest.js", "--experimental-vm-modules"),
    ("NODE_OPTIONS=--experimental-vm-modules npx jest --ci", "--experimental-vm-modules"),
    ("cross-env NODE_OPTIONS='--experimental-vm-modules --no-warnings' jest",
     "--experimental-vm-modules --no-warnings"),
    ("jest", ""),
    ("node scripts/build.js && jest", ""),
])
def test_node_options_the_test_script_runs_the_runner_with(tmp_path: Path, script: str, options: str) -> None:
    from dun.checks.jsenv import node_options

    write(tmp_path, "package.json", json.dumps({"scripts": {"test": script}}))
    assert node_options(tmp_path, "jest") == options


JEST_ESM = """\
import { double } from '../lib.mjs';

describe('math', () => {
  test('doubles', () => {
    expect(double(2)).toBe(5);
  });
  test('passes', () => {
    expect(double(1)).toBe(2);
  });
});
"""


def test_jest_on_an_esm_project_runs_with_its_scripts_node_options(tmp_path: Path) -> None:
    # `"test": "node --experimental-vm-modules node_modules/jest/bin/jest.js"`: run bare, jest cannot load the
    # project's ESM tests at all ("Must use import to load ES Module"), a clean project failing on day one
    if shutil.which("node") is None or not (RUNNERS / ".complete").is_file():
        pytest.skip("node or the pinned JavaScript runners are missing: run tests/e2e/install_js_runners.sh")
    write(tmp_path, "package.json", json.dumps({
        "name": "esm", "private": True, "type": "module", "devDependencies": {"jest": "*"},
        "scripts": {"test": "node --experimental-vm-modules node_modules/jest/bin/jest.js"}}))
    write(tmp_path, "lib.mjs", "export function double(x) {\n  return x * 2;\n}\n")
    write(tmp_path, "test/math.test.js", JEST_ESM)
    write(tmp_path, ".gitignore", "node_modules\n")
    (tmp_path / "node_modules").symlink_to(RUNNERS / "node_modules")
    git(tmp_path, "init", "-q", "-b", "main")
    env = {k: v for k, v in os.environ.items() if k != "NODE_OPTIONS"}
    proc = subprocess.run([DUN, "check", "--format", "json", "--only", "jest"], cwd=tmp_path, capture_output=True,
                          text=True, env=env, timeout=300)
    [check] = [c for c in json.loads(proc.stdout)["checks"] if c["id"] == "jest"]
    assert check["signal"].startswith("exit 1: 1 failed, 1 passed"), check
    [item] = check["items"]
    assert (item["file"], item["line"]) == ("test/math.test.js", 5)
    assert item["text"].startswith("math > doubles: expect(received).toBe(expected)")


# --- Rust on cargo-nextest: its libtest JSON, the doctests after it ----------------------------------------------

NEXTEST_OUT = r"""{"reason":"build-finished","success":true}
    Starting 3 tests across 2 binaries
        FAIL [   0.008s] (1/3) app::bin/app tests::it_works
  output ───

    thread 'tests::it_works' (32746) panicked at crates/app/src/main.rs:9:9:
    test tests::it_works ... FAILED
    test result: FAILED. 0 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s

{"type":"suite","event":"started","test_count":1}
{"type":"test","event":"started","name":"app::app$tests::it_works"}
{app}
{"type":"suite","event":"failed","passed":0,"failed":1,"ignored":0,"measured":0,"filtered_out":0,"exec_time":0.008}
{"type":"suite","event":"started","test_count":2}
{core}
{"type":"test","event":"ok","name":"core-lib::core_lib$tests::adds_zero","exec_time":0.005}
{"type":"suite","event":"failed","passed":1,"failed":1,"ignored":0,"measured":0,"filtered_out":0,"exec_time":0.02}
"""


def test_nextest_libtest_json_items_name_the_test_and_say_which_binary_when_two_share_a_name(tmp_path: Path) -> None:
    def failed(name: str, stdout: str) -> str:
        return json.dumps({"type": "test", "event": "failed", "name": name, "exec_time": 0.01, "stdout": stdout},
                          separators=(",", ":"))

    app = failed("app::app$tests::it_works",
                 "\nthread 'tests::it_works' (32746) panicked at crates/app/src/main.rs:9:9:\n"
                 "assertion `left == right` failed\n  left: 5\n right: 15\n"
                 "note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace\n")
    core = failed("core-lib::core_lib$tests::it_works",
                  "\nthread 'tests::it_works' (32748) panicked at crates/core/src/lib.rs:14:9:\n"
                  "assertion failed: false\n")
    parsed = parse(tmp_path, "cargo-test", NEXTEST_OUT.replace("{app}", app).replace("{core}", core))
    assert parsed.summary == "2 failed, 1 passed"  # nextest's own lines of its per-test output are not counted
    assert [(i.file, i.line, i.text.split("\n")[0]) for i in parsed.items] == [
        ("crates/app/src/main.rs", 9, "tests::it_works (in app::app): assertion `left == right` failed"),
        ("crates/core/src/lib.rs", 14, "tests::it_works (in core-lib::core_lib): assertion failed: false")]


NEXTEST_BIN = CACHE / "nextest-0.9.148" / "bin"  # tests/e2e/install_nextest.sh
NEXTEST_IT = """\
#[test]
fn sets_env_a() {
    std::env::set_var("DUN_SHARED", "a");
    std::thread::sleep(std::time::Duration::from_millis(100));
    assert_eq!(std::env::var("DUN_SHARED").unwrap(), "a");
}

#[test]
fn sets_env_b() {
    std::env::set_var("DUN_SHARED", "b");
    std::thread::sleep(std::time::Duration::from_millis(100));
    assert_eq!(std::env::var("DUN_SHARED").unwrap(), "b");
}

#[test]
fn adds() {
    assert_eq!(calc::double(2), 5, "two doubled");
}
"""
NEXTEST_LIB = """\
/// Doubles.
///
/// ```
/// assert_eq!(calc::double(2), 5);
/// ```
pub fn double(x: i32) -> i32 {
    x * 2
}
"""


def test_a_project_on_nextest_runs_under_it_and_its_doctests_too(tmp_path: Path) -> None:
    # tests that share process state pass under nextest (a process each) and fail under `cargo test` (threads)
    if shutil.which("cargo") is None or not (NEXTEST_BIN / "cargo-nextest").is_file():
        pytest.skip(f"cargo or cargo-nextest is missing ({NEXTEST_BIN}): run tests/e2e/install_nextest.sh "
                    "(make test does)")
    import pwd

    write(tmp_path, "Cargo.toml", '[package]\nname = "calc"\nversion = "0.1.0"\nedition = "2021"\n')
    write(tmp_path, ".config/nextest.toml", '[profile.default]\nslow-timeout = "60s"\n')
    write(tmp_path, "src/lib.rs", NEXTEST_LIB)
    write(tmp_path, "tests/it.rs", NEXTEST_IT)
    write(tmp_path, ".gitignore", "target\n")
    git(tmp_path, "init", "-q", "-b", "main")
    account = Path(pwd.getpwuid(os.getuid()).pw_dir)
    env = {**os.environ, "CARGO_TARGET_DIR": str(tmp_path / "target"), "CARGO_NET_OFFLINE": "true",
           "PATH": f"{NEXTEST_BIN}{os.pathsep}{os.environ['PATH']}",
           **{name: os.environ.get(name) or str(account / default)
              for name, default in (("RUSTUP_HOME", ".rustup"), ("CARGO_HOME", ".cargo"))}}
    proc = subprocess.run([DUN, "check", "--format", "json", "--only", "cargo-test,cargo-nextest"], cwd=tmp_path,
                          capture_output=True, text=True, env=env, timeout=600)
    checks = {c["id"]: c for c in json.loads(proc.stdout)["checks"]}
    assert checks["cargo-test"]["status"] == "skip"  # not both: nextest is the project's runner
    nextest = checks["cargo-nextest"]
    assert nextest["signal"].startswith("exit 100: 2 failed, 2 passed"), nextest
    assert [(i["file"], i["line"], i["text"].split(":")[0]) for i in nextest["items"]] == [
        ("tests/it.rs", 17, "adds"), ("src/lib.rs", 3, "src/lib.rs - double (line 3)")]


GO_WORK = "go 1.19\n\nuse (\n\t./svc\n\t./lib // the shared code\n)\n"


def test_go_work_modules_and_their_packages(tmp_path: Path) -> None:
    from dun.checks.gorunner import go_packages, go_work_modules

    write(tmp_path, "go.work", GO_WORK)
    write(tmp_path, "lib/go.mod", "module example.com/lib\n\ngo 1.19\n")
    write(tmp_path, "svc/go.mod", "module example.com/svc // the service\n")
    assert go_work_modules(tmp_path) == [("example.com/svc", "svc"), ("example.com/lib", "lib")]
    assert go_packages(tmp_path) == "./svc/... ./lib/..."
    write(tmp_path, "go.mod", "module example.com/root\n")  # a root module: `./...` as ever
    assert (go_work_modules(tmp_path), go_packages(tmp_path)) == ([], "./...")


def test_a_go_work_of_modules_is_tested_module_by_module(tmp_path: Path, go_env: dict[str, str]) -> None:
    # no go.mod at the root: `go test ./...` there matches no module; dun ran nothing and warned of two projects
    write(tmp_path, "go.work", GO_WORK)
    write(tmp_path, "lib/go.mod", "module example.com/lib\n\ngo 1.19\n")
    write(tmp_path, "lib/mathx/mathx.go", "package mathx\n\nfunc Add(a, b int) int { return a - b }\n\n"
                                          "func Sub(a, b int) int {\n\treturn a - b\n}\n")
    write(tmp_path, "lib/mathx/mathx_test.go", 'package mathx\n\nimport "testing"\n\nfunc TestAdd(t *testing.T) {\n'
                                               '\tif Add(2, 3) != 5 {\n\t\tt.Error("Add(2, 3) != 5")\n\t}\n}\n')
    write(tmp_path, "svc/go.mod", "module example.com/svc\n\ngo 1.19\n\nrequire example.com/lib v0.0.0\n")
    write(tmp_path, "svc/api/api.go", 'package api\n\nimport "example.com/lib/mathx"\n\n'
                                      "func Total(a, b int) int { return mathx.Add(a, b) }\n")
    write(tmp_path, "svc/api/api_test.go", 'package api\n\nimport "testing"\n\nfunc TestTotal(t *testing.T) {\n'
                                           '\tif Total(1, 2) != 3 {\n\t\tt.Fatal("Total(1, 2) != 3")\n\t}\n}\n')
    checks = go_checks(tmp_path, go_env, "go-test,test-suites")
    assert checks["test-suites"]["status"] == "pass", checks["test-suites"]
    assert checks["go-test"]["signal"].startswith("exit 1: 2 failed"), checks["go-test"]
    assert sorted((i["file"], i["line"]) for i in checks["go-test"]["items"]) == [("lib/mathx/mathx_test.go", 7),
                                                                                ("svc/api/api_test.go", 7)]
    write(tmp_path, "lib/mathx/mathx.go", "package mathx\n\nfunc Add(a, b int) int { return a + b }\n\n"
                                          "func Sub(a, b int) int {\n\treturn a - b\n}\n")
    checks = go_checks(tmp_path, go_env, "go-test,go-coverage")
    assert checks["go-test"]["status"] == "pass", checks["go-test"]
    # the profile names lib's files by their module's import path: read as the workspace's own files
    assert [(i["file"], i["line"]) for i in checks["go-coverage"]["items"]] == [("lib/mathx/mathx.go", 5)]


# --- bun's own test runner (`bun test`): its JUnit report, describe blocks in order -----------------------------

BUN_JUNIT = """\
<?xml version="1.0" encoding="UTF-8"?>
<testsuites name="bun test" tests="3" assertions="2" failures="3" skipped="0" >
  <testsuite name="test/a.test.js" file="test/a.test.js" tests="3" assertions="2" failures="3" skipped="0" >
    <testsuite name="outer" file="test/a.test.js" line="2" tests="2" assertions="2" failures="2" skipped="0" >
      <testsuite name="inner" file="test/a.test.js" line="3" tests="1" assertions="1" failures="1" skipped="0" >
        <testcase name="deep" classname="inner &gt; outer"  file="test/a.test.js" line="4" assertions="1">
          <failure type="AssertionError" message="toBe">Error: want 2&#10;  at test/a.test.js:4:36&#10;</failure>
        </testcase>
      </testsuite>
      <testcase name="shallow" classname="outer"  file="test/a.test.js" line="6" assertions="1">
        <failure type="AssertionError" message="toBe">AssertionError: want 3&#10;  at test/a.test.js:6:37&#10;</failure>
      </testcase>
    </testsuite>
    <testcase name="top" classname=""  file="test/a.test.js" line="8" assertions="0">
      <failure type="Error" message="a string">a string&#10;      at test/a.test.js:8:27&#10;</failure>
    </testcase>
  </testsuite>
</testsuites>
"""


def test_bun_test_items_name_their_describe_blocks_outermost_first(tmp_path: Path) -> None:
    # bun's classname lists the blocks innermost first (`inner > outer`); its nested <testsuite>s are in order
    write(tmp_path, "test/a.test.js", "")
    parsed = parse_file(tmp_path, "junit-xml", BUN_JUNIT)
    assert parsed.summary == "3 failed"
    assert sorted((i.file, i.line, i.text.split(":")[0]) for i in parsed.items) == [
        ("test/a.test.js", 4, "outer > inner > deep"), ("test/a.test.js", 6, "outer > shallow"),
        ("test/a.test.js", 8, "top")]


@pytest.mark.parametrize(("script", "runner"), [("bun test", True), ("bun test --coverage test/", True),
                                                ("bun run test:unit", False), ("vitest run", False)])
def test_a_project_whose_test_script_runs_bun_test_uses_bun_test(tmp_path: Path, script: str, runner: bool) -> None:
    from dun.checks.ecosystems import uses
    from dun.checks.jsenv import script_args

    write(tmp_path, "package.json", json.dumps({"scripts": {"test": script, "test:unit": "node --test"}}))
    assert uses(tmp_path, "bun-test") is runner
    if runner:
        assert script_args(tmp_path, "bun test") == script.removeprefix("bun test").strip()


def parse_file(root: Path, kind: str, document: str) -> Parsed:
    write(root, ".dun/cache/report.xml", document)
    options = {"type": kind, "pattern": None, "file": ".dun/cache/report.xml", "issue_path": "", "issue_fields": None,
               "fail_on_items": False, "max_items": 50}
    run = ParserRun(options, ParseContext(root, root))
    run.before()
    write(root, ".dun/cache/report.xml", document)
    return run.finish()


# --- pytest --doctest-modules: the failure's own path line, from the repository ----------------------------------

PYTEST_DOCTEST = """<?xml version="1.0" encoding="utf-8"?><testsuites name="pytest tests"><testsuite name="pytest"
 errors="0" failures="1" skipped="0" tests="1"><testcase classname="pkg.__init__" name="pkg.add" file="pkg/__init__.py"
 line="1" time="0.010"><failure message="002 Add.&#10;003 &#10;004     &gt;&gt;&gt; add(2, 3)&#10;Expected:&#10;
    5&#10;Got:&#10;    -1&#10;&#10;{root}/pkg/__init__.py:4: DocTestFailure">002 Add.
003
004     &gt;&gt;&gt; add(2, 3)
Expected:
    5
Got:
    -1

{root}/pkg/__init__.py:4: DocTestFailure</failure></testcase></testsuite></testsuites>"""


def test_pytest_doctest_failure_names_the_repositorys_path_not_the_machines(tmp_path: Path) -> None:
    # the item's text is the same on every machine (and in the history and the cache): no /home/me/src/ in it
    [item] = parse_file(tmp_path, "junit-xml", PYTEST_DOCTEST.format(root=tmp_path)).items
    assert (item.file, item.line) == ("pkg/__init__.py", 4)
    assert item.text.endswith("Got:\n    -1\npkg/__init__.py:4: DocTestFailure"), item.text
    assert str(tmp_path) not in item.text
