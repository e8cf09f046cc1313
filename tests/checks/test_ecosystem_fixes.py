"""Fixes to what the third independent ecosystem pass found last: each test runs the real tool through `dun check`
on a small project (skipped with a message when the toolchain is missing) and failed before its fix."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
from checks_support import git, write
from test_ecosystem_pass3 import _check, _node, _project, _runners, _where
from test_real_projects import make_venv

NODE_FAILING = "const test = require('node:test');\nconst assert = require('node:assert');\n\n" \
               "test('{name}', () => {{\n  assert.strictEqual(1 + 1, 3);\n}});\n"
JEST_FAILING = "test('{name}', () => {{\n  expect(1 + 1).toBe(3);\n}});\n"


# --- a root test script that runs its own tests and a subfolder's: both run -----------------------------------------

def test_a_root_runner_beside_a_subfolder_package_runs_in_the_root(tmp_path: Path) -> None:
    # `jest && npm --prefix docs test` ran only docs' node --test: the root's jest tests never ran (a false all-clear)
    _runners()
    root = _project(tmp_path, {"scripts": {"test": "jest && npm --prefix docs test"},
                               "jest": {"roots": ["<rootDir>/test"]}}, {
        "test/a.test.js": JEST_FAILING.format(name="adds at the root"),
        "docs/package.json": json.dumps({"name": "docs", "scripts": {"test": "node --test"}}),
        "docs/test/b.test.js": NODE_FAILING.format(name="adds in docs")}, runners=True)
    assert _where(_check(root, "jest")) == [("test/a.test.js", 2, "adds at the root")]
    assert _where(_check(root, "node-test")) == [("docs/test/b.test.js", 5, "adds in docs")]


def test_the_same_runner_at_the_root_and_in_a_cd_package_runs_in_both(tmp_path: Path) -> None:
    # `node --test test/a.test.js && cd web && npm test`: the root's own node tests were dropped
    _node()
    root = _project(tmp_path, {"scripts": {"test": "node --test test/a.test.js && cd web && npm test"}}, {
        "test/a.test.js": NODE_FAILING.format(name="adds at the root"),
        "web/package.json": json.dumps({"name": "web", "scripts": {"test": "node --test"}}),
        "web/test/b.test.js": NODE_FAILING.format(name="adds in web")})
    assert _where(_check(root, "node-test")) == [("test/a.test.js", 5, "adds at the root"),
                                                 ("web/test/b.test.js", 5, "adds in web")]


# --- separate projects in subfolders: the warning names only those no check of the user's runs in -----------------

PART = """\
  - id: {name}-node-test
    type: command
    cwd: {name}
    command: node --test --test-reporter=junit --test-reporter-destination=.dun/cache/node.xml
    parser: {{type: junit-xml, file: .dun/cache/node.xml}}
"""


def test_a_subfolder_project_with_a_check_of_its_own_is_not_warned_about(tmp_path: Path) -> None:
    # the warning stayed after the user followed docs/plugins.md and added a check with `cwd:` for each folder
    files = {f"{name}/package.json": json.dumps({"name": name, "scripts": {"test": "node --test"}})
             for name in ("api", "web")}
    root = _project(tmp_path / "repo", {}, {**files, "api/test/a.test.js": "", "web/test/b.test.js": ""})
    (root / "package.json").unlink()  # nothing at the root: two projects side by side
    warned = _check(root, "test-suites", code=0)
    assert warned["status"] == "warn" and [i["file"] for i in warned["items"]] == ["api/package.json",
                                                                                   "web/package.json"], warned
    (root / ".dun/plugins").mkdir(parents=True)
    (root / ".dun/plugins/parts.yaml").write_text("id: parts\nchecks:\n" + PART.format(name="api"))
    one = _check(root, "test-suites", code=0)
    assert one["status"] == "warn" and [i["file"] for i in one["items"]] == ["web/package.json"], one
    assert "web" in one["signal"] and "api" not in one["signal"], one
    (root / ".dun/plugins/parts.yaml").write_text("id: parts\nchecks:\n" + PART.format(name="api") +
                                                  PART.format(name="web"))
    both = _check(root, "test-suites", code=0)
    assert both["status"] == "pass" and not both["items"], both


# --- node --test: cancelled tests are said apart from failed ones, as node says them --------------------------------

NODE_CANCELLED = """\
const { describe, it, before, test } = require("node:test");
const assert = require("node:assert");

test("adds", () => {
  assert.strictEqual(1 + 1, 3);
});
test("subtracts", () => {
  assert.strictEqual(1 - 1, 3);
});
test("waits", { timeout: 50 }, async () => {
  await new Promise((resolve) => setTimeout(resolve, 1000));
});
describe("cache", () => {
  before(() => {
    throw new Error("cache warmup failed");
  });
  it("hits", () => {});
  it("misses", () => {});
});
"""


def test_node_cancelled_tests_are_not_counted_as_failed(tmp_path: Path) -> None:
    # node says `fail 2`, `cancelled 3` (a timeout, two tests a failed hook did not run): dun said "5 failed"
    _node()
    root = _project(tmp_path, {"scripts": {"test": "node --test"}}, {"test/a.test.js": NODE_CANCELLED})
    check = _check(root, "node-test")
    assert "2 failed, 3 cancelled" in check["signal"] and "5 failed" not in check["signal"], check
    assert [name for _, _, name in _where(check)] == ["adds", "subtracts", "waits", "cache"], check


# --- pytest-cov under its --cov-fail-under: an item with the threshold and the total ------------------------------

def test_coverage_under_pytest_covs_threshold_is_an_item(tmp_path: Path) -> None:
    # the tests pass, pytest exits 1 for the coverage: the check failed with the reason only in its output, no item
    if importlib.util.find_spec("pytest_cov") is None:
        pytest.skip("pytest-cov is not installed (the `test` extra installs it)")
    root = tmp_path / "proj"
    write(root, "pyproject.toml", "[project]\nname = 'calc'\nversion = '0'\n\n[tool.pytest.ini_options]\n"
                                  "addopts = '--cov=calc --cov-report=term --cov-fail-under=90'\n")
    write(root, "calc.py", "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    if a < b:\n"
                           "        return 0\n    return a - b\n")
    write(root, "tests/test_calc.py", "from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n")
    write(root, ".gitignore", ".venv/\n.dun/\n.coverage\n")
    make_venv(root, with_test_tools=True)
    git(root, "init", "-q", "-b", "main")
    check = _check(root, "pytest")
    assert [(i["file"], i["line"]) for i in check["items"]] == [("pyproject.toml", 6)], check
    [item] = check["items"]
    assert "total coverage 50% is under the required 90%" in item["text"], item
    assert "coverage 50% < 90%" in check["signal"], check


TIMES_OUT = "const test = require('node:test');\n\n" \
            "test('{name}', {{ timeout: 50 }}, async () => {{\n  await new Promise((r) => setTimeout(r, 1000));\n}});\n"


def test_tallies_of_several_packages_add_up_in_the_runners_words(tmp_path: Path) -> None:
    # the reports of the root and a package as one: "2 cancelleds" (and "2 unhandleds errors") before
    _node()
    script = "node --test test/a.test.js test/b.test.js && cd web && npm test"
    root = _project(tmp_path, {"scripts": {"test": script}}, {
        "test/a.test.js": NODE_FAILING.format(name="adds at the root"),
        "test/b.test.js": TIMES_OUT.format(name="waits at the root"),
        "web/package.json": json.dumps({"name": "web", "scripts": {"test": "node --test"}}),
        "web/test/c.test.js": TIMES_OUT.format(name="waits in web")})
    check = _check(root, "node-test")
    assert "1 failed, 2 cancelled" in check["signal"] and "cancelleds" not in check["signal"], check


def test_a_runner_no_check_reads_at_the_root_beside_a_subfolder_package_is_warned_about(tmp_path: Path) -> None:
    # `karma start && npm --prefix web test`: web's tests ran and test-suites passed; the root's karma never ran
    _node()
    root = _project(tmp_path, {"scripts": {"test": "karma start && npm --prefix web test"}}, {
        "web/package.json": json.dumps({"name": "web", "scripts": {"test": "node --test"}}),
        "web/test/b.test.js": NODE_FAILING.format(name="adds in web")})
    suites = _check(root, "test-suites", code=0)
    assert suites["status"] == "warn" and [i["file"] for i in suites["items"]] == ["package.json"], suites
    assert "`karma` at the root" in suites["items"][0]["text"], suites
