"""The one plugin surface of dun. Every hook is prefixed `dun_`.

Plugins are modules or objects registered with a pluggy PluginManager made fresh for each command.
Built-in check types and output formats are registered exactly like third-party plugins, which come
from the `dun` entry-point group.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pluggy

if TYPE_CHECKING:
    from pathlib import Path

    import click

    from dun.agents.base import AgentAdapter
    from dun.config.schema import Field
    from dun.engine.checkapi import CheckType
    from dun.output.base import Formatter

hookspec = pluggy.HookspecMarker("dun")
hookimpl = pluggy.HookimplMarker("dun")


@hookspec
def dun_check_types() -> list[CheckType]:
    """Declare check types (the `type:` of a manifest check).

    Fires once per invocation, when the plugin manager is built and before any manifest is validated.
    Receives nothing. Returns a list of :class:`dun.engine.checkapi.CheckType`.

    Results from all plugins are concatenated. Two plugins declaring the same type name is a
    configuration error (exit code 2) naming both plugins.
    """


@hookspec
def dun_manifest_dirs(root: Path) -> list[Path]:
    """Name directories of YAML plugin manifests that a Python plugin ships.

    Fires when manifests are collected, for every command that reads them (`check`, `explain`, ...).
    Receives ``root``, the repository root. Returns a list of directories; every ``*.yaml``/``*.yml``
    in them is loaded.

    Results from all plugins are concatenated. These manifests load after dun's built-ins and before
    the user's and the repository's, so a later layer overrides them by manifest ``id``.
    """


@hookspec
def dun_output_formats() -> dict[str, Formatter]:
    """Declare output formats for `--format`.

    Fires when a command renders check results. Receives nothing. Returns a mapping of format name to
    a callable ``(report, options) -> str``; see :mod:`dun.output.base`.

    The mappings from all plugins are merged; a name declared twice is a configuration error.
    """


@hookspec
def dun_agents() -> list[AgentAdapter]:
    """Declare agent adapters for `dun loop --agent NAME`.

    Fires when `dun loop` (or `dun plugins list`) builds the plugin manager's view of agents. Receives nothing.
    Returns a list of :class:`dun.agents.base.AgentAdapter`: a name, a `build(request) -> Invocation` that turns the
    prompt and the `agent:` config into a command line, and a `cost(facts, config)` function.

    Results from all plugins are concatenated; two adapters with the same name are a configuration error.
    """


@hookspec
def dun_config_fields() -> dict[str, Field]:
    """Declare top-level config sections owned by a plugin.

    Fires when the config is loaded. Receives nothing. Returns a mapping of section name to a
    :class:`dun.config.schema.Field` of type ``map``, whose ``fields`` declare each key's type, default and
    description. They are validated like dun's own keys and shown by `dun config show`.

    Mappings from all plugins are merged; a section declared twice is a configuration error.
    """


@hookspec
def dun_commands() -> list[click.Command]:
    """Add commands (or groups of them) to the `dun` command line.

    Fires only when a command name is not one of dun's own, or when `dun --help` lists the commands; `dun check`
    never builds them. Receives nothing. Returns a list of :class:`click.Command` (a :class:`click.Group` for
    `dun NAME SUBCOMMAND`), each called by its ``name``. A command reports failure by raising
    :class:`dun.plugin.ConfigError` or another ``dun.core.errors`` error (one line, exit 2) or by exiting with
    its own code; it should take ``-C PATH`` for the repository, as dun's commands do.

    Results from all plugins are concatenated. A name dun already uses, or one declared by two plugins, is a
    configuration error (exit code 2) naming both.
    """
