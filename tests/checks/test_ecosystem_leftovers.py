"""Leftovers of issue 25, each run for real on a project a user could have (skipped with a message where the
toolchain is missing): the same jest or vitest test failing in two `projects`; a crate that does not compile under
cargo-nextest; doctests at the line rustc names; bun's own runner on a real bun project and its clean twin."""

from __future__ import annotations

import json
import os
import pwd
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from checks_support import git, write
from test_js_projects import CACHE, DUN, RUNNERS, run_check
from test_js_projects import _missing as js_missing

# --- jest: the same test failing in two `projects` is two items, each naming its project --------------------------

JEST_CONFIG = """\
module.exports = {
  projects: [
    { displayName: 'server', testEnvironment: 'node', testMatch: ['<rootDir>/test/**/*.test.js'] },
    { displayName: 'client', testEnvironment: 'node', testMatch: ['<rootDir>/test/**/*.test.js'] },
  ],
};
"""

JEST_TEST = """\
describe('math', () => {
  it('adds', () => {
    expect(1 + 1).toBe(3);
  });
  it('passes', () => { expect(1).toBe(1); });
});
"""


@pytest.mark.skipif(js_missing() is not None, reason=str(js_missing()))
def test_jest_test_failing_in_two_projects_is_two_items_naming_each(tmp_path: Path) -> None:
    root = tmp_path / "p"
    write(root, "package.json", json.dumps({"name": "two-projects", "private": True, "scripts": {"test": "jest"},
                                            "devDependencies": {"jest": "*"}}))
    write(root, "jest.config.js", JEST_CONFIG)
    write(root, "test/math.test.js", JEST_TEST)
    write(root, ".gitignore", "node_modules\n")
    (root / "node_modules").symlink_to(RUNNERS / "node_modules")
    git(root, "init", "-q", "-b", "main")
    check = run_check(root, "jest")
    assert check["status"] == "fail", check
    items = check["items"]
    assert sorted(i["text"].split(":")[0] for i in items) == ["[client] math > adds", "[server] math > adds"], items
    assert all((i["file"], i["line"]) == ("test/math.test.js", 3) for i in items), items
    assert all("Expected: 3" in i["text"] and "Received: 2" in i["text"] for i in items), items
    write(root, "test/math.test.js", JEST_TEST.replace("toBe(3)", "toBe(2)"))
    assert run_check(root, "jest")["status"] == "pass"


VITEST_CONFIG = """\
import { defineConfig } from 'vitest/config';
export default defineConfig({ test: { projects: [
  { test: { name: 'server', include: ['test/**/*.test.js'] } },
  { test: { name: 'client', include: ['test/**/*.test.js'] } },
] } });
"""


@pytest.mark.skipif(js_missing() is not None, reason=str(js_missing()))
def test_vitest_test_failing_in_two_projects_is_two_items_naming_each(tmp_path: Path) -> None:
    root = tmp_path / "p"
    write(root, "package.json", json.dumps({"name": "two-projects", "private": True, "type": "module",
                                            "scripts": {"test": "vitest run"}, "devDependencies": {"vitest": "*"}}))
    write(root, "vitest.config.js", VITEST_CONFIG)
    write(root, "test/math.test.js", "import { describe, it, expect } from 'vitest';\n" + JEST_TEST)
    write(root, ".gitignore", "node_modules\n")
    (root / "node_modules").symlink_to(RUNNERS / "node_modules")
    git(root, "init", "-q", "-b", "main")
    check = run_check(root, "vitest")
    assert check["status"] == "fail", check
    items = check["items"]
    assert sorted(i["text"].split(":")[0] for i in items) == ["[client] math > adds", "[server] math > adds"], items
    assert all((i["file"], i["line"]) == ("test/math.test.js", 4) for i in items), items
    write(root, "test/math.test.js", "import { describe, it, expect } from 'vitest';\n" +
          JEST_TEST.replace("toBe(3)", "toBe(2)"))
    assert run_check(root, "vitest")["status"] == "pass"


# --- Rust: a crate that does not compile hides no other crate's tests under cargo-nextest; doctests' lines --------

NEXTEST_BIN = CACHE / "nextest-0.9.148" / "bin"  # tests/e2e/install_nextest.sh
GOOD = """\
pub fn double(x: i32) -> i32 {
    x * 2
}

#[cfg(test)]
mod tests {
    #[test]
    fn doubles() {
        assert_eq!(super::double(2), 5);
    }

    #[test]
    fn passes() {
        assert_eq!(super::double(1), 2);
    }
}
"""
BAD = "pub fn broken() -> i32 {\n    let x: i32 = \"no\";\n    x\n}\n"


def cargo_env(root: Path, *path: Path) -> dict[str, str]:
    account = Path(pwd.getpwuid(os.getuid()).pw_dir)  # the suite's HOME is a test's own; rustup's is the account's
    return {**os.environ, "CARGO_TARGET_DIR": str(root / "target"), "CARGO_NET_OFFLINE": "true",
            "PATH": os.pathsep.join([*map(str, path), os.environ["PATH"]]),
            **{name: os.environ.get(name) or str(account / default)
               for name, default in (("RUSTUP_HOME", ".rustup"), ("CARGO_HOME", ".cargo"))}}


def dun_check(root: Path, only: str, env: dict[str, str]) -> dict[str, Any]:
    proc = subprocess.run([DUN, "check", "--format", "json", "--only", only], cwd=root, capture_output=True,
                          text=True, env=env, timeout=600)
    assert proc.returncode in (0, 1), proc.stderr
    found: dict[str, Any] = next(c for c in json.loads(proc.stdout)["checks"] if c["id"] == only)
    return found


def test_a_crate_that_does_not_compile_hides_no_other_crates_failing_test_under_nextest(tmp_path: Path) -> None:
    if shutil.which("cargo") is None or not (NEXTEST_BIN / "cargo-nextest").is_file():
        pytest.skip(f"cargo or cargo-nextest is missing ({NEXTEST_BIN}): run tests/e2e/install_nextest.sh "
                    "(make test does)")
    root = tmp_path / "ws"
    write(root, "Cargo.toml", '[workspace]\nmembers = ["good", "bad"]\nresolver = "2"\n')
    for name, lib in (("good", GOOD), ("bad", BAD)):
        write(root, f"{name}/Cargo.toml", f'[package]\nname = "{name}"\nversion = "0.1.0"\nedition = "2021"\n')
        write(root, f"{name}/src/lib.rs", lib)
    write(root, ".config/nextest.toml", '[profile.default]\nslow-timeout = "60s"\n')
    write(root, ".gitignore", "target\n")
    git(root, "init", "-q", "-b", "main")
    check = dun_check(root, "cargo-nextest", cargo_env(root, NEXTEST_BIN))
    assert check["status"] == "fail", check
    assert [(i["file"], i["line"], i["text"].split(": ")[0]) for i in check["items"]] == [
        ("bad/src/lib.rs", 2, "E0308"), ("good/src/lib.rs", 9, "tests::doubles")], check["items"]
    assert "left: 4" in check["items"][1]["text"], check["items"][1]
    assert check["signal"].startswith("exit 101: 1 failed, 1 passed"), check["signal"]


# doctest shapes rustc reports differently: a panic, compile errors under the fence, a compile_fail that compiles, a
# should_panic that does not panic
DOCTESTS = """\
//! Crate docs.
//!
//! ```
//! assert_eq!(docs::double(2), 5);
//! ```

/// A doctest that does not compile: rustc's error names its line, under the fence.
///
/// ```
/// let x = docs::double(2);
/// let y: i32 = "no";
/// ```
pub fn double(x: i32) -> i32 {
    x * 2
}

/// Hidden lines first, then the error further down.
///
/// ```
/// # fn helper() -> i32 { 3 }
///
/// fn user() {
///     undefined_fn(helper());
/// }
/// ```
pub fn hidden() {}

/// Marked compile_fail, but compiles.
///
/// ```compile_fail
/// let y: i32 = 1;
/// ```
pub fn compiles() {}

/// Marked should_panic, but does not.
///
/// ```should_panic
/// let y = 1;
/// ```
pub fn calm() {}

/**
 * In a block comment, naming the crate on the broken line.
 *
 * ```
 * let z: u8 = docs::double(1);
 * ```
 */
pub fn block() {}

/**
 * ```should_panic
 * let q = 1;
 * ```
 */
pub fn calm_block() {}
"""


def test_doctest_items_are_at_the_line_rustc_names(tmp_path: Path) -> None:
    if shutil.which("cargo") is None:
        pytest.skip("cargo is not installed: the Rust fixture project cannot run")
    root = tmp_path / "docs"
    write(root, "Cargo.toml", '[package]\nname = "docs"\nversion = "0.1.0"\nedition = "2021"\n')
    write(root, "src/lib.rs", DOCTESTS)
    write(root, ".gitignore", "target\n")
    git(root, "init", "-q", "-b", "main")
    check = dun_check(root, "cargo-test", cargo_env(root))
    assert check["status"] == "fail", check
    items = {i["text"].split(": ", 1)[0]: (i["file"], i["line"]) for i in check["items"]}
    assert items == {
        "src/lib.rs - (line 3)": ("src/lib.rs", 3),  # a panic: rustc's line is of the program rustdoc wraps it in
        "src/lib.rs - double (line 9)": ("src/lib.rs", 11),  # the error's line, not the fence's
        "src/lib.rs - hidden (line 19)": ("src/lib.rs", 23),
        "src/lib.rs - compiles (line 30)": ("src/lib.rs", 30),  # no error: the fence that says compile_fail
        "src/lib.rs - calm (line 37)": ("src/lib.rs", 37),
        # rustdoc names a block comment's doctest by the line above its fence: the item is at the fence
        "src/lib.rs - block (line 44)": ("src/lib.rs", 46),
        "src/lib.rs - calm_block (line 51)": ("src/lib.rs", 52),
    }, check["items"]
    texts = {i["text"].split(": ", 1)[0]: i["text"] for i in check["items"]}
    assert "E0308" in texts["src/lib.rs - double (line 9)"]
    assert "E0425" in texts["src/lib.rs - hidden (line 19)"]


# --- bun's own runner on a real bun project (bun installed from the npm registry by tests/e2e/install_bun.sh) -------

BUN_BIN = CACHE / "bun-1.4.5" / "node_modules" / ".bin"
BUN_HELPER = """\
import { expect } from "bun:test";
export function checkTotal(total: number) {
  expect(total).toBe(10); // FAIL: helper
}
"""
BUN_TEST = """\
import { describe, it, expect, test } from "bun:test";
import { checkTotal } from "./helper";

describe("math", () => {
  describe("sums", () => {
    it("adds", () => {
      expect(1 + 1).toBe(3); // FAIL: adds
    });
  });
  it("passes", () => { expect(1).toBe(1); });
});

test("deep equal objects", () => {
  expect({ a: 1, b: [1, 2] }).toEqual({ a: 1, b: [1, 3] }); // FAIL: deep
});

test("total in a helper", () => {
  checkTotal(7); // FAIL: call
});

test("throws", () => {
  throw new Error("boom"); // FAIL: throws
});
"""


def bun_project(root: Path, clean: bool) -> Path:
    write(root, "package.json", json.dumps({"name": "bun-fixture", "private": True, "scripts": {"test": "bun test"}}))
    for rel, text in (("test/helper.ts", BUN_HELPER), ("test/math.test.ts", BUN_TEST)):
        if clean:  # the clean twin: the failing assertions taken out
            text = "".join(line for line in text.splitlines(keepends=True) if "// FAIL:" not in line)
        write(root, rel, text)
    git(root, "init", "-q", "-b", "main")
    return root


@pytest.mark.skipif(not (BUN_BIN / "bun").exists(), reason=f"bun is not installed in {BUN_BIN}: run "
                    "tests/e2e/install_bun.sh (make test does)")
def test_bun_test_on_a_real_bun_project_every_failing_test_is_an_item_and_its_clean_twin_is_clean(
        tmp_path: Path) -> None:
    env = {**os.environ, "PATH": f"{BUN_BIN}{os.pathsep}{os.environ['PATH']}"}
    root = bun_project(tmp_path / "failing", clean=False)
    check = dun_check(root, "bun-test", env)
    assert check["status"] == "fail", check
    assert check["signal"].startswith("exit 1: 4 failed, 1 passed"), check["signal"]
    items = {i["text"].split(": ", 1)[0]: i for i in check["items"]}
    assert {name: (i["file"], i["line"]) for name, i in items.items()} == {
        "math > sums > adds": ("test/math.test.ts", 7),
        "deep equal objects": ("test/math.test.ts", 14),
        "total in a helper": ("test/helper.ts", 3),
        "throws": ("test/math.test.ts", 22)}, check["items"]
    assert "Expected: 3\nReceived: 2" in items["math > sums > adds"]["text"]
    assert "-     3,\n+     2," in items["deep equal objects"]["text"]
    assert "at test/math.test.ts:18" in items["total in a helper"]["text"]
    assert "boom" in items["throws"]["text"]
    twin = dun_check(bun_project(tmp_path / "clean", clean=True), "bun-test", env)
    assert (twin["status"], twin["items"]) == ("pass", []), twin


def junit_items(root: Path, projects: object) -> list[str]:
    from dun.checks.parsers.base import ParseContext
    from dun.checks.parsers.run import ParserRun

    case = ('<testcase classname="test/a.test.js" name="math &gt; adds"><failure message="no">AssertionError: no'
            '</failure></testcase>')
    suite = f'<testsuite name="test/a.test.js">{case}</testsuite>'
    write(root, ".dun/cache/vitest.xml", f'<testsuites name="vitest tests">{suite}{suite}</testsuites>')
    write(root, ".dun/cache/vitest.xml.projects.json", json.dumps(projects))
    options = {"type": "junit-xml", "pattern": None, "file": ".dun/cache/vitest.xml", "issue_path": "",
               "issue_fields": None, "fail_on_items": False, "max_items": 50}
    return [i.text.split(" ")[0] for i in ParserRun(options, ParseContext(root, root)).finish().items]


def test_vitest_projects_are_named_only_from_a_list_of_this_report(tmp_path: Path) -> None:
    named = [{"project": "server", "file": "test/a.test.js"}, {"project": "client", "file": "test/a.test.js"}]
    assert junit_items(tmp_path, named) == ["[server]", "[client]"]
    # a list of another run (other files, another count) or of another shape names nothing
    other = [{"project": "server", "file": "test/b.test.js"}, {"project": "client", "file": "test/a.test.js"}]
    for stale in (other, named[:1], {"server": 1}, [["server"], ["client"]]):
        assert not any(word.startswith("[") for word in junit_items(tmp_path, stale)), stale
