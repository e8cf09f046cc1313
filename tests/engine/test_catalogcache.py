"""The catalog cache: a second load comes from it, and a manifest, config or plugin change loads afresh.

The cache is observed by planting a marker in its file: a load that returns the marker came from the cache."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from conftest import write

from dun.core.cache.file import CacheFile
from dun.core.cachedir import cache_dir_path
from dun.core.errors import ConfigError
from dun.engine.catalog import Catalog, load_catalog
from dun.engine.checkapi import CheckContext, CheckSpec, CheckType
from dun.engine.hookspecs import hookimpl
from dun.engine.manager import make_manager
from dun.engine.model import Outcome, Status
from dun.engine.session import open_session

MANIFEST = "id: mine\nchecks:\n  - {id: ok, type: command, command: 'true', description: real}\n"
OLD_NS = 1_000_000_000  # far outside the racy window


class ExtraType:
    @hookimpl
    def dun_check_types(self) -> list[CheckType]:
        def run(spec: CheckSpec, ctx: CheckContext) -> Outcome:
            return Outcome(Status.PASS, "ok")

        return [CheckType("extra", "a plugin's type", {}, run)]


def old(path: Path) -> None:
    os.utime(path, ns=(OLD_NS, OLD_NS))


def load(repo: Path, *plugins: object) -> Catalog:
    session = open_session(repo)
    return load_catalog(repo, make_manager(entry_points=False, extra=plugins), session.config)


def plant(repo: Path) -> None:
    """Mark the cached description, so a load from the cache shows it."""
    store = CacheFile(Path(cache_dir_path(str(repo))) / "catalog.marshal", "catalog")
    key, active, disabled = store.load()
    for manifest in active:
        for check in manifest["checks"]:
            if check["id"] == "ok":
                check["description"] = "from the cache"
    store.store((key, active, disabled))


def description(catalog: Catalog) -> str:
    found = catalog.find("ok")
    assert found is not None
    return found.description


@pytest.fixture
def mine(repo: Path) -> Path:
    old(write(repo, ".dun/plugins/mine.yaml", MANIFEST))
    load(repo)
    plant(repo)
    return repo


def test_a_second_load_comes_from_the_cache(mine: Path) -> None:
    assert description(load(mine)) == "from the cache"


def test_no_cache_loads_the_manifests(mine: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DUN_NO_CACHE", "1")
    assert description(load(mine)) == "real"


def test_a_changed_manifest_is_loaded_afresh(mine: Path) -> None:
    old(write(mine, ".dun/plugins/mine.yaml", MANIFEST.replace("real", "edited")))
    assert description(load(mine)) == "edited"


def test_a_new_manifest_a_config_change_or_a_new_check_type_loads_afresh(mine: Path) -> None:
    old(write(mine, ".dun/plugins/more.yaml", "id: more\nchecks:\n  - {id: more, type: command, command: 'true'}\n"))
    assert description(load(mine)) == "real"
    plant(mine)
    write(mine, ".dun/config.yaml", "check: {timeout_s: 12}\n")
    assert description(load(mine)) == "real"
    plant(mine)
    assert description(load(mine, ExtraType())) == "real"


def test_a_fresh_manifest_is_not_cached(repo: Path) -> None:
    write(repo, ".dun/plugins/mine.yaml", MANIFEST)  # just written: a same-size rewrite could keep its stamp
    load(repo)
    assert not (Path(cache_dir_path(str(repo))) / "catalog.marshal").exists()


def test_errors_are_reported_on_every_load(mine: Path) -> None:
    old(write(mine, ".dun/plugins/bad.yaml", "id: bad\nchecks:\n  - {id: x, type: nosuch}\n"))
    for _ in range(2):
        with pytest.raises(ConfigError, match="unknown check type"):
            load(mine)
