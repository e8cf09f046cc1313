"""`dun check` on a Rust crate (cargo and rustc from the machine; the crate has no dependencies, so it builds
offline): every failing test of every test binary and doctest is an item at the file and line its panic names,
with the panic's message; compile errors and clippy's findings are items too; a clean crate is clean."""

from __future__ import annotations

import json
import os
import pwd
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from checks_support import git, write

DUN = str(Path(sys.executable).parent / "dun")
pytestmark = pytest.mark.skipif(shutil.which("cargo") is None,
                                reason="cargo is not installed: the Rust fixture crate cannot build")

LIB = """\
/// Doubles.
///
/// ```
/// assert_eq!(calc::double(2), 5);
/// ```
pub fn double(x: i32) -> i32 {
    x * 2
}

pub fn parse(s: &str) -> i32 {
    s.parse().unwrap()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doubles() {
        assert_eq!(double(2), 5, "two doubled is four");
    }

    #[test]
    fn parses() {
        assert_eq!(parse("x"), 1);
    }

    #[test]
    fn passes() {
        assert!(double(1) == 2);
    }
}
"""
INTEGRATION = """\
#[test]
fn integration_fails() {
    let v = [1, 2, 3];
    assert!(v.len() == 4, "three is not four: {}", v.len());
}
"""
CARGO = '[package]\nname = "calc"\nversion = "0.1.0"\nedition = "2021"\n\n[dependencies]\n'
# test -> (file, line, text the message must hold)
EXPECTED = {
    "tests::doubles": ("src/lib.rs", 20, "assertion `left == right` failed: two doubled is four\n  left: 4\n right: 5"),
    "tests::parses": ("src/lib.rs", 11, "called `Result::unwrap()` on an `Err` value"),
    "integration_fails": ("tests/integration.rs", 4, "three is not four: 3"),
    "src/lib.rs - double (line 3)": ("src/lib.rs", 3, "left: 4\n right: 5"),
}


def crate(root: Path, lib: str = LIB, integration: str = INTEGRATION) -> Path:
    write(root, "Cargo.toml", CARGO)
    write(root, "src/lib.rs", lib)
    write(root, "tests/integration.rs", integration)
    write(root, ".gitignore", "target\n")
    git(root, "init", "-q", "-b", "main")
    return root


# The suite gives every test its own HOME; rustup and cargo keep their toolchains under the account's real one.
_ACCOUNT = Path(pwd.getpwuid(os.getuid()).pw_dir)
TOOLCHAIN = {name: os.environ.get(name) or str(_ACCOUNT / default)
             for name, default in (("RUSTUP_HOME", ".rustup"), ("CARGO_HOME", ".cargo"))}


def dun_check(root: Path, only: str) -> dict[str, dict[str, Any]]:
    env = {**os.environ, **TOOLCHAIN, "CARGO_TARGET_DIR": str(root / "target"), "CARGO_NET_OFFLINE": "true"}
    proc = subprocess.run([DUN, "check", "--format", "json", "--only", only], cwd=root, capture_output=True,
                          text=True, env=env, timeout=600)
    assert proc.returncode in (0, 1), proc.stderr
    return {c["id"]: c for c in json.loads(proc.stdout)["checks"]}


def test_every_failing_test_and_doctest_is_an_item_where_it_panicked(tmp_path: Path) -> None:
    check = dun_check(crate(tmp_path / "calc"), "cargo-test")["cargo-test"]
    assert check["status"] == "fail", check
    items = {i["text"].split(": ", 1)[0]: i for i in check["items"]}
    assert set(items) == set(EXPECTED)
    for name, (file, line, message) in EXPECTED.items():
        assert (items[name]["file"], items[name]["line"]) == (file, line), items[name]
        assert message in items[name]["text"], items[name]["text"]
    assert check["signal"].startswith("exit 101: 4 failed, 1 passed")  # every binary ran (--no-fail-fast)


def test_compile_errors_are_items_and_clippy_findings_too(tmp_path: Path) -> None:
    root = crate(tmp_path / "broken", lib="pub fn double(x: i32) -> i32 {\n    x * \"2\"\n}\n",
                 integration="#[test]\nfn t() {\n    let v = vec![1];\n    assert_eq!(v.len(), 1);\n}\n")
    checks = dun_check(root, "cargo-test,cargo-clippy")
    test = checks["cargo-test"]
    assert test["status"] == "fail"
    assert test["items"][0]["file"] == "src/lib.rs" and test["items"][0]["line"] == 2
    assert test["items"][0]["text"].startswith("E0277: cannot multiply `i32` by `&str`")
    assert "1 compile error" in test["signal"]
    if checks["cargo-clippy"]["status"] == "skip":
        pytest.skip(f"clippy: {checks['cargo-clippy']['signal']}")
    write(root, "src/lib.rs", "pub fn double(x: i32) -> i32 {\n    return x * 2;\n}\n")
    clippy = dun_check(root, "cargo-clippy")["cargo-clippy"]
    assert clippy["status"] == "fail"
    assert {(i["file"], i["line"], i["text"].split(": ")[0]) for i in clippy["items"]} == {
        ("src/lib.rs", 2, "[warning] clippy::needless_return"),
        ("tests/integration.rs", 3, "[warning] clippy::useless_vec")}


def test_a_clean_crate_is_clean(tmp_path: Path) -> None:
    lib = "pub fn double(x: i32) -> i32 {\n    x * 2\n}\n\n#[test]\nfn doubles() {\n    assert_eq!(double(2), 4);\n}\n"
    root = crate(tmp_path / "clean", lib=lib, integration="#[test]\nfn t() {\n    assert_eq!(calc::double(1), 2);\n}\n")
    checks = dun_check(root, "rust")
    assert checks["cargo-test"]["status"] == "pass", checks["cargo-test"]
    assert checks["cargo-test"]["signal"] == "exit 0: 2 passed"
    assert checks["cargo-clippy"]["status"] in ("pass", "skip"), checks["cargo-clippy"]


def test_libtests_own_json_gives_the_same_items(tmp_path: Path) -> None:
    # libtest's JSON is for nightly compilers; RUSTC_BOOTSTRAP lets this stable one write it for the test
    root = crate(tmp_path / "json")
    write(root, ".dun/plugins/rust.yaml", """\
id: rust
checks:
  - id: cargo-test
    type: command
    command: cargo test --no-fail-fast --message-format=json -- -Z unstable-options --format json
    env: {RUSTC_BOOTSTRAP: "1", RUST_BACKTRACE: "0"}
    parser: {type: cargo-test}
""")
    check = dun_check(root, "cargo-test")["cargo-test"]
    items = {i["text"].split(": ", 1)[0]: (i["file"], i["line"]) for i in check["items"]}
    assert items == {name: (file, line) for name, (file, line, _) in EXPECTED.items()}
    assert check["signal"].startswith("exit 101: 4 failed, 1 passed")
