"""The validated config, cached: reading `.dun/config.yaml` needs ruamel.yaml, whose import alone is a tenth of
`dun check`'s fixed cost.

The key holds the stamps (size, mtime, inode) of both places a config can live (`.dun/config.yaml`,
`pyproject.toml`), the config sections plugins declare, the loader's own source, the environment and dun's
version. Files written within the racy window are not cached; invalid configs never are, so their errors show
on every run.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from dun import __version__
from dun.config import loader
from dun.config.loader import CONFIG_FIELDS, Config, load_config
from dun.config.schema import Field
from dun.core.digest import sha256
from dun.engine.cache import RACY_WINDOW_NS, cache_dir, stable_env, watch

CONFIG_CACHE_VERSION = 1


def cached_config(root: Path, extra_fields: dict[str, Field]) -> Config:
    """`load_config(root, extra_fields)`, from the cache when nothing it reads changed."""
    if os.environ.get("DUN_NO_CACHE", "") not in ("", "0"):
        return load_config(root, extra_fields)
    key, storable = _key(root, extra_fields)
    path = cache_dir(root) / "config.json"
    try:
        data = json.loads(path.read_text("utf-8"))
        if data["key"] == key:
            from dun.core.redact import configure

            configure(data["values"]["secrets"]["patterns"])  # as load_config does: every record is redacted
            return Config(values=data["values"], source=data["source"], fields={**CONFIG_FIELDS, **extra_fields})
    except (OSError, ValueError, KeyError, TypeError):
        pass  # missing, corrupt or stale: load it
    config = load_config(root, extra_fields)
    if storable:
        try:
            from dun.core.atomic import write_text_atomic

            write_text_atomic(path, json.dumps({"key": key, "values": config.values, "source": config.source}))
        except (OSError, TypeError, ValueError):
            pass  # unwritable, or a value JSON cannot hold: load it every time
    return config


def _key(root: Path, extra_fields: dict[str, Field]) -> tuple[str, bool]:
    parts: list[Any] = [CONFIG_CACHE_VERSION, __version__, sorted(repr(f) for f in extra_fields.items()),
                        stable_env()]
    newest = 0
    for path in (loader.config_path(root), root / "pyproject.toml", Path(loader.__file__)):
        try:
            st = os.stat(path)
        except OSError:
            parts.append([str(path), None])
            watch(str(path), None)
            continue
        parts.append([str(path), st.st_size, st.st_mtime_ns, st.st_ino])
        watch(str(path), [st.st_size, st.st_mtime_ns, st.st_ino])
        if path.name != "loader.py":
            newest = max(newest, st.st_mtime_ns)
    digest = sha256(json.dumps(parts).encode()).hexdigest()
    return digest, time.time_ns() - newest >= RACY_WINDOW_NS
