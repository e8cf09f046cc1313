"""Every manifest that applies to a repository, layered: built-in < Python plugins < user < repo."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pluggy

from dun.config.loader import Config
from dun.core.cache.session import Caches
from dun.core.errors import ConfigError
from dun.core.resources import data_dir, user_config_dir
from dun.engine.checkapi import CheckSpec, CheckType
from dun.engine.manager import check_types
from dun.engine.manifest import Manifest, load_manifest, manifest_files
from dun.store import layout


@dataclass
class Catalog:
    """Every active manifest's checks, the check types, and the manifests that are disabled."""

    manifests: list[Manifest]
    types: dict[str, CheckType]
    disabled: list[Manifest] = field(default_factory=list)

    @property
    def checks(self) -> list[CheckSpec]:
        return sorted((c for m in self.manifests for c in m.checks), key=lambda c: c.sort_key)

    def manifest(self, plugin_id: str) -> Manifest:
        return next(m for m in self.manifests if m.id == plugin_id)

    def find(self, check_id: str) -> CheckSpec | None:
        return next((c for c in self.checks if c.id == check_id), None)


def layers(root: Path, pm: pluggy.PluginManager, config: Config) -> list[tuple[str, Path]]:
    """(origin, directory) in load order; later layers override earlier ones by manifest id."""
    out: list[tuple[str, Path]] = [("builtin", data_dir("plugins"))]
    for dirs in pm.hook.dun_manifest_dirs(root=root):
        out.extend(("plugin", Path(d)) for d in dirs)
    out.append(("user", user_config_dir() / "plugins"))
    out.append(("repo", layout.plugins_dir(root)))
    out.extend(("repo", root / d) for d in config.get("plugins.dirs"))
    return out


def load_catalog(root: Path, pm: pluggy.PluginManager, config: Config, caches: Caches | None = None) -> Catalog:
    """The catalog, from the cache when no manifest, check type, config key or dun itself changed since."""
    from dun.engine import catalogcache

    caches = caches or Caches()
    types = check_types(pm)
    timeout = float(config.get("check.timeout_s"))
    found = layers(root, pm, config)
    disabled_ids = sorted(set(config.get("plugins.disabled")))
    key, storable = catalogcache.fingerprint(found, types, [timeout, disabled_ids], caches)
    cached = catalogcache.load(root, key) if caches.read else None
    if cached is not None:
        catalog = Catalog(manifests=cached[0], types=types, disabled=cached[1])
    else:
        catalog = _load(found, types, timeout, set(disabled_ids))
        if storable:
            catalogcache.save(root, key, catalog.manifests, catalog.disabled)
    overrides = config.get("check.overrides")
    if overrides:
        _override(catalog, overrides, config.source)
    _covered(catalog)
    return catalog


def _covered(catalog: Catalog) -> None:
    """Give the `test-suites` check the directories the user's own checks run in (`cwd: backend`): a project there
    has its check, and warning about it would be a false alarm. In its options, so a result is reused only while
    they are the same."""
    cwds = sorted({str(c.options["cwd"]).strip("/").removeprefix("./") for c in catalog.checks
                   if c.type == "command" and str(c.options.get("cwd") or ".").strip("/") not in (".", "")})
    for check in catalog.checks:
        if check.type == "test-suites":
            check.options["covered"] = cwds


def _override(catalog: Catalog, overrides: dict[str, dict[str, Any]], source: str) -> None:
    """`check.overrides` of the config: each named check gets the `inputs:` given added to its own (a built-in
    pytest whose tests read a file under $HOME), and the `ttl:` or `flaky:` given. A check of a disabled plugin is
    left alone; an id no plugin defines is an error (a typo would leave the result reused on too few inputs)."""
    from dun.config.schema import did_you_mean

    checks = {c.id: c for m in catalog.manifests for c in m.checks}
    disabled = {c.id for m in catalog.disabled for c in m.checks}
    unknown = [cid for cid in overrides if cid not in checks and cid not in disabled]
    if unknown:
        raise ConfigError([f"{source}: check.overrides.{cid}: no loaded plugin has a check '{cid}'"
                           f"{did_you_mean(cid, list(checks))}" for cid in unknown])
    for cid, given in overrides.items():
        check = checks.get(cid)
        if check is None:
            continue
        if given.get("inputs") is not None:
            merged: dict[str, object] = dict(check.inputs or {})
            for kind, values in given["inputs"].items():
                before = merged.get(kind)
                merged[kind] = list(dict.fromkeys([*(before if isinstance(before, list) else []), *values]))
            check.inputs = merged
        if given.get("ttl") is not None:
            check.ttl = float(given["ttl"])
        if given.get("flaky") is not None:
            check.flaky = bool(given["flaky"])


def _load(found: list[tuple[str, Path]], types: dict[str, CheckType], timeout: float,
          disabled_ids: set[str]) -> Catalog:
    by_id: dict[str, Manifest] = {}
    errors: list[str] = []
    for origin, directory in found:
        for path in manifest_files(directory):
            try:
                manifest = load_manifest(path, types, timeout, origin)
            except ConfigError as exc:
                errors.extend(exc.errors)
                continue
            previous = by_id.get(manifest.id)
            if previous is not None:
                manifest.overrides = [*previous.overrides, previous.source]
            by_id[manifest.id] = manifest
    if errors:
        raise ConfigError(errors)
    active = [m for m in by_id.values() if m.id not in disabled_ids]
    catalog = Catalog(manifests=active, types=types, disabled=[m for m in by_id.values() if m.id in disabled_ids])
    _cross_check(catalog)
    return catalog


def _cross_check(catalog: Catalog) -> None:
    """Check ids are unique across plugins, `after` names real checks, and there are no cycles."""
    errors: list[str] = []
    owner: dict[str, CheckSpec] = {}
    for manifest in catalog.manifests:
        for check in manifest.checks:
            if check.id in owner:
                errors.append(f"{check.source}: checks.id: duplicate check id '{check.id}' "
                              f"(also defined at {owner[check.id].source})")
            else:
                owner[check.id] = check
    for check in owner.values():
        for dep in check.after:
            if dep not in owner:
                errors.append(f"{check.source}: after: unknown check '{dep}'")
    if not errors:
        errors.extend(_cycles(owner))
    if errors:
        raise ConfigError(errors)


def _cycles(checks: dict[str, CheckSpec]) -> list[str]:
    state: dict[str, int] = {}  # 1 visiting, 2 done

    def visit(cid: str, trail: list[str]) -> str | None:
        if state.get(cid) == 2:
            return None
        if state.get(cid) == 1:
            return " -> ".join([*trail[trail.index(cid):], cid])
        state[cid] = 1
        for dep in checks[cid].after:
            found = visit(dep, [*trail, cid])
            if found:
                return found
        state[cid] = 2
        return None

    for cid in checks:
        cycle = visit(cid, [])
        if cycle:
            return [f"{checks[cid].source}: after: dependency cycle {cycle}"]
    return []
