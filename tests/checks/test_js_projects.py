"""`dun check` on JavaScript projects, one per test runner (node --test, vitest, jest, mocha, ava, tape), with the
runners installed from the registry at pinned versions (tests/e2e/install_js_runners.sh, run by `make test`).

Each project has several failing tests; every one must be an item with its full name, the file and line of the
failing assertion (a `// FAIL:` comment marks it in the sources below) and the message with expected and actual.
The same project with its failing tests removed is clean."""

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


def _missing() -> str | None:
    if shutil.which("node") is None:
        return "node is not installed: the JavaScript fixture projects cannot run"
    if not (RUNNERS / ".complete").is_file():
        return f"the pinned JavaScript runners are not installed in {RUNNERS}: run tests/e2e/install_js_runners.sh " \
               "(make test does)"
    return None


pytestmark = pytest.mark.skipif(_missing() is not None, reason=str(_missing()))

HELPER = """\
const assert = require('node:assert');
exports.checkTotal = (total) => {
  assert.strictEqual(total, 10, `total should be 10 but was ${total}`); // FAIL: helper
};
"""

# runner -> (package.json scripts.test, {file: source}); the source's `// FAIL: key` comments mark expected lines
PROJECTS: dict[str, tuple[str, dict[str, str]]] = {
    "node-test": ("node --test test/", {"test/math.test.js": """\
const test = require('node:test');
const assert = require('node:assert');
const { checkTotal } = require('./helper.js');

test('math', async (t) => {
  await t.test('adds', () => {
    assert.strictEqual(1 + 1, 3); // FAIL: adds
  });
  await t.test('passes', () => {
    assert.ok(true);
  });
});

test('deep equal objects', () => {
  assert.deepStrictEqual({ a: 1, b: [1, 2] }, { a: 1, b: [1, 3] }); // FAIL: deep
});

test('total in a helper', () => {
  checkTotal(7);
});

test('throws', () => {
  throw new Error('boom'); // FAIL: throws
});
""", "test/helper.js": HELPER}),
    "vitest": ("vitest run", {"test/math.test.js": """\
import { describe, it, expect } from 'vitest';
import { checkTotal } from './helper.js';

describe('math', () => {
  it('adds', () => {
    expect(1 + 1).toBe(3); // FAIL: adds
  });
  it('passes', () => { expect(1).toBe(1); });
});

it('deep equal objects', () => {
  expect({ a: 1, b: [1, 2] }).toEqual({ a: 1, b: [1, 3] }); // FAIL: deep
});

it('total in a helper', () => {
  checkTotal(7);
});

it('throws', () => {
  throw new Error('boom'); // FAIL: throws
});
""", "test/helper.js": HELPER}),
    "jest": ("jest", {"test/math.test.js": """\
const { checkTotal } = require('./helper.js');

describe('math', () => {
  it('adds', () => {
    expect(1 + 1).toBe(3); // FAIL: adds
  });
  it('passes', () => { expect(1).toBe(1); });
});

it('deep equal objects', () => {
  expect({ a: 1, b: [1, 2] }).toEqual({ a: 1, b: [1, 3] }); // FAIL: deep
});

it('total in a helper', () => {
  checkTotal(7);
});

it('throws', () => {
  throw new Error('boom'); // FAIL: throws
});
""", "test/helper.js": HELPER}),
    "mocha": ("mocha test/", {"test/math.test.js": """\
const assert = require('node:assert');
const { checkTotal } = require('./helper.js');

describe('math', () => {
  it('adds', () => {
    assert.strictEqual(1 + 1, 3); // FAIL: adds
  });
  it('passes', () => { assert.ok(true); });
});

it('deep equal objects', () => {
  assert.deepStrictEqual({ a: 1, b: [1, 2] }, { a: 1, b: [1, 3] }); // FAIL: deep
});

it('total in a helper', () => {
  checkTotal(7);
});

it('throws', () => {
  throw new Error('boom'); // FAIL: throws
});
""", "test/helper.js": HELPER}),
    "ava": ("ava", {"test/math.js": """\
const test = require('ava');

test('adds', t => {
  t.is(1 + 1, 3); // FAIL: adds
});

test('passes', t => { t.pass(); });

test('deep equal objects', t => {
  t.deepEqual({ a: 1, b: [1, 2] }, { a: 1, b: [1, 3] }); // FAIL: deep
});

test('throws', t => {
  throw new Error('boom'); // FAIL: throws
});
"""}),
    "tape": ("tape test/*.js | tap-spec", {"test/math.js": """\
const test = require('tape');
const { checkTotal } = require('./helper.js');

test('math adds', t => {
  t.equal(1 + 1, 2, 'one plus one');
  t.equal(1 + 1, 3, 'sum is wrong'); // FAIL: adds
  t.end();
});

test('deep equal objects', t => {
  t.deepEqual({ a: 1, b: [1, 2] }, { a: 1, b: [1, 3] }); // FAIL: deep
  t.end();
});

test('total in a helper', t => {
  checkTotal(7);
  t.end();
});
""", "test/helper.js": HELPER}),
}

# runner -> {FAIL key: (the item's test name, text its message must hold)}
HELPER_FAILURE = ("total in a helper", "total should be 10 but was 7")
EXPECTED: dict[str, dict[str, tuple[str, str]]] = {
    "node-test": {"adds": ("math > adds", "2 !== 3"), "deep": ("deep equal objects", "+     2\n-     3"),
                  "helper": HELPER_FAILURE, "throws": ("throws", "boom")},
    "vitest": {"adds": ("math > adds", "expected 2 to be 3"),
               "deep": ("deep equal objects", "expected { a: 1, b: [ 1, 2 ] } to deeply equal { a: 1, b: [ 1, 3 ] }"),
               "helper": HELPER_FAILURE, "throws": ("throws", "boom")},
    "jest": {"adds": ("math > adds", "Expected: 3\nReceived: 2"), "deep": ("deep equal objects", "-     3,\n+     2,"),
             "helper": HELPER_FAILURE, "throws": ("throws", "boom")},
    "mocha": {"adds": ("math > adds", "2 !== 3"), "deep": ("deep equal objects", "+     2\n-     3"),
              "helper": HELPER_FAILURE, "throws": ("throws", "boom")},
    "ava": {"adds": ("adds", "- 2\n+ 3"), "deep": ("deep equal objects", "-     2,\n+     3,"),
            "throws": ("throws", "boom")},
    "tape": {"adds": ("math adds > sum is wrong", "expected: 3\nactual: 2"),
             "deep": ("deep equal objects > should be deeply equivalent", "{ a: 1, b: [ 1, 3 ] }"),
             "helper": ("total in a helper: stopped", "total should be 10 but was 7")},
}


def make_project(root: Path, runner: str, clean: bool = False) -> Path:
    script, files = PROJECTS[runner]
    deps = {} if runner == "node-test" else {runner: "*"}
    write(root, "package.json", json.dumps({"name": f"fixture-{runner}", "version": "1.0.0", "private": True,
                                            "scripts": {"test": script}, "devDependencies": deps}, indent=2))
    for rel, text in files.items():
        if clean:  # the same project with its failing assertions taken out (AVA wants one in every test)
            kept = "  t.pass();" if runner == "ava" else None
            text = "\n".join(kept if "FAIL:" in line or "checkTotal(7)" in line else line for line in text.splitlines()
                              if kept or ("FAIL:" not in line and "checkTotal(7)" not in line)) + "\n"
        write(root, rel, text)
    write(root, ".gitignore", "node_modules\n")
    (root / "node_modules").symlink_to(RUNNERS / "node_modules")
    git(root, "init", "-q", "-b", "main")
    return root


def run_check(root: Path, check_id: str) -> dict[str, Any]:
    proc = subprocess.run([DUN, "check", "--format", "json", "--only", check_id], cwd=root, capture_output=True,
                          text=True, timeout=300, env={**os.environ, "FORCE_COLOR": "1", "CI": "1"})
    assert proc.returncode in (0, 1), proc.stderr
    found: dict[str, Any] = next(c for c in json.loads(proc.stdout)["checks"] if c["id"] == check_id)
    return found


def marked_lines(root: Path, runner: str) -> dict[str, tuple[str, int]]:
    out = {}
    for rel in PROJECTS[runner][1]:
        for number, line in enumerate((root / rel).read_text().splitlines(), 1):
            if "// FAIL: " in line:
                out[line.split("// FAIL: ")[1].strip()] = (rel, number)
    return out


@pytest.mark.parametrize("runner", list(PROJECTS))
def test_every_failing_test_is_an_item_at_its_assertion(runner: str, tmp_path: Path) -> None:
    root = make_project(tmp_path / runner, runner)
    check = run_check(root, runner)
    assert check["status"] == "fail", check
    lines = marked_lines(root, runner)
    items = check["items"]
    assert len(items) == len(EXPECTED[runner]), items
    for key, (name, message) in EXPECTED[runner].items():
        item = next((i for i in items if i["text"].startswith(name + ":")), None)
        assert item is not None, (name, items)
        assert (item["file"], item["line"]) == lines[key], (key, item)
        assert message in item["text"], (key, item["text"])
    assert "failed" in check["signal"]


@pytest.mark.parametrize("runner", list(PROJECTS))
def test_a_clean_project_is_clean_and_other_runners_do_not_apply(runner: str, tmp_path: Path) -> None:
    root = make_project(tmp_path / runner, runner, clean=True)
    proc = subprocess.run([DUN, "check", "--format", "json"], cwd=root, capture_output=True, text=True, timeout=300)
    checks = {c["id"]: c for c in json.loads(proc.stdout)["checks"]}
    assert checks[runner]["status"] == "pass", checks[runner]
    others = [r for r in PROJECTS if r != runner]
    assert all(checks[r]["status"] == "skip" for r in others), {r: checks[r]["signal"] for r in others}


def test_missing_dependencies_are_a_set_up_error_naming_the_package_manager(tmp_path: Path) -> None:
    root = make_project(tmp_path / "p", "vitest")
    (root / "node_modules").unlink()
    write(root, "pnpm-lock.yaml", "lockfileVersion: '9.0'\n")
    check = run_check(root, "vitest")
    assert (check["status"], check["signal"]) == ("error", "vitest not installed (no node_modules/.bin/vitest)")
    assert "pnpm install --frozen-lockfile" in check["next"]


def test_type_errors_and_the_lint_script_are_checks_of_their_own(tmp_path: Path) -> None:
    root = make_project(tmp_path / "ts", "vitest", clean=True)
    pkg = json.loads((root / "package.json").read_text())
    pkg["devDependencies"]["typescript"] = "*"
    pkg["scripts"]["lint"] = "node -e \"console.error('src/a.ts: no semicolons allowed'); process.exit(1)\""
    write(root, "package.json", json.dumps(pkg))
    write(root, "tsconfig.json", '{"compilerOptions": {"strict": true, "noEmit": true}, "include": ["src"]}\n')
    write(root, "src/a.ts", "export const n: number = 1;\nexport const s: string = n;\n")
    tsc = run_check(root, "tsc")
    assert tsc["status"] == "fail"
    assert tsc["items"] == [{"file": "src/a.ts", "line": 2,
                             "text": "error TS2322: Type 'number' is not assignable to type 'string'."}]
    lint = run_check(root, "js-lint")
    assert lint["status"] == "fail" and "no semicolons allowed" in lint["detail"]


@pytest.mark.parametrize("runner", list(PROJECTS))
def test_a_test_file_that_does_not_parse_is_an_item_at_its_broken_line(runner: str, tmp_path: Path) -> None:
    root = make_project(tmp_path / runner, runner, clean=True)
    name = "test/broken.test.js" if runner in ("node-test", "vitest", "jest", "mocha") else "test/broken.js"
    write(root, name, "const a = 1;\nconst b = ;\n")
    check = run_check(root, runner)
    assert check["status"] == "fail", check
    broken = [i for i in check["items"] if i["file"] == name]
    assert len(broken) == 1, check["items"]
    assert broken[0]["line"] == 2, broken[0]
    assert any(word in broken[0]["text"] for word in ("SyntaxError", "Unexpected token", "Expression expected")), \
        broken[0]["text"]
