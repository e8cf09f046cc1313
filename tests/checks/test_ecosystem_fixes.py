"""Fixes to what the third independent ecosystem pass found last: each test runs the real tool through `dun check`
on a small project (skipped with a message when the toolchain is missing) and failed before its fix."""

from __future__ import annotations

import json
from pathlib import Path

from test_ecosystem_pass3 import _check, _node, _project, _runners, _where

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

