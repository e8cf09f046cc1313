"""The config cache gives exactly what loading gives, and reloads when a config file changes."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from conftest import write

from dun.config.loader import load_config
from dun.core.cachedir import cache_dir_path
from dun.core.errors import ConfigError
from dun.engine.configcache import cached_config

OLD_NS = 1_000_000_000


def test_a_cached_config_equals_a_loaded_one(repo: Path) -> None:
    path = write(repo, ".dun/config.yaml", "check: {timeout_s: 12}\n")
    os.utime(path, ns=(OLD_NS, OLD_NS))
    first = cached_config(repo, {})
    assert (Path(cache_dir_path(str(repo))) / "config.marshal").exists()
    assert cached_config(repo, {}) == first == load_config(repo, {})


def test_a_changed_config_is_read_again(repo: Path) -> None:
    path = write(repo, ".dun/config.yaml", "check: {timeout_s: 12}\n")
    os.utime(path, ns=(OLD_NS, OLD_NS))
    cached_config(repo, {})
    write(repo, ".dun/config.yaml", "check: {timeout_s: 13}\n")
    assert cached_config(repo, {}).get("check.timeout_s") == 13
    write(repo, ".dun/config.yaml", "check: {timeout_s: -1}\n")
    for _ in range(2):  # errors are never cached
        with pytest.raises(ConfigError):
            cached_config(repo, {})


def test_a_cached_config_still_redacts_the_secret_patterns(repo: Path) -> None:
    """`secrets.patterns` redact every record a run writes: a config read from the cache redacts them too."""
    path = write(repo, ".dun/config.yaml", "secrets: {patterns: ['CORP-[0-9]{6}']}\n")
    os.utime(path, ns=(OLD_NS, OLD_NS))
    fresh = cached_config(repo, {})
    cached = cached_config(repo, {})
    for config in (fresh, cached):
        assert config.redactor.redact("ticket CORP-123456") == "ticket <redacted:secret>"
