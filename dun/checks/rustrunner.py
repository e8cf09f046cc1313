"""A Rust project's test runner, told from its own files: cargo-nextest when the project names it
(`.config/nextest.toml`, or `cargo nextest` in its Makefile, justfile or a workflow) and it is installed, else
cargo's own libtest. A project whose tests need nextest's process per test (global state, environment variables)
fails under `cargo test` where its own runner passes. Every look goes through dun/checks/looked.py."""

from __future__ import annotations

import re
from pathlib import Path

from dun.checks.looked import glob_paths, is_dir, is_file, read, which
from dun.core.lazyre import LazyPattern

_NAMED = LazyPattern(r"\bcargo[ -]nextest\b")
_CARGO_TEST = LazyPattern(r"\bcargo\s+(?:\+\S+\s+)?(?:test|nextest\s+run)\b(?P<args>[^#]*)")


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


def cargo_features(root: Path) -> str:
    """The features the project's own `cargo test` (its `make test` or `just test` recipe) enables: `--all-features`,
    `--features a,b` (`-F`), `--no-default-features`; '' for none. A test behind `#[cfg(feature = "x")]` runs there
    and nowhere else."""
    import shlex

    from dun.checks.gorunner import recipe

    for name in ("Makefile", "GNUmakefile", "makefile", "justfile", "Justfile"):
        for line in recipe(read(root / name, root, 256 * 1024), "test"):
            found = _CARGO_TEST.search(line)
            try:
                words = shlex.split(re.split(r"\s--(?:\s|$)", found["args"], maxsplit=1)[0]) if found else []
            except ValueError:
                continue
            picked: list[str] = []
            for i, word in enumerate(words):
                option, _, value = word.partition("=")
                if option in ("--all-features", "--no-default-features"):
                    picked.append(option)
                elif option in ("--features", "-F"):
                    value = value or (words[i + 1] if i + 1 < len(words) else "")
                    if value and "$" not in value:
                        picked.append(f"--features {shlex.quote(value)}")
            if picked:
                return " ".join(picked)
    return ""
