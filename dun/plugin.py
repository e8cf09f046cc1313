"""The public API for plugin authors: everything a third-party plugin imports comes from here.

    from dun.plugin import CheckType, Field, Item, Outcome, Status, hookimpl

A plugin is a module (or object) with `dun_*` hook implementations, registered through the `dun` entry-point group
(`[project.entry-points.dun]`). The hooks are documented in :mod:`dun.engine.hookspecs`; dun's own check types,
output formats and agent adapters are plugins written against this same API. Names not listed in `__all__` are
internal and may change in any release.
"""

from __future__ import annotations

from dun.agents.base import AgentAdapter, AgentRequest, Invocation, reported_cost, token_cost
from dun.config.schema import Field
from dun.core.errors import ConfigError
from dun.engine.checkapi import CheckContext, CheckSpec, CheckType
from dun.engine.hookspecs import hookimpl, hookspec
from dun.engine.model import CheckResult, Item, Level, Outcome, Report, Status
from dun.output.base import FormatOptions, Formatter

__all__ = [
    "AgentAdapter", "AgentRequest", "CheckContext", "CheckResult", "CheckSpec", "CheckType", "ConfigError", "Field",
    "FormatOptions", "Formatter", "Invocation", "Item", "Level", "Outcome", "Report", "Status", "hookimpl",
    "hookspec", "reported_cost", "token_cost",
]
