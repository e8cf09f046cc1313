"""The validated catalog, cached: parsing and validating the YAML manifests is most of `dun check`'s fixed cost.

The key holds everything the catalog is made from: each layer's directory and the stamp of every manifest in it,
the check types with the files that define them, the default timeout, the disabled plugins and dun's version. Any
manifest, config or plugin change gives another key; manifests written within the racy window are not cached, since
a same-size rewrite could keep the stamp. Invalid catalogs are never cached, so their errors are reported on every
run. The file is written atomically: concurrent runs at worst redo the work.
"""

from __future__ import annotations

import dataclasses
import json
import os
import sys
from pathlib import Path
from typing import Any

from dun import __version__
from dun.core.cache import any_racy, stamp
from dun.core.cache.file import CacheFile
from dun.core.cache.session import Caches
from dun.core.cachedir import cache_dir_path
from dun.core.digest import sha256
from dun.engine.checkapi import CheckSpec, CheckType
from dun.engine.manifest import Manifest


def fingerprint(layers: list[tuple[str, Path]], types: dict[str, CheckType], extra: object,
                caches: Caches | None = None) -> tuple[str, bool]:
    """The key, and whether every manifest is old enough to be cached."""
    caches = caches or Caches()
    parts: list[object] = [__version__, extra]
    manifests: list[tuple[str, object]] = []
    for origin, directory in layers:
        caches.record(str(directory), stamp(directory))  # a manifest added or removed changes the directory
        try:
            names = sorted(os.listdir(directory))
        except OSError:
            parts.append([origin, str(directory), None])
            continue
        files = []
        for name in names:
            if name.endswith((".yaml", ".yml")):
                path = os.path.join(directory, name)
                st = stamp(path)
                caches.record(path, st)
                if st is not None:
                    files.append([name, st])
                    manifests.append((path, st))
        parts.append([origin, str(directory), files])
    for name in sorted(types):
        module = sys.modules.get(getattr(types[name].run, "__module__", ""))
        source = getattr(module, "__file__", None) or ""
        st = stamp(source)
        caches.record(source, st)
        parts.append([name, source, st])
    digest = sha256(repr(parts).encode()).hexdigest()
    return digest, not any_racy(manifests)


def load(root: Path, key: str) -> tuple[list[Manifest], list[Manifest]] | None:
    """(active, disabled) manifests stored under `key`, or None."""
    def accept(payload: Any) -> tuple[list[Manifest], list[Manifest]] | None:
        if payload[0] != key:
            return None
        return [_manifest(m) for m in payload[1]], [_manifest(m) for m in payload[2]]

    found: tuple[list[Manifest], list[Manifest]] | None = _file(root).load(accept)
    return found


def save(root: Path, key: str, active: list[Manifest], disabled: list[Manifest]) -> None:
    try:  # plain values: a manifest's options may hold ruamel's own types, which marshal cannot
        plain = json.loads(json.dumps([[dataclasses.asdict(m) for m in active],
                                       [dataclasses.asdict(m) for m in disabled]]))
    except (TypeError, ValueError):
        return  # a plugin's option value JSON cannot hold: load the manifests every time
    _file(root).store((key, plain[0], plain[1]))


def _file(root: Path) -> CacheFile:
    return CacheFile(Path(cache_dir_path(str(root))) / "catalog.marshal", "catalog")


def _manifest(data: dict[str, Any]) -> Manifest:
    data = dict(data)
    checks = [CheckSpec(**c) for c in data.pop("checks")]
    return Manifest(**data, checks=checks)
