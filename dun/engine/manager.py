"""Build a fresh PluginManager per invocation: built-ins first, then the `dun` entry points."""

from __future__ import annotations

import functools
import importlib
import os
import sys
import types
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, cast

import pluggy

from dun.core.cache.session import Caches
from dun.core.digest import sha256
from dun.core.errors import ConfigError
from dun.engine import hookspecs
from dun.engine.checkapi import CheckType
from dun.engine.hookspecs import hookimpl

# Built-in plugins, registered through the same manager as third-party ones.
BUILTIN_MODULES = (
    "dun.checks.command",
    "dun.checks.files",
    "dun.checks.gates",
    "dun.checks.git_status",
    "dun.checks.coverage",
    "dun.checks.checkboxes",
    "dun.checks.hooks",
    "dun.checks.suites",
    "dun.papers.plugin",  # the paper watch: a plugin that ships with dun (dun/papers/)
)
# The built-in output formats, each module's one format by name: registered without importing the module, which
# loads when its format renders (a run renders one format; importing all five was a tenth of the engine's imports).
# Each module's own `dun_output_formats` stays the one source of its formatter (tests/engine/test_manager.py).
OUTPUT_MODULES = {
    "dun.output.text": "text",
    "dun.output.jsonfmt": "json",
    "dun.output.llm": "llm",
    "dun.output.junit": "junit",
    "dun.output.github": "github",
}
# Only the commands that run or describe agents need these (importing them is a fifth of `dun check`'s fixed cost).
AGENT_MODULES = (
    "dun.agents.claude",
    "dun.agents.codex",
    "dun.agents.gemini",
    "dun.agents.opencode",
    "dun.agents.aider",
    "dun.agents.pi",
    "dun.agents.command",
)
ENTRY_POINT_GROUP = "dun"


def make_manager(entry_points: bool = True, extra: tuple[object, ...] = (), agents: bool = True,
                 caches: Caches | None = None) -> pluggy.PluginManager:
    pm = pluggy.PluginManager("dun")
    pm.add_hookspecs(hookspecs)
    for name in BUILTIN_MODULES + (AGENT_MODULES if agents else ()):
        pm.register(_Hooks(importlib.import_module(name)), name=f"builtin:{name.removeprefix('dun.')}")
    for name, fmt in OUTPUT_MODULES.items():
        pm.register(_format_hooks(name, fmt), name=f"builtin:{name.removeprefix('dun.')}")
    for plugin in extra:
        pm.register(plugin)
    if entry_points and _may_have_entry_points(caches):
        try:
            pm.load_setuptools_entrypoints(ENTRY_POINT_GROUP)
        except Exception as exc:  # a broken third-party plugin must not become a traceback
            raise ConfigError(f"a plugin in entry-point group '{ENTRY_POINT_GROUP}' failed to load: {exc}") from None
    try:
        pm.check_pending()
    except pluggy.PluginValidationError as exc:
        raise ConfigError(f"plugin {exc.plugin!r}: {exc}") from None
    return pm


class _Hooks:
    """A built-in module as pluggy sees it: just its `dun_` hook functions. pluggy inspects every attribute of a
    plugin statically; a module's imports made that a third of building the manager for twelve modules."""

    def __init__(self, module: Any) -> None:
        self.__name__ = module.__name__
        self.__dict__.update({k: v for k, v in vars(module).items() if k.startswith("dun_") and callable(v)})

    def __dir__(self) -> list[str]:
        return [k for k in self.__dict__ if k.startswith("dun_")]

    def __repr__(self) -> str:
        return f"<dun built-in {self.__name__}>"


def _format_hooks(module: str, fmt: str) -> _Hooks:
    """A built-in output module as pluggy sees it before it is imported: its one format, which imports the module
    and renders through the module's own formatter when called."""

    @hookimpl
    def dun_output_formats() -> dict[str, Callable[..., str]]:
        return {fmt: functools.partial(_render, module, fmt)}

    return _Hooks(types.SimpleNamespace(__name__=module, dun_output_formats=dun_output_formats))


def _render(module: str, fmt: str, *args: Any) -> str:
    formatter: Callable[..., str] = importlib.import_module(module).dun_output_formats()[fmt]
    return formatter(*args)


def _may_have_entry_points(caches: Caches | None = None) -> bool:
    """False only when an earlier scan of this very import path found no `dun` entry point (importlib.metadata
    reads every installed distribution: a tenth of `dun check`'s fixed cost). Installing or removing a
    distribution changes its directory's stamp, hence the key."""
    from dun.core.cache import any_racy, stamp
    from dun.core.cache.file import CacheFile
    from dun.core.cachedir import cache_base_path

    caches = caches or Caches()
    looks: list[tuple[str, object]] = []
    for entry in sys.path:
        path = os.path.abspath(entry or ".")
        looks.append((path, stamp(path)))
        caches.record(path, looks[-1][1])
    key = sha256(repr([sys.executable, looks]).encode()).hexdigest()
    store = CacheFile(os.path.join(cache_base_path(), f"entry-points-{key[:16]}.marshal"), "entry-points")
    if caches.read and store.load() == (key, False):
        return False
    import importlib.metadata

    found = any(ep.group == ENTRY_POINT_GROUP for dist in importlib.metadata.distributions()
                for ep in dist.entry_points)
    if not any_racy(looks):
        store.store((key, found))
    return found


def owner(pm: pluggy.PluginManager, impl_plugin: object) -> str:
    return pm.get_name(impl_plugin) or repr(impl_plugin)


def check_types(pm: pluggy.PluginManager) -> dict[str, CheckType]:
    found: dict[str, CheckType] = {}
    owners: dict[str, str] = {}
    for impl in reversed(pm.hook.dun_check_types.get_hookimpls()):
        declared = cast(list[CheckType], impl.function() or [])
        for ctype in declared:
            who = owner(pm, impl.plugin)
            if ctype.name in found:
                raise ConfigError(f"check type '{ctype.name}' is declared by both {owners[ctype.name]} and {who}")
            found[ctype.name] = ctype
            owners[ctype.name] = who
    return found


def merged_mapping(pm: pluggy.PluginManager, hook_name: str, what: str) -> dict[str, Any]:
    """Merge the dict results of a hook, refusing a key declared by two plugins."""
    found: dict[str, object] = {}
    owners: dict[str, str] = {}
    for impl in reversed(getattr(pm.hook, hook_name).get_hookimpls()):
        declared = cast(dict[str, object], impl.function() or {})
        for key, value in declared.items():
            who = owner(pm, impl.plugin)
            if key in found:
                raise ConfigError(f"{what} '{key}' is declared by both {owners[key]} and {who}")
            found[key] = value
            owners[key] = who
    return found


@dataclass
class PluginInfo:
    """A registered plugin as `dun plugins list` shows it."""

    name: str
    source: str
    hooks: list[str]

    def to_dict(self) -> dict[str, object]:
        return {"name": self.name, "source": self.source, "hooks": self.hooks}


def describe(pm: pluggy.PluginManager) -> list[PluginInfo]:
    dists = {id(plugin): dist for plugin, dist in pm.list_plugin_distinfo()}
    out = []
    for name, plugin in pm.list_name_plugin():
        if plugin is None:
            continue
        dist = dists.get(id(plugin))
        if dist is not None:
            source = f"entry point ({dist.project_name} {dist.version})"
        elif name.startswith("builtin:"):
            source = "builtin"
        else:
            source = "registered"
        hooks = sorted(caller.name for caller in (pm.get_hookcallers(plugin) or []))
        out.append(PluginInfo(name=name, source=source, hooks=hooks))
    return sorted(out, key=lambda p: (p.source != "builtin", p.name))
