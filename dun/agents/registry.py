"""The agent adapters the plugins declare (`dun_agents`), by name."""

from __future__ import annotations

from typing import cast

import pluggy

from dun.agents.base import AgentAdapter
from dun.core.errors import ConfigError
from dun.engine.manager import owner


def agent_adapters(pm: pluggy.PluginManager) -> dict[str, AgentAdapter]:
    found: dict[str, AgentAdapter] = {}
    for impl in reversed(pm.hook.dun_agents.get_hookimpls()):
        for adapter in cast(list[AgentAdapter], impl.function() or []):
            if adapter.name in found:
                raise ConfigError(f"agent '{adapter.name}' is declared twice (second by {owner(pm, impl.plugin)})")
            found[adapter.name] = adapter
    return found
