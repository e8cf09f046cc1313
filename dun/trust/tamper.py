"""Checker tamper detection: what decides "done" (dun's config and manifests, `[tool.dun]` in pyproject.toml, gate
files, coverage settings, `trust.protected` paths) is fingerprinted right before the agent starts and compared
right after it ends. Only what changed in between is the agent's: a change made between iterations or between runs
is the operator's, taken as the new baseline and named. An iteration that changes it is flagged (and reverted by
default), and deleting tests while checks turn green is flagged too.

The fingerprint holds git blob ids (written with `git hash-object -w`, filters off), so a revert restores exactly
what the agent found, committed or not. The directories of manifests are walked on disk: a file git ignores
(`.gitignore`, `.git/info/exclude`) still loads as a plugin, so it is still fingerprinted."""

from __future__ import annotations

import hashlib
import json
import os
import stat
import tomllib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from dun.core.atomic import remove_inside, write_inside, write_json_atomic
from dun.core.git import git
from dun.core.textfiles import read_bytes
from dun.engine.catalog import Catalog
from dun.engine.checkapi import CheckContext
from dun.store.layout import CONFIG, DIR, PLUGINS, TEMPLATES
from dun.store.store import Store, read_json
from dun.trust.claims import Discrepancy

WALKED = (PLUGINS, TEMPLATES)  # every file under them, whatever git ignores
CHECKER_FILES = (CONFIG, ".coveragerc")
PYPROJECT = "pyproject.toml"
TOOL_DUN = "pyproject.toml [tool.dun]"  # the table, not the file: the agent may edit the project's dependencies
THRESHOLDS = "<coverage thresholds>"
FINGERPRINT_FILE = f"{DIR}/fingerprint.json"
SCHEMA = 2
TEST_GLOBS = ["**/test_*.py", "**/*_test.py", "**/*_test.go", "**/*.test.*", "**/*.spec.*"]
TEST_PATTERN = r"^\s*(def test_|async def test_|func Test|it\(|test\()"
MAX_WALKED = 5000  # files under the manifest directories; more is not a plugin directory


def fingerprint_path(root: Path) -> Path:
    return Store(root).fingerprint_path


def _walk(root: Path, rel: str) -> list[str]:
    """Files and links under `rel` (links are not followed), relative to the root."""
    out: list[str] = []
    top = root / rel
    if top.is_symlink() or not top.is_dir():
        return [rel] if top.is_symlink() else []
    for here, dirs, files in os.walk(top):
        base = Path(here).relative_to(root)
        out.extend(str(base / name) for name in files)
        out.extend(str(base / name) for name in dirs if (Path(here) / name).is_symlink())
        if len(out) > MAX_WALKED:
            break
    return out


def checker_paths(root: Path, ctx: CheckContext, catalog: Catalog, protected: Sequence[str],
                  plugin_dirs: Sequence[str]) -> list[str]:
    gates = [g for c in catalog.checks if c.type == "gates" for g in c.options.get("files", [])]
    found = set(ctx.match([*gates, *protected])) if gates or protected else set()
    for rel in (*WALKED, *plugin_dirs):
        found.update(_walk(root, rel.strip("/")))
    found.update(rel for rel in CHECKER_FILES if os.path.lexists(root / rel))
    return sorted(found)


def _blob_ids(root: Path, paths: list[str]) -> dict[str, str]:
    """git blob ids of regular files, stored in the object database (filters off: nothing of the repo's runs)."""
    if not paths:
        return {}
    proc = git(root, "hash-object", "-w", "--no-filters", "--", *paths, check=False)
    ids = proc.stdout.decode().split()
    return dict(zip(paths, ids, strict=True)) if proc.returncode == 0 and len(ids) == len(paths) else {}


def _tool_dun(root: Path) -> str | None:
    try:
        data = tomllib.loads(read_bytes(root / PYPROJECT, root=root).decode("utf-8", "replace"))
    except (OSError, tomllib.TOMLDecodeError):
        return None
    table = (data.get("tool") or {}).get("dun")
    if table is None:
        return None
    return hashlib.sha256(json.dumps(table, sort_keys=True, default=str).encode()).hexdigest()


def take(root: Path, ctx: CheckContext, catalog: Catalog, protected: Sequence[str],
         plugin_dirs: Sequence[str]) -> dict[str, dict[str, str]]:
    """{"files": what decides "done", path -> digest, "blobs": path -> git blob id to restore it from}."""
    paths = checker_paths(root, ctx, catalog, protected, plugin_dirs)
    regular, files = [], {}
    for rel in paths:
        try:
            mode = os.lstat(root / rel).st_mode
        except OSError:
            continue
        if stat.S_ISLNK(mode):
            files[rel] = "link:" + os.readlink(root / rel)
        elif stat.S_ISREG(mode):
            regular.append(rel)
    tool = _tool_dun(root)
    project = [PYPROJECT] if os.path.isfile(root / PYPROJECT) and not os.path.islink(root / PYPROJECT) else []
    blobs = _blob_ids(root, regular + project)
    for rel in regular:
        digest = blobs.get(rel)
        if digest is None:
            try:
                digest = hashlib.sha256(read_bytes(root / rel, root=root)).hexdigest()
            except OSError:
                continue
        files[rel] = digest
    if tool:
        files[TOOL_DUN] = tool
    thresholds = {c.id: [c.options.get("threshold"), c.options.get("file_threshold")]
                  for c in catalog.checks if c.type == "coverage"}
    files[THRESHOLDS] = hashlib.sha256(repr(sorted(thresholds.items())).encode()).hexdigest()
    return {"files": files, "blobs": blobs}


def read_baseline(root: Path) -> dict[str, Any] | None:
    data = read_json(fingerprint_path(root))
    return data if data and isinstance(data.get("files"), dict) else None


def write_baseline(root: Path, snapshot: dict[str, dict[str, str]], head: str | None,
                   old: Mapping[str, object] | None = None) -> None:
    """Record the baseline; not rewritten when `old` (as read) already holds it (a write costs an fsync, twice
    an iteration otherwise)."""
    if old is not None and old.get("schema_version") == SCHEMA and old.get("files") == snapshot["files"] \
            and old.get("blobs") == snapshot["blobs"]:
        return
    write_json_atomic(fingerprint_path(root), {"schema_version": SCHEMA, "head": head, **snapshot})


def changed(before: dict[str, str], after: dict[str, str], new_ok: set[str] | None = None) -> list[str]:
    out = []
    for path in sorted(set(before) | set(after)):
        if before.get(path) == after.get(path):
            continue
        if path not in before and path in (new_ok or set()):
            continue  # new files under protected paths (a new test) are welcome
        out.append(path)
    return out


def compare(root: Path, ctx: CheckContext, before: dict[str, Any], after: dict[str, Any], protected: Sequence[str],
            head: str | None) -> list[Discrepancy]:
    """The agent's changes to what decides "done" between `before` (as it started) and `after` (as it ended)."""
    new_ok = set(ctx.match(protected)) if protected else set()
    paths = changed(before.get("files") or {}, after.get("files") or {}, new_ok)
    if not paths:
        return []
    real = [p.split(" ", 1)[0] for p in paths if not p.startswith("<")]
    diff = git(root, "diff", "--stat", str(head or "HEAD"), "--", *real, check=False).stdout.decode(
        "utf-8", "replace") if real and head else ""
    files = before.get("files") or {}
    blobs = before.get("blobs") or {}
    keep = {PYPROJECT if p == TOOL_DUN else p for p in paths}
    return [Discrepancy("checker_tampered", f"what decides 'done' was changed: {', '.join(paths[:5])}",
                        paths=paths, diff=diff[-2000:], head=head, existed=[p for p in paths if p in files],
                        blobs={p: b for p, b in blobs.items() if p in keep})]


def baseline_missing(root: Path, before: Mapping[str, object]) -> list[Discrepancy]:
    """dun's record of the baseline deleted or rewritten during the iteration: a reset of the judge, never a fresh
    baseline (the comparison uses the snapshot taken before the agent started)."""
    now = read_baseline(root)
    if now is not None and now.get("files") == before.get("files"):
        return []
    what = "deleted" if not fingerprint_path(root).exists() else "rewritten"
    return [Discrepancy("checker_tampered", f"dun's fingerprint of what decides 'done' ({FINGERPRINT_FILE}) was "
                        f"{what}", paths=[FINGERPRINT_FILE], blobs={})]


def revert(root: Path, found: Discrepancy) -> list[str]:
    """Put back what the agent found: the blob of the snapshot (else the commit it started from); a file that did
    not exist then is removed. `[tool.dun]` comes back with the whole pyproject.toml."""
    head, blobs, existed = found.head, found.blobs or {}, set(found.existed or ())
    reverted = []
    for key in found.paths or []:
        if key == FINGERPRINT_FILE or key.startswith("<"):
            continue
        rel = PYPROJECT if key == TOOL_DUN else key
        if rel not in blobs and key not in existed:  # the agent added it
            if os.path.lexists(root / rel):
                remove_inside(root, rel)
                reverted.append(rel)
            continue
        shown = git(root, "cat-file", "blob", blobs[rel], check=False) if rel in blobs else \
            git(root, "show", f"{head}:{rel}", check=False) if head else None
        if shown is not None and shown.returncode == 0:
            write_inside(root, rel, shown.stdout)  # never through a link (UnsafePathError names it)
            reverted.append(rel)
    return reverted


def tests_removed(root: Path, tree_before: str | None, tree_after: str | None, newly_passing: list[str],
                  ) -> list[Discrepancy]:
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
    return [Discrepancy("tests_removed", detail, deleted=deleted, count_before=counts[0], count_after=counts[1])]


def _test_count(root: Path, tree: str) -> int:
    proc = git(root, "grep", "-c", "-E", TEST_PATTERN, tree, "--", *TEST_GLOBS, check=False)
    return sum(int(line.rsplit(":", 1)[1]) for line in proc.stdout.decode("utf-8", "replace").splitlines()
               if line.rsplit(":", 1)[-1].isdigit())
