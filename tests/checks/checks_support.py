"""Helpers for driving the built-in check types the way a user does: YAML manifest in, CheckResult out.

Plain functions imported by the test modules (tests/checks has no conftest.py on purpose: other test modules
do `from conftest import ...`, and a second conftest module would shadow the top-level one).

* `check(root, body)` - validate a one-check manifest whose check mapping is the YAML text `body`, run it
                        through the engine against the repository at `root`, return the CheckResult.
* `manifest(text)`    - validate full manifest YAML text; returns (Manifest | None, errors).
* `git(root, *args)`  - run git (check=True) and return stdout.
* `write(root, rel, text)` - write a UTF-8 text file, creating parent directories.
"""

from __future__ import annotations

import functools
import subprocess
import textwrap
from pathlib import Path

from dun.config.yamlio import load_yaml_text
from dun.engine.catalog import Catalog
from dun.engine.checkapi import CheckContext, CheckType
from dun.engine.manager import check_types, make_manager
from dun.engine.manifest import Manifest, validate_manifest
from dun.engine.model import CheckResult
from dun.engine.runner import run_one
from dun.store.layout import find_repo

SOURCE = "test.yaml"
DEFAULT_TIMEOUT = 300.0


@functools.cache
def types() -> dict[str, CheckType]:
    return check_types(make_manager(entry_points=False))


def manifest_text(body: str) -> str:
    """A manifest with one check (id `c`) whose remaining keys are the YAML mapping `body`."""
    lines = textwrap.dedent(body).strip("\n").splitlines()
    return "id: test\nchecks:\n  - id: c\n" + "".join(f"    {line}\n" for line in lines)


def manifest(text: str) -> tuple[Manifest | None, list[str]]:
    return validate_manifest(load_yaml_text(textwrap.dedent(text), SOURCE), SOURCE, types(), DEFAULT_TIMEOUT)


def check(root: Path, body: str) -> CheckResult:
    text = manifest_text(body)
    parsed, errors = manifest(text)
    assert parsed is not None, f"manifest did not validate: {errors}\n{text}"
    found = find_repo(root)
    ctx = CheckContext(found.root, found.is_git)
    return run_one(Catalog(manifests=[parsed], types=types()), parsed.checks[0], ctx)


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, text=True).stdout


def write(root: Path, rel: str, text: str) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path
