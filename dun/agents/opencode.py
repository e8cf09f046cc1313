"""`opencode`: OpenCode `run --format json`."""

from __future__ import annotations

from dun.agents.base import AgentAdapter, AgentRequest, Invocation, binary
from dun.engine.hookspecs import hookimpl


def build(req: AgentRequest) -> Invocation:
    cfg = req.config
    argv = [*binary(cfg, "opencode"), "run", "--format", "json"]
    if cfg.get("model"):
        argv += ["--model", str(cfg["model"])]
    argv += [*(cfg.get("extra_args") or []), req.prompt]
    return Invocation(argv=argv, redact=[req.prompt])


@hookimpl
def dun_agents() -> list[AgentAdapter]:
    return [AgentAdapter("opencode", "OpenCode: opencode run --format json", build)]
