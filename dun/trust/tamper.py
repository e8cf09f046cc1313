"""Checker tamper detection: what decides "done" (dun's config and manifests, gate files, coverage settings,
`trust.protected` paths) is fingerprinted when a run starts; an iteration that changes it is flagged (and reverted
by default), and deleting tests while checks turn green is flagged too."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from dun.core.atomic import remove_inside, write_inside, write_json_atomic
from dun.core.git import git
from dun.core.textfiles import read_bytes
from dun.engine.checkapi import CheckContext
from dun.store.layout import CONFIG, PLUGINS, TEMPLATES
from dun.store.store import Store, read_json
from dun.trust.claims import discrepancy

CHECKER_GLOBS = [CONFIG, f"{PLUGINS}/**", f"{TEMPLATES}/**", ".coveragerc"]
TEST_GLOBS = ["**/test_*.py", "**/*_test.py", "**/*_test.go", "**/*.test.*", "**/*.spec.*"]
TEST_PATTERN = r"^\s*(def test_|async def test_|func Test|it\(|test\()"


def fingerprint_path(root: Path) -> Path:
    return Store(root).fingerprint_path


def _globs(catalog: Any, protected: list[str]) -> list[str]:
    gates = [g for c in catalog.checks if c.type == "gates" for g in c.options.get("files", [])]
    return [*CHECKER_GLOBS, *gates, *protected]


def fingerprint(ctx: CheckContext, catalog: Any, protected: list[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for rel in ctx.match(_globs(catalog, protected)):
        try:
            out[rel] = hashlib.sha256(read_bytes(ctx.root / rel, root=ctx.root)).hexdigest()
        except OSError:
            continue
    thresholds = {c.id: [c.options.get("threshold"), c.options.get("file_threshold")]
                  for c in catalog.checks if c.type == "coverage"}
    out["<coverage thresholds>"] = hashlib.sha256(repr(sorted(thresholds.items())).encode()).hexdigest()
    return out


def record(root: Path, ctx: CheckContext, catalog: Any, protected: list[str], start_head: str | None) -> None:
    write_json_atomic(fingerprint_path(root), {"schema_version": 1, "head": start_head,
                                               "files": fingerprint(ctx, catalog, protected)})


def compare(root: Path, ctx: CheckContext, catalog: Any, protected: list[str]) -> list[dict[str, Any]]:
    data = read_json(fingerprint_path(root))
    if not data:
        return []
    before: dict[str, str] = data.get("files") or {}
    after = fingerprint(ctx, catalog, protected)
    protected_set = set(ctx.match(protected)) if protected else set()
    changed = []
    for path in sorted(set(before) | set(after)):
        if before.get(path) == after.get(path):
            continue
        if path not in before and path in protected_set:
            continue  # new files under protected paths (a new test) are welcome
        changed.append(path)
    if not changed:
        return []
    real = [p for p in changed if not p.startswith("<")]
    diff = git(root, "diff", "--stat", str(data.get("head") or "HEAD"), "--", *real, check=False).stdout.decode(
        "utf-8", "replace") if real and data.get("head") else ""
    return [discrepancy("checker_tampered", f"what decides 'done' was changed: {', '.join(changed[:5])}",
                        paths=changed, diff=diff[-2000:], head=data.get("head"))]


def revert(root: Path, found: dict[str, Any]) -> list[str]:
    """Put back the versions committed when the run started; files that did not exist then are removed."""
    head = found.get("head")
    reverted = []
    for rel in found.get("paths", []):
        if rel.startswith("<") or not head:
            continue
        show = git(root, "show", f"{head}:{rel}", check=False)
        if show.returncode == 0:
            write_inside(root, rel, show.stdout)
        else:
            remove_inside(root, rel)
        reverted.append(rel)
    return reverted


def tests_removed(root: Path, tree_before: str | None, tree_after: str | None, newly_passing: list[str],
                  ) -> list[dict[str, Any]]:
    """Test files deleted, or fewer test functions, in an iteration where checks turned green."""
    if not newly_passing or not tree_before or not tree_after:
        return []
    from dun.core.globs import match_files

    deleted_proc = git(root, "diff", "--name-only", "--diff-filter=D", tree_before, tree_after, check=False)
    deleted = match_files(deleted_proc.stdout.decode("utf-8", "replace").split(), TEST_GLOBS)
    counts = [_test_count(root, tree) for tree in (tree_before, tree_after)]
    if not deleted and counts[1] >= counts[0]:
        return []
    detail = f"tests removed while {', '.join(newly_passing)} turned green: " + (
        f"deleted {', '.join(deleted[:5])}" if deleted else f"test count {counts[0]} -> {counts[1]}")
    return [discrepancy("tests_removed", detail, deleted=deleted, count_before=counts[0], count_after=counts[1])]


def _test_count(root: Path, tree: str) -> int:
    proc = git(root, "grep", "-c", "-E", TEST_PATTERN, tree, "--", *TEST_GLOBS, check=False)
    return sum(int(line.rsplit(":", 1)[1]) for line in proc.stdout.decode("utf-8", "replace").splitlines()
               if line.rsplit(":", 1)[-1].isdigit())
