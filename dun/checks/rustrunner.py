"""A Rust project's test runner, told from its own files: cargo-nextest when the project names it
(`.config/nextest.toml`, or `cargo nextest` in its Makefile, justfile or a workflow) and it is installed, else
cargo's own libtest. A project whose tests need nextest's process per test (global state, environment variables)
fails under `cargo test` where its own runner passes. Every look goes through dun/checks/looked.py."""

from __future__ import annotations

import re
from pathlib import Path

from dun.checks.looked import glob_paths, is_dir, is_file, read, which

_NAMED = re.compile(r"\bcargo[ -]nextest\b")


def uses_nextest(root: Path) -> bool:
    if not is_file(root / "Cargo.toml") or which("cargo-nextest") is None:
        return False
    if is_file(root / ".config" / "nextest.toml"):
        return True
    for name in ("Makefile", "justfile", "Justfile", ".github/workflows"):
        path = root / name
        files = glob_paths(path, "*.y*ml")[:20] if is_dir(path) else [path]
        if any(_NAMED.search(read(f, root, 256 * 1024)) for f in files):
            return True
    return False
