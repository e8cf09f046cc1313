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
