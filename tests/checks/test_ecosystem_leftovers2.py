"""Leftovers of issue 25, second part, each run for real (skipped with a message where the toolchain is missing): a
crate whose integration-test target does not compile hides none of its other targets' failing tests, under cargo's
libtest and under cargo-nextest."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from checks_support import git, write
from test_ecosystem_leftovers import GOOD, NEXTEST_BIN, cargo_env, dun_check

# --- Rust: `tests/it.rs` does not compile; the library's unit tests, the binary's and `tests/other.rs` still run ---

MAIN = "fn main() {}\n\n#[test]\nfn bin_fails() {\n    assert_eq!(1 + 1, 3);\n}\n"
BROKEN_IT = '#[test]\nfn it_broken() {\n    let x: i32 = "no";\n}\n'
OTHER = "#[test]\nfn other_fails() {\n    assert_eq!(crate1::double(1), 3);\n}\n\n#[test]\nfn other_passes() {}\n"


def crate(root: Path, nextest: bool) -> Path:
    write(root, "Cargo.toml", '[package]\nname = "crate1"\nversion = "0.1.0"\nedition = "2021"\n')
    for rel, text in (("src/lib.rs", GOOD), ("src/main.rs", MAIN), ("tests/it.rs", BROKEN_IT),
                      ("tests/other.rs", OTHER), (".gitignore", "target\n")):
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
    root = crate(tmp_path_factory.mktemp(check_id) / "crate1", nextest)
    env = cargo_env(root, NEXTEST_BIN) if nextest else cargo_env(root)
    return check_id, dun_check(root, check_id, env)


def test_a_test_target_that_does_not_compile_is_an_item_and_hides_no_other_targets_failing_test(
        broken_target: tuple[str, Any]) -> None:
    check_id, check = broken_target
    assert (check["id"], check["status"]) == (check_id, "fail"), check
    items = sorted((i["file"], i["line"], i["text"].split(": ")[0]) for i in check["items"])
    assert [(file, line) for file, line, _ in items] == [
        ("src/lib.rs", 9), ("src/main.rs", 5), ("tests/it.rs", 3), ("tests/other.rs", 3)], check["items"]
    texts = {file: i["text"] for i in check["items"] for file in [i["file"]]}
    assert texts["tests/it.rs"].startswith("E0308"), texts
    assert "tests::doubles" in texts["src/lib.rs"] and "left: 4" in texts["src/lib.rs"], texts
    assert "bin_fails" in texts["src/main.rs"] and "other_fails" in texts["tests/other.rs"], texts
