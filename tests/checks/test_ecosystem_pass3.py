"""Project shapes from the third independent ecosystem pass: each was wrong before, as a user would see it.

Each runs the real runner through `dun check` on a small project (skipped with a message when node or the pinned
JavaScript runners are missing): a `before` hook that fails in node's runner, a rejection left behind after a test
ended, vitest's unhandled errors (left out of its JUnit report)."""

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

HERE = Path(__file__).parent
DUN = str(Path(sys.executable).parent / "dun")
SPEC = HERE / "projects" / "js-runners.json"
CACHE = Path(os.environ.get("DUN_E2E_CACHE", HERE.parent / "e2e" / ".cache"))
RUNNERS = CACHE / f"js-runners-{hashlib.sha256(SPEC.read_bytes()).hexdigest()[:12]}"


def _node() -> None:
    if shutil.which("node") is None:
        pytest.skip("node is not installed: the JavaScript fixture projects cannot run")


def _runners() -> None:
    _node()
    if not (RUNNERS / ".complete").is_file():
        pytest.skip(f"the pinned JavaScript runners are not installed in {RUNNERS}: run "
                    "tests/e2e/install_js_runners.sh (make test does)")


def _project(root: Path, package: dict[str, Any], files: dict[str, str], runners: bool = False) -> Path:
    write(root, "package.json", json.dumps({"name": root.name, "private": True, **package}))
    for rel, text in files.items():
        write(root, rel, text)
    write(root, ".gitignore", "node_modules\n.dun/\n")
    if runners:
        (root / "node_modules").symlink_to(RUNNERS / "node_modules")
    git(root, "init", "-q", "-b", "main")
    return root


def _check(root: Path, check: str, code: int = 1) -> dict[str, Any]:
    proc = subprocess.run([DUN, "check", "--format", "json", "--only", check], cwd=root, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == code, proc.stdout + proc.stderr
    [found] = [c for c in json.loads(proc.stdout)["checks"] if c["id"] == check]
    return found


def _where(check: dict[str, Any]) -> list[tuple[str, int, str]]:
    return [(i["file"], i["line"], i["text"].split(": ")[0]) for i in check["items"]]


# --- node --test: a failing `before` hook, a rejection after the test ended ---------------------------------------

NODE_HOOKS = """\
const { describe, it, before, afterEach } = require("node:test");
const assert = require("node:assert");

describe("cache", () => {
  describe("cold", () => {
    before(() => {
      throw new Error("cache warmup failed");
    });
    it("hits", () => {
      assert.ok(true);
    });
    it("misses", () => {
      assert.ok(true);
    });
  });

  describe("evicts", () => {
    let size = 0;
    afterEach(() => {
      assert.strictEqual(size, 0, "entries left behind");
    });
    it("puts one", () => {
      size += 1;
    });
  });
});

it("leaves a rejection behind", () => {
  setImmediate(() => Promise.reject(new Error("late write failed")));
});
"""


@pytest.fixture(scope="module")
def node_hooks(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    _node()
    root = _project(tmp_path_factory.mktemp("node-hooks"), {"scripts": {"test": "node --test test/"}},
                    {"test/cache.test.js": NODE_HOOKS})
    return _check(root, "node-test")


def test_node_before_hook_failure_is_one_item_at_the_hook(node_hooks: dict[str, Any]) -> None:
    # node cancels the tests of a describe whose `before` hook threw: the items were those two, each "test did not
    # finish before its parent and was cancelled", and the hook's own error was nowhere
    assert _where(node_hooks)[0] == ("test/cache.test.js", 7, "cache > cold")
    assert node_hooks["items"][0]["text"] == "cache > cold: cache warmup failed\n(2 tests not run: hits, misses)"
    assert not any("cancelled" in i["text"] for i in node_hooks["items"])


def test_node_after_each_hook_failure_stays_at_its_test(node_hooks: dict[str, Any]) -> None:
    assert _where(node_hooks)[1] == ("test/cache.test.js", 20, "cache > evicts > puts one")
    assert "entries left behind" in node_hooks["items"][1]["text"]


def test_node_rejection_after_a_test_ended_is_an_item(node_hooks: dict[str, Any]) -> None:
    # node fails the run for it (exit 1) while the test itself printed `ok`: it was in no item
    assert _where(node_hooks)[2] == ("test/cache.test.js", 28, "leaves a rejection behind")
    assert 'the error "Error: late write failed"' in node_hooks["items"][2]["text"]
    assert len(node_hooks["items"]) == 3


# --- vitest: unhandled errors are not in its JUnit report -------------------------------------------------------

VITEST_JOBS = """\
import { describe, expect, it } from "vitest";

describe("jobs", () => {
  it("fires and forgets", async () => {
    setTimeout(() => Promise.reject(new Error("job queue closed")), 5);
    await new Promise((r) => setTimeout(r, 20));
    expect(true).toBe(true);
  });
});
"""


@pytest.fixture(scope="module")
def vitest_unhandled(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    _runners()
    root = _project(tmp_path_factory.mktemp("vitest-unhandled"),
                    {"type": "module", "scripts": {"test": "vitest run"}, "devDependencies": {"vitest": "*"}},
                    {"test/jobs.test.js": VITEST_JOBS}, runners=True)
    return _check(root, "vitest")


def test_vitest_unhandled_rejection_is_an_item(vitest_unhandled: dict[str, Any]) -> None:
    # every test passed in the report, vitest exited 1 for the rejection: the check failed with no item at all
    assert vitest_unhandled["status"] == "fail"
    assert _where(vitest_unhandled) == [("test/jobs.test.js", 5, "test/jobs.test.js > fires and forgets")]
    assert vitest_unhandled["items"][0]["text"].endswith("unhandled rejection: Error: job queue closed")
    assert "1 unhandled error" in vitest_unhandled["signal"]


# --- pytest: a config named with -c, fixtures failing in conftest.py, pytest-rerunfailures' attempts -------------

def _pytest_check(root: Path) -> dict[str, Any]:
    env = {**{k: v for k, v in os.environ.items() if k != "PYTHONPATH"}, "VIRTUAL_ENV": sys.prefix}
    proc = subprocess.run([DUN, "check", "--format", "json", "--only", "pytest"], cwd=root, capture_output=True,
                          text=True, env=env, timeout=300)
    [check] = [c for c in json.loads(proc.stdout)["checks"] if c["id"] == "pytest"]
    return check


@pytest.fixture(scope="module")
def pytest_config_in_tests(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("pytest-c")
    write(root, "pyproject.toml", '[project]\nname = "calc"\nversion = "0.1.0"\n')
    write(root, "Makefile", "test:\n\tpython -m pytest -c tests/pytest.ini\n")
    write(root, "tests/pytest.ini", "[pytest]\npythonpath = ../src\npython_files = check_*.py\n"
                                    "python_functions = check_*\n")
    write(root, "src/calc/__init__.py", "def div(a, b):\n    return a / b\n")
    write(root, "tests/conftest.py", "import pytest\n\n\n@pytest.fixture\ndef scratch(tmp_path):\n    yield tmp_path\n"
                                     "    raise OSError('could not remove scratch')\n")
    write(root, "tests/check_calc.py", "from calc import div\n\n\ndef check_div():\n    assert div(7, 2) == 3\n\n\n"
                                       "def check_scratch(scratch):\n    assert scratch.is_dir()\n")
    git(root, "init", "-q", "-b", "main")
    return _pytest_check(root)


def test_pytest_runs_with_the_config_file_the_projects_command_names(pytest_config_in_tests: dict[str, Any]) -> None:
    # without `-c tests/pytest.ini` pytest collected nothing from the root (check_*.py), exit 5: a pass
    check = pytest_config_in_tests
    assert check["status"] == "fail" and check["signal"].startswith("exit 1: 1 failed, 1 error"), check
    # pytest writes the file from its rootdir (tests/): `check_calc.py`, a file that is not there from the root
    assert _where(check)[0] == ("tests/check_calc.py", 5, "tests/check_calc.py::check_div")


def test_pytest_fixture_teardown_failure_is_at_the_fixture(pytest_config_in_tests: dict[str, Any]) -> None:
    # was at the test's `def` line: the traceback has no frame in the test's own file
    assert _where(pytest_config_in_tests)[1] == ("tests/conftest.py", 7, "tests/check_calc.py::check_scratch")
    assert 'failed on teardown with "OSError: could not remove scratch"' in pytest_config_in_tests["items"][1]["text"]


RERUN_REPORT = """\
<?xml version="1.0" encoding="utf-8"?><testsuites name="pytest tests"><testsuite name="pytest" errors="1" \
failures="1" skipped="0" tests="7" time="35.9"><testcase classname="tests.test_shop" name="test_total" \
file="tests/test_shop.py" line="22" time="0.001" /><testcase classname="tests.test_shop" name="test_total" \
file="tests/test_shop.py" line="22" time="0.001"><failure message="assert 13.5 == 13.0">tests/test_shop.py:23: in \
test_total
    assert total([10.0, 5.0], discount=0.1) == 13.0
E   assert 13.5 == 13.0</failure></testcase><testcase classname="tests.test_shop" name="test_uses_db" \
file="tests/test_shop.py" line="34" time="0.000" /><testcase classname="tests.test_shop" name="test_uses_db" \
file="tests/test_shop.py" line="34" time="0.000"><error message="failed on setup with &quot;ConnectionError: db is \
down&quot;">tests/test_shop.py:32: in db
    raise ConnectionError("db is down")
E   ConnectionError: db is down</error></testcase><testcase classname="tests.test_shop" name="test_hangs" \
file="tests/test_shop.py" line="25" time="2.964" /><testcase classname="tests.test_shop" name="test_hangs" \
file="tests/test_shop.py" line="25" time="30.001" /><testcase classname="tests.test_shop" name="test_sku[plain]" \
file="tests/test_shop.py" line="8" time="0.001" /></testsuite></testsuites>
"""


def test_pytest_rerun_attempts_are_not_counted_as_passed_tests(tmp_path: Path) -> None:
    # pytest-rerunfailures (`--reruns 1`) writes each earlier attempt as an empty <testcase>: 3 passed became 6
    from dun.checks.parsers.base import ParseContext
    from dun.checks.parsers.junit import JUnitParser

    write(tmp_path, "tests/test_shop.py", "")
    parsed = JUnitParser({}, ParseContext(tmp_path, tmp_path)).parse(RERUN_REPORT.encode())
    assert parsed.summary == "1 failed, 1 error, 2 passed"  # pytest: 1 failed, 2 passed, 1 error, 3 rerun
    assert [(i.file, i.line) for i in parsed.items] == [("tests/test_shop.py", 23), ("tests/test_shop.py", 32)]


# --- Go: the race detector the project's `make test` runs, a module two levels down ----------------------------

GO_RACE = """\
package counter

import "sync"

// Count adds n in parallel.
func Count(n int) int {
\ttotal := 0
\tvar wg sync.WaitGroup
\tfor i := 0; i < n; i++ {
\t\twg.Add(1)
\t\tgo func() {
\t\t\tdefer wg.Done()
\t\t\ttotal++
\t\t}()
\t}
\twg.Wait()
\treturn total
}
"""


GO_RACE_OUT = """\
TestCount|=== RUN   TestCount
TestCount|==================
TestCount|WARNING: DATA RACE
TestCount|Read at 0x00c0000b2168 by goroutine 9:
TestCount|  example.com/counter.Count.func1()
TestCount|      ROOT/counter.go:13 +0x74
TestCount|
TestCount|Previous write at 0x00c0000b2168 by goroutine 8:
TestCount|  example.com/counter.Count.func1()
TestCount|      ROOT/counter.go:13 +0x86
TestCount|
TestCount|Goroutine 9 (running) created at:
TestCount|  example.com/counter.Count()
TestCount|      ROOT/counter.go:11 +0x84
TestCount|  example.com/counter.TestCount()
TestCount|      ROOT/counter_test.go:6 +0x30
TestCount|  testing.tRunner()
TestCount|      /usr/lib/go-1.19/src/testing/testing.go:1446 +0x216
TestCount|  testing.(*T).Run.func1()
TestCount|      /usr/lib/go-1.19/src/testing/testing.go:1493 +0x47
TestCount|
TestCount|Goroutine 8 (finished) created at:
TestCount|  example.com/counter.Count()
TestCount|      ROOT/counter.go:11 +0x84
TestCount|  example.com/counter.TestCount()
TestCount|      ROOT/counter_test.go:6 +0x30
TestCount|  testing.tRunner()
TestCount|      /usr/lib/go-1.19/src/testing/testing.go:1446 +0x216
TestCount|  testing.(*T).Run.func1()
TestCount|      /usr/lib/go-1.19/src/testing/testing.go:1493 +0x47
TestCount|==================
TestCount|    testing.go:1319: race detected during execution of test
TestCount|--- FAIL: TestCount (0.00s)
TestSmall|=== RUN   TestSmall
TestSmall|--- PASS: TestSmall (0.00s)
-|=== CONT
-|    testing.go:1319: race detected during execution of test
-|FAIL
-|FAIL	example.com/counter	0.044s
"""
GO_RACE_RESULTS = [('TestCount', 'fail'), ('TestSmall', 'pass'), ('', 'fail')]


def _go_events(root: Path) -> list[str]:
    """`go test -json -race` on this module, as go printed it (each output line: `TEST|TEXT`, `-` for none)."""
    def event(test: str, **fields: str) -> str:
        return json.dumps({"Package": "example.com/counter", **({"Test": test} if test else {}), **fields})

    lines = [line.split("|", 1) for line in GO_RACE_OUT.replace("ROOT", str(root)).splitlines()]
    return [event("" if test == "-" else test, Action="output", Output=text + "\n") for test, text in lines] + \
        [event(test, Action=action) for test, action in GO_RACE_RESULTS]


def test_go_test_runs_the_race_detector_make_test_runs(tmp_path: Path) -> None:
    # without -race the test passed: an all-clear on the race `make test` fails on
    from dun.checks.gorunner import go_race

    write(tmp_path, "Makefile", "build:\n\tgo build ./...\n\ntest:\n\tgo test -race ./...\n")
    assert go_race(tmp_path) == "-race"
    write(tmp_path, "Makefile", "test:\n\tgo test ./...\n\nrace:\n\tgo test -race ./...\n")
    assert go_race(tmp_path) == ""  # another target's: not the project's `make test`


def test_go_race_report_is_at_the_racing_access(tmp_path: Path) -> None:
    # what go test -json -race printed on this module: the item was at the runtime's testing.go:1319
    from dun.checks.parsers.base import ParseContext
    from dun.checks.parsers.run import ParserRun

    write(tmp_path, "go.mod", "module example.com/counter\n\ngo 1.19\n")
    write(tmp_path, "counter.go", GO_RACE)
    options = {"type": "go-test-json", "pattern": None, "file": None, "issue_path": "", "issue_fields": None,
               "fail_on_items": False, "max_items": 50}
    run = ParserRun(options, ParseContext(tmp_path, tmp_path))
    for line in _go_events(tmp_path):
        run.feed(line)
    [item] = run.finish().items
    assert (item.file, item.line) == ("counter.go", 13)
    assert "race detected during execution of test" in item.text and "at counter_test.go:6" in item.text
    assert "write by goroutine" in item.text


def test_a_go_module_under_tools_is_a_suite_no_check_runs(tmp_path: Path) -> None:
    # tools/lint/go.mod was two levels down in a directory not known to hold projects: "nothing actionable"
    write(tmp_path, "README.md", "# repo\n")
    write(tmp_path, "tools/lint/go.mod", "module example.com/lint\n\ngo 1.19\n")
    write(tmp_path, "tools/lint/lint_test.go", "package lint\n")
    git(tmp_path, "init", "-q", "-b", "main")
    check = _check(tmp_path, "test-suites", code=0)
    assert check["status"] == "warn"
    assert [i["file"] for i in check["items"]] == ["tools/lint/go.mod"]


# --- Rust: features make test enables, a failing build script, a test returning Err, should_panic's expectation --

RUST_LEDGER = """\
pub fn withdraw(balance: i64, amount: i64) -> i64 {
    if amount > balance {
        panic!("insufficient funds: {} < {}", balance, amount);
    }
    balance - amount
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[should_panic(expected = "overdrawn")]
    fn withdraw_too_much() {
        withdraw(1, 5);
    }

    #[test]
    fn parse_amount() -> Result<(), String> {
        let n: i64 = "12x".parse().map_err(|e| format!("bad amount: {e}"))?;
        assert_eq!(n, 12);
        Ok(())
    }

    #[cfg(feature = "audit")]
    #[test]
    fn audit_lines() {
        assert_eq!(withdraw(5, 1), 3);
    }
}
"""


def _cargo_test(root: Path) -> dict[str, Any]:
    import pwd

    if shutil.which("cargo") is None:
        pytest.skip("cargo is not installed: the Rust fixture crates cannot build")
    git(root, "init", "-q", "-b", "main")
    account = Path(pwd.getpwuid(os.getuid()).pw_dir)  # the suite's HOME is not the one holding the toolchain
    env = {**os.environ, "CARGO_TARGET_DIR": str(root / "target"), "CARGO_NET_OFFLINE": "true",
           **{name: os.environ.get(name) or str(account / default)
              for name, default in (("RUSTUP_HOME", ".rustup"), ("CARGO_HOME", ".cargo"))}}
    proc = subprocess.run([DUN, "check", "--format", "json", "--only", "cargo-test"], cwd=root, capture_output=True,
                          text=True, env=env, timeout=600)
    [check] = [c for c in json.loads(proc.stdout)["checks"] if c["id"] == "cargo-test"]
    return check


@pytest.fixture(scope="module")
def rust_ledger(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("rust-ledger")
    write(root, "Cargo.toml", '[package]\nname = "ledger"\nversion = "0.1.0"\nedition = "2021"\n\n'
                              '[features]\ndefault = []\naudit = []\n')
    write(root, "Makefile", "test:\n\tcargo test --all-features\n")
    write(root, "src/lib.rs", RUST_LEDGER)
    write(root, ".gitignore", "target\nCargo.lock\n")
    return _cargo_test(root)


def test_rust_tests_behind_a_feature_make_test_enables_run(rust_ledger: dict[str, Any]) -> None:
    # without --all-features the failing `audit_lines` was never compiled: 2 failed, not 3
    assert rust_ledger["signal"].startswith("exit 101: 3 failed"), rust_ledger
    assert ("src/lib.rs", 28, "tests::audit_lines") in _where(rust_ledger)


def test_rust_test_returning_err_is_at_its_function(rust_ledger: dict[str, Any]) -> None:
    # was an item with no file and no line
    assert ("src/lib.rs", 19, "tests::parse_amount") in _where(rust_ledger)


def test_rust_should_panic_names_the_expected_and_the_actual_panic(rust_ledger: dict[str, Any]) -> None:
    [item] = [i for i in rust_ledger["items"] if i["text"].startswith("tests::withdraw_too_much")]
    assert 'expected substring: "overdrawn"' in item["text"] and "insufficient funds: 1 < 5" in item["text"]


def test_rust_failing_build_script_is_an_item_and_hides_no_other_crates_tests(
        tmp_path_factory: pytest.TempPathFactory) -> None:
    root = tmp_path_factory.mktemp("rust-build-script")
    write(root, "Cargo.toml", '[workspace]\nmembers = ["core", "gen"]\nresolver = "2"\n')
    write(root, "core/Cargo.toml", '[package]\nname = "core-lib"\nversion = "0.1.0"\nedition = "2021"\n')
    write(root, "core/src/lib.rs", "#[cfg(test)]\nmod tests {\n    #[test]\n    fn doubles() {\n"
                                   "        assert_eq!(2 * 2, 5);\n    }\n}\n")
    write(root, "gen/Cargo.toml", '[package]\nname = "gen"\nversion = "0.1.0"\nedition = "2021"\n')
    write(root, "gen/build.rs", 'fn main() {\n    std::fs::read_to_string("schema.txt").expect("schema.txt is '
                                'missing");\n}\n')
    write(root, "gen/src/lib.rs", "")
    write(root, ".gitignore", "target\nCargo.lock\n")
    check = _cargo_test(root)
    # was: "no tests ran", no item: cargo stopped at the build script, and the re-run left only compile errors out
    assert _where(check) == [("gen/build.rs", 2, "the build script of gen failed"),
                             ("core/src/lib.rs", 5, "tests::doubles")]
    assert "schema.txt is missing" in check["items"][0]["text"]


# --- JavaScript: the build a test script runs before its runner, the linter it chains -------------------------

TS_UNITS = """\
// @ts-nocheck: the pinned runners hold no @types/node
import { test } from "node:test";
import assert from "node:assert/strict";
import { area } from "../src/units";

type Size = { w: number; h: number };
const square: Size = { w: 2, h: 3 };

test("area", () => {
  assert.equal(area(square), 6);
});
"""


@pytest.fixture(scope="module")
def ts_build_first(tmp_path_factory: pytest.TempPathFactory) -> Path:
    _runners()
    root = _project(tmp_path_factory.mktemp("ts-build-first"),
                    {"scripts": {"build": "tsc -p tsconfig.json", "pretest": "npm run build",
                                 "test": "node --enable-source-maps --test dist/test/"},
                     "devDependencies": {"typescript": "*"}},
                    {"tsconfig.json": json.dumps({"compilerOptions": {
                        "target": "ES2022", "module": "commonjs", "strict": True, "outDir": "dist", "rootDir": ".",
                        "sourceMap": True, "esModuleInterop": True, "types": []}, "include": ["src", "test"]}),
                     "src/units.ts": "export function area(s: { w: number; h: number }): number {\n"
                                     "  return s.w * s.h;\n}\n",
                     "test/units.test.ts": TS_UNITS, "package-lock.json": "{}"}, runners=True)
    (root / ".gitignore").write_text("node_modules\n.dun/\ndist/\n")
    return root


def test_compiled_tests_are_built_first_and_clean_on_day_one(ts_build_first: Path) -> None:
    # node --test dist/test/ on a fresh clone: "Could not find dist/test", a clean project failing on day one
    check = _check(ts_build_first, "node-test", code=0)
    assert check["status"] == "pass", check


def test_compiled_tests_run_the_sources_of_now_at_their_ts_line(ts_build_first: Path) -> None:
    # a dist/ built before the edit was tested again: a stale pass
    write(ts_build_first, "src/units.ts", "export function area(s: { w: number; h: number }): number {\n"
                                          "  return s.w + s.h;\n}\n")
    check = _check(ts_build_first, "node-test")
    assert _where(check) == [("test/units.test.ts", 10, "area")]


def test_a_linter_the_test_script_chains_is_run_by_js_lint(tmp_path: Path) -> None:
    # `"test": "node --test && eslint ."` with no `lint` script: npm test failed on the lint error, dun was clean
    _node()
    linter = "#!/bin/sh\necho \"src/a.js: 'unused' is assigned a value but never used\"\nexit 1\n"
    root = _project(tmp_path, {"scripts": {"test": "node --test && eslint ."}}, {"src/a.js": "const unused = 1;\n"})
    write(root, "node_modules/.bin/eslint", linter)
    (root / "node_modules/.bin/eslint").chmod(0o755)
    check = _check(root, "js-lint")
    assert check["status"] == "fail" and "'unused' is assigned a value" in json.dumps(check), check


def test_packages_a_test_script_tests_by_directory_run_in_theirs(tmp_path: Path) -> None:
    # no workspaces: `npm --prefix api test && cd web && npm test` was only a test-suites warning, exit 0
    _node()
    failing = "const test = require('node:test');\nconst assert = require('node:assert');\n\n" \
              "test('{name}', () => {{\n  assert.strictEqual(1 + 1, 3);\n}});\n"
    root = _project(tmp_path, {"scripts": {"test": "npm --prefix api test && cd web && npm test"}}, {
        "api/package.json": json.dumps({"name": "api", "scripts": {"test": "node --test"}}),
        "api/test/a.test.js": failing.format(name="adds in api"),
        "web/package.json": json.dumps({"name": "web", "scripts": {"test": "node --test"}}),
        "web/test/b.test.js": failing.format(name="adds in web")})
    check = _check(root, "node-test")
    assert _where(check) == [("api/test/a.test.js", 5, "adds in api"), ("web/test/b.test.js", 5, "adds in web")]
    suites = _check(root, "test-suites", code=0)
    assert suites["status"] == "pass", suites


def test_pytest_run_inside_its_tests_directory_takes_the_ini_there(tmp_path: Path) -> None:
    # `cd tests && python -m pytest` with tests/pytest.ini (python_files = check_*.py): from the root, exit 5, a pass
    from dun.checks.pyrunner import pytest_args

    write(tmp_path, "Makefile", "test:\n\tcd tests && python -m pytest -q\n")
    write(tmp_path, "tests/pytest.ini", "[pytest]\npython_files = check_*.py\n")
    assert pytest_args(tmp_path) == "-c tests/pytest.ini"
    (tmp_path / "tests/pytest.ini").unlink()  # no config there: nothing to add
    assert pytest_args(tmp_path) == ""


def test_build_steps_leave_out_checks_run_by_name(tmp_path: Path) -> None:
    # a `pretest` that lints first: a lint failure must not stop the tests (js-lint reports it)
    from dun.checks.jsbuild import build_steps

    write(tmp_path, "package-lock.json", "{}")
    write(tmp_path, "package.json", json.dumps({"scripts": {
        "lint": "next lint", "typecheck": "tsc --noEmit", "build": "tsc -p tsconfig.build.json",
        "pretest": "npm run lint && npm run build", "test": "npm run typecheck && npm run test:unit",
        "test:unit": "rimraf .tmp && mocha dist/test"}}))
    assert build_steps(tmp_path, "mocha") == \
        'PATH="$PWD/node_modules/.bin:$PATH" && tsc -p tsconfig.build.json && rimraf .tmp'
    assert build_steps(tmp_path, "vitest") == 'PATH="$PWD/node_modules/.bin:$PATH" && tsc -p tsconfig.build.json'


def test_vitest_unhandled_error_in_a_workspace_is_one_item(tmp_path: Path) -> None:
    # each package's report was read with the whole output: the error was an item once per package
    _runners()
    package = json.dumps({"name": "p", "type": "module", "scripts": {"test": "vitest run"},
                          "devDependencies": {"vitest": "*"}})
    root = _project(tmp_path, {"workspaces": ["packages/*"], "scripts": {"test": "npm test --workspaces"}},
                    {"packages/a/package.json": package, "packages/a/test/jobs.test.js": VITEST_JOBS,
                     "packages/b/package.json": package,
                     "packages/b/test/ok.test.js": 'import { expect, it } from "vitest";\n\n'
                                                   'it("adds", () => {\n  expect(1 + 1).toBe(2);\n});\n'},
                    runners=True)
    check = _check(root, "vitest")
    assert [i["text"].rsplit(": ", 1)[-1] for i in check["items"]] == ["job queue closed"]


SHOULD_PANIC_FIRST = """\
     Running unittests src/lib.rs (target/debug/deps/ledger-1a2b3c4d5e6f7a8b)

running 1 test
test tests::withdraw_too_much - should panic ... FAILED

failures:

---- tests::withdraw_too_much stdout ----

thread 'tests::withdraw_too_much' (16352) panicked at src/lib.rs:3:9:
insufficient funds: 1 < 5
note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace
note: panic did not contain expected string
      panic message: "insufficient funds: 1 < 5"
 expected substring: "overdrawn"

failures:
    tests::withdraw_too_much

test result: FAILED. 0 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s
"""


def test_rust_should_panic_expectation_after_the_backtrace_note_is_kept(tmp_path: Path) -> None:
    # libtest prints the backtrace note after the run's first panic only: when that was this test's, the expected
    # substring was cut off with it (which test panics first depends on the threads)
    from dun.checks.parsers.base import ParseContext
    from dun.checks.parsers.run import ParserRun

    write(tmp_path, "src/lib.rs", RUST_LEDGER)
    options = {"type": "cargo-test", "pattern": None, "file": None, "issue_path": "", "issue_fields": None,
               "fail_on_items": False, "max_items": 50}
    run = ParserRun(options, ParseContext(tmp_path, tmp_path))
    for line in SHOULD_PANIC_FIRST.split("\n"):
        run.feed(line)
    [item] = run.finish().items
    assert 'expected substring: "overdrawn"' in item.text and (item.file, item.line) == ("src/lib.rs", 3)
