"""The validated config, cached: reading `.dun/config.yaml` needs ruamel.yaml, whose import alone is a tenth of
`dun check`'s fixed cost.

The key holds the stamps (`dun.core.cache.stamp`) of both places a config can live (`.dun/config.yaml`,
`pyproject.toml`), the config sections plugins declare, the loader's own source, the environment and dun's
version. Files written within the racy window are not cached; invalid configs never are, so their errors show
on every run.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from dun import __version__
from dun.config import loader
from dun.config.loader import CONFIG_FIELDS, Config, load_config
from dun.config.schema import Field
from dun.core.cache import any_racy, stamp
from dun.core.cache.file import CacheFile
from dun.core.cache.session import Caches
from dun.core.cachedir import cache_dir_path, stable_env
from dun.core.digest import sha256


def cached_config(root: Path, extra_fields: dict[str, Field], caches: Caches | None = None) -> Config:
    """`load_config(root, extra_fields)`, from the cache when nothing it reads changed."""
    caches = caches or Caches()
    looks = [(str(p), stamp(p)) for p in (loader.config_path(root), root / "pyproject.toml", Path(loader.__file__))]
    for path, st in looks:
        caches.record(path, st)
    key = sha256(repr([__version__, sorted(repr(f) for f in extra_fields.items()), stable_env(), looks])
                 .encode()).hexdigest()
    store = CacheFile(Path(cache_dir_path(str(root))) / "config.marshal", "config")
    hit = store.load(_accept) if caches.read else None
    if hit is not None and hit[0] == key:
        return Config(values=hit[1], source=hit[2], fields={**CONFIG_FIELDS, **extra_fields})
    config = load_config(root, extra_fields)
    if not any_racy(looks[:2]):
        try:  # plain values (ruamel's own mapping types are not marshal's)
            plain = json.loads(json.dumps([config.values, config.source]))
        except (TypeError, ValueError):
            return config  # a value JSON cannot hold: load it every time
        store.store((key, plain[0], plain[1]))
    return config


def _accept(payload: Any) -> tuple[str, dict[str, Any], Any]:
    key, values, source = payload
    if not isinstance(key, str) or not isinstance(values, dict):
        raise TypeError("another shape")
    if not isinstance(values["secrets"]["patterns"], list):  # a stored config without it is of another layout
        raise TypeError("another shape")
    return key, values, source
