"""Leftovers of issue 25, second part, each run for real (skipped with a message where the toolchain is missing): a
crate whose integration-test target does not compile hides none of its other targets' failing tests, under cargo's
libtest and under cargo-nextest; the same jest test failing in two `projects` that have no displayName; `dun init`
and `dun doctor` on a repository of four ecosystems."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from checks_support import git, write
from test_ecosystem_leftovers import BAD, GOOD, JEST_TEST, NEXTEST_BIN, cargo_env, dun_check
from test_js_projects import DUN, RUNNERS, run_check
from test_js_projects import _missing as js_missing

# --- Rust: `tests/it.rs` does not compile; the library's unit tests, the binary's and `tests/other.rs` still run ---

MAIN = "fn main() {}\n\n#[test]\nfn bin_fails() {\n    assert_eq!(1 + 1, 3);\n}\n"
BROKEN_IT = '#[test]\nfn it_broken() {\n    let x: i32 = "no";\n}\n'
OTHER = "#[test]\nfn other_fails() {\n    assert_eq!(crate1::double(1), 3);\n}\n\n#[test]\nfn other_passes() {}\n"


def workspace(root: Path, nextest: bool) -> Path:
    """crate1, whose `tests/it.rs` does not compile; `broken`, whose library does not; `fine`, with a failing unit
    test. cargo stops at the first crate that fails, so which of the two it names first is its choice."""
    write(root, "Cargo.toml", '[workspace]\nmembers = ["crate1", "broken", "fine"]\nresolver = "2"\n')
    for name in ("crate1", "broken", "fine"):
        write(root, f"{name}/Cargo.toml", f'[package]\nname = "{name}"\nversion = "0.1.0"\nedition = "2021"\n')
    for rel, text in (("crate1/src/lib.rs", GOOD), ("crate1/src/main.rs", MAIN), ("crate1/tests/it.rs", BROKEN_IT),
                      ("crate1/tests/other.rs", OTHER), ("broken/src/lib.rs", BAD), ("fine/src/lib.rs", GOOD),
                      (".gitignore", "target\n")):
        write(root, rel, text)
    if nextest:
        write(root, ".config/nextest.toml", '[profile.default]\nslow-timeout = "60s"\n')
    git(root, "init", "-q", "-b", "main")
    return root


def _no_cargo(nextest: bool) -> str | None:
    if shutil.which("cargo") is None:
        return "cargo is not installed: the Rust fixture project cannot run"
    if nextest and not (NEXTEST_BIN / "cargo-nextest").is_file():
        return f"cargo-nextest is missing ({NEXTEST_BIN}): run tests/e2e/install_nextest.sh (make test does)"
    return None


@pytest.fixture(scope="module", params=["cargo-test", "cargo-nextest"])
def broken_target(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Any]:
    check_id: str = request.param
    nextest = check_id == "cargo-nextest"
    if (missing := _no_cargo(nextest)) is not None:
        pytest.skip(missing)
    root = workspace(tmp_path_factory.mktemp(check_id) / "ws", nextest)
    env = cargo_env(root, NEXTEST_BIN) if nextest else cargo_env(root)
    return check_id, dun_check(root, check_id, env)


def test_a_test_target_that_does_not_compile_is_an_item_and_hides_no_other_targets_failing_test(
        broken_target: tuple[str, Any]) -> None:
    check_id, check = broken_target
    assert (check["id"], check["status"]) == (check_id, "fail"), check
    assert sorted((i["file"], i["line"]) for i in check["items"]) == [
        ("broken/src/lib.rs", 2), ("crate1/src/lib.rs", 9), ("crate1/src/main.rs", 5), ("crate1/tests/it.rs", 3),
        ("crate1/tests/other.rs", 3), ("fine/src/lib.rs", 9)], check["items"]
    texts = {i["file"]: i["text"] for i in check["items"]}
    assert texts["crate1/tests/it.rs"].startswith("E0308") and texts["broken/src/lib.rs"].startswith("E0308"), texts
    assert "tests::doubles" in texts["crate1/src/lib.rs"] and "left: 4" in texts["crate1/src/lib.rs"], texts
    assert "bin_fails" in texts["crate1/src/main.rs"] and "other_fails" in texts["crate1/tests/other.rs"], texts
    assert "tests::doubles" in texts["fine/src/lib.rs"], texts


# --- jest: the same test failing in two `projects` without a displayName is two items, each naming its project ----

JEST_UNNAMED = """\
module.exports = {
  projects: [
    { testEnvironment: 'node', testMatch: ['<rootDir>/test/**/*.test.js'] },
    { testEnvironment: 'node', testMatch: ['<rootDir>/test/**/*.test.js'] },
    '<rootDir>/jest.int.config.js',
    '<rootDir>/packages/api',
  ],
};
"""


def js_repo(root: Path, package: dict[str, object], files: dict[str, str]) -> Path:
    """A JavaScript project on the pinned runners (tests/e2e/install_js_runners.sh), committed to nothing."""
    write(root, "package.json", json.dumps({"private": True, **package}))
    for rel, text in {**files, ".gitignore": "node_modules\n"}.items():
        write(root, rel, text)
    (root / "node_modules").symlink_to(RUNNERS / "node_modules")
    git(root, "init", "-q", "-b", "main")
    return root


@pytest.mark.skipif(js_missing() is not None, reason=str(js_missing()))
def test_jest_projects_without_a_display_name_are_told_apart_by_where_they_are_configured(tmp_path: Path) -> None:
    root = js_repo(tmp_path / "p", {"name": "unnamed-projects", "scripts": {"test": "jest"},
                                    "devDependencies": {"jest": "*"}}, {
        "jest.config.js": JEST_UNNAMED,
        "jest.int.config.js": "module.exports = { testEnvironment: 'node', "
                              "testMatch: ['<rootDir>/test/**/*.test.js'] };\n",
        "packages/api/package.json": json.dumps({"name": "api", "private": True}),
        "test/math.test.js": JEST_TEST, "packages/api/test/math.test.js": JEST_TEST})
    check = run_check(root, "jest")
    assert check["status"] == "fail", check
    found = sorted((i["text"].split(":")[0], i["file"], i["line"]) for i in check["items"])
    assert found == [("[jest.int.config.js] math > adds", "test/math.test.js", 3),
                     ("[packages/api] math > adds", "packages/api/test/math.test.js", 3),
                     ("[projects[0]] math > adds", "test/math.test.js", 3),
                     ("[projects[1]] math > adds", "test/math.test.js", 3)], check["items"]
    assert all("Expected: 3" in i["text"] and "Received: 2" in i["text"] for i in check["items"]), check["items"]


@pytest.mark.skipif(js_missing() is not None, reason=str(js_missing()))
def test_vitest_projects_without_a_name_are_told_apart_as_vitest_prints_them(tmp_path: Path) -> None:
    root = js_repo(tmp_path / "p", {"name": "unnamed-projects", "type": "module", "scripts": {"test": "vitest run"},
                                    "devDependencies": {"vitest": "*"}}, {
        "vitest.config.js": "import { defineConfig } from 'vitest/config';\nexport default defineConfig({ test: { "
                            "projects: [\n  { test: { include: ['test/**/*.test.js'] } },\n"
                            "  { test: { include: ['test/**/*.test.js'] } },\n] } });\n",
        "test/math.test.js": "import { describe, it, expect } from 'vitest';\n" + JEST_TEST})
    check = run_check(root, "vitest")
    assert check["status"] == "fail", check
    assert sorted((i["text"].split(":")[0], i["file"], i["line"]) for i in check["items"]) == [
        ("[0] math > adds", "test/math.test.js", 4), ("[1] math > adds", "test/math.test.js", 4)], check["items"]


# --- `dun init` and `dun doctor` on a repository of four ecosystems: each found once, with the checks that will run ---

def test_init_and_doctor_say_each_ecosystem_once_with_the_checks_that_will_really_run(tmp_path: Path) -> None:
    root = tmp_path / "mixed"
    for rel, text in (("pyproject.toml", '[project]\nname = "app"\nversion = "0.1"\n'),
                      ("tests/test_app.py", "def test_app():\n    assert True\n"),
                      ("package.json", json.dumps({"name": "web", "private": True, "scripts": {"test": "vitest run"},
                                                   "devDependencies": {"vitest": "3", "typescript": "5"}})),
                      ("tsconfig.json", '{"compilerOptions": {"strict": true}}\n'),
                      ("src/a.ts", "export const a = 1;\n"),
                      ("go.mod", "module example.com/svc\n\ngo 1.21\n"), ("svc.go", "package svc\n"),
                      ("Cargo.toml", '[package]\nname = "core"\nversion = "0.1.0"\nedition = "2021"\n'),
                      ("src/lib.rs", "pub fn f() {}\n")):
        write(root, rel, text)
    git(root, "init", "-q", "-b", "main")
    bin_dir = tmp_path / "bin"  # this machine's git only: no node, cargo, go, staticcheck on PATH
    bin_dir.mkdir()
    (bin_dir / "git").symlink_to(str(shutil.which("git")))
    env = {**os.environ, "PATH": str(bin_dir)}
    said = {
        "javascript (package.json; uses npm, vitest, typescript)":
            "checks vitest (skipped: node is not installed), tsc (skipped: node is not installed); "
            "`dun check` warns until it is installed",
        "rust (Cargo.toml; uses cargo)": "checks cargo-test (skipped: cargo is not installed), cargo-clippy "
                                         "(skipped: cargo is not installed); `dun check` warns until it is installed",
        "go (go.mod; uses go)": "checks go-test (skipped: go is not installed), go-vet (skipped: go is not installed), "
                                "go-staticcheck (skipped: staticcheck is not installed), go-vulncheck (skipped: "
                                "govulncheck is not installed), go-coverage; `dun check` warns until it is installed",
    }
    init = subprocess.run([DUN, "init"], cwd=root, capture_output=True, text=True, env=env, timeout=120)
    assert init.returncode == 0, init.stderr
    found = [line.removeprefix("found ") for line in init.stdout.splitlines() if line.startswith("found ")]
    for head, checks in said.items():
        assert f"{head}: {checks}" in found, found
    assert any(line.startswith("python (pyproject.toml; uses pytest): checks pytest") for line in found), found
    assert len(found) == 4, found  # each once: no second line for a toolchain that is missing
    doctor = subprocess.run([DUN, "doctor", "--json"], cwd=root, capture_output=True, text=True, env=env, timeout=120)
    assert json.loads(doctor.stdout)["projects"] == found, doctor.stdout


def test_doctor_says_which_subdirectory_projects_a_check_of_the_users_runs(tmp_path: Path) -> None:
    root = tmp_path / "parts"
    for rel, text in (("core/Cargo.toml", '[package]\nname = "core"\nversion = "0.1.0"\nedition = "2021"\n'),
                      ("core/src/lib.rs", "pub fn f() {}\n"), ("svc/go.mod", "module example.com/svc\n\ngo 1.21\n"),
                      ("svc/svc_test.go", "package svc\n"),
                      (".dun/plugins/parts.yaml", "id: parts\nchecks:\n  - id: core-tests\n    type: command\n"
                                                  "    cwd: core\n    command: cargo test\n")):
        write(root, rel, text)
    git(root, "init", "-q", "-b", "main")
    doctor = subprocess.run([DUN, "doctor", "--json"], cwd=root, capture_output=True, text=True, timeout=120)
    assert json.loads(doctor.stdout)["projects"] == [
        "core/Cargo.toml: run by your check core-tests (`cwd: core`)",  # `dun check` no longer warns about it
        "svc/go.mod: a go project in svc/ whose tests no built-in check runs (they run at the repository root): add a "
        "check with `cwd: svc`; `dun check` warns until a check runs it (docs/plugins.md)"], doctor.stdout
