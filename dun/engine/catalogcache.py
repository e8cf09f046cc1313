"""The validated catalog, cached: parsing and validating the YAML manifests is most of `dun check`'s fixed cost.

The key holds everything the catalog is made from: each layer's directory and the name, size, mtime and inode
of every manifest in it, the check types with the files that define them, the default timeout, the disabled
plugins and dun's version. Any manifest, config or plugin change gives another key; manifests written within
the racy window are not cached, since a same-size rewrite could keep the stamp. Invalid catalogs are never
cached, so their errors are reported on every run. The file is written atomically: concurrent runs at worst
redo the work.
"""

from __future__ import annotations

import dataclasses
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from dun import __version__
from dun.core.cachedir import stamp
from dun.core.digest import sha256
from dun.engine.cache import RACY_WINDOW_NS, cache_dir, watch
from dun.engine.checkapi import CheckSpec, CheckType
from dun.engine.manifest import Manifest

CATALOG_VERSION = 1


def enabled() -> bool:
    return os.environ.get("DUN_NO_CACHE", "") in ("", "0")


def fingerprint(layers: list[tuple[str, Path]], types: dict[str, CheckType], extra: Any) -> tuple[str, bool]:
    """The key, and whether every manifest is old enough to be cached."""
    newest = 0
    parts: list[Any] = [CATALOG_VERSION, __version__, extra]
    for origin, directory in layers:
        watch(str(directory), stamp(str(directory)))  # a manifest added or removed changes the directory
        try:
            names = sorted(os.listdir(directory))
        except OSError:
            parts.append([origin, str(directory), None])
            continue
        files = []
        for name in names:
            if name.endswith((".yaml", ".yml")):
                path = os.path.join(directory, name)
                st = _stat(path)
                watch(path, None if st is None else [st.st_size, st.st_mtime_ns, st.st_ino])
                if st is None:
                    continue
                files.append([name, st.st_size, st.st_mtime_ns, st.st_ino])
                newest = max(newest, st.st_mtime_ns)
        parts.append([origin, str(directory), files])
    for name in sorted(types):
        module = sys.modules.get(getattr(types[name].run, "__module__", ""))
        source = getattr(module, "__file__", None) or ""
        st = _stat(source)
        watch(source, None if st is None else [st.st_size, st.st_mtime_ns, st.st_ino])
        parts.append([name, source] if st is None else [name, source, st.st_size, st.st_mtime_ns])
    digest = sha256(json.dumps(parts, default=repr).encode()).hexdigest()
    return digest, time.time_ns() - newest >= RACY_WINDOW_NS


def _stat(path: str) -> os.stat_result | None:
    try:
        return os.stat(path)
    except OSError:
        return None


def load(root: Path, key: str) -> tuple[list[Manifest], list[Manifest]] | None:
    """(active, disabled) manifests stored under `key`, or None."""
    try:
        data = json.loads((cache_dir(root) / "catalog.json").read_text("utf-8"))
        if data.get("key") != key:
            return None
        return [_manifest(m) for m in data["active"]], [_manifest(m) for m in data["disabled"]]
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None  # missing, corrupt or from another layout: load the manifests


def save(root: Path, key: str, active: list[Manifest], disabled: list[Manifest]) -> None:
    try:
        text = json.dumps({"key": key, "active": [dataclasses.asdict(m) for m in active],
                           "disabled": [dataclasses.asdict(m) for m in disabled]}, separators=(",", ":"))
    except (TypeError, ValueError):
        return  # a plugin's option value JSON cannot hold: load the manifests every time
    try:
        from dun.core.atomic import write_text_atomic

        write_text_atomic(cache_dir(root) / "catalog.json", text)
    except OSError:
        pass  # a read-only or full cache directory must never fail a check


def _manifest(data: dict[str, Any]) -> Manifest:
    checks = [CheckSpec(**c) for c in data.pop("checks")]
    return Manifest(**data, checks=checks)
