"""`gemini`: Gemini CLI with `--output-format json`."""

from __future__ import annotations

from dun.agents.base import AgentAdapter, AgentRequest, Invocation, binary
from dun.engine.hookspecs import hookimpl


def build(req: AgentRequest) -> Invocation:
    cfg = req.config
    argv = [*binary(cfg, "gemini"), "-p", req.prompt, "--output-format", "json"]
    if cfg.get("model"):
        argv += ["--model", str(cfg["model"])]
    if cfg.get("skip_permissions"):
        argv += ["--approval-mode", "yolo"]
    argv += list(cfg.get("extra_args") or [])
    return Invocation(argv=argv, redact=[req.prompt])


@hookimpl
def dun_agents() -> list[AgentAdapter]:
    return [AgentAdapter("gemini", "Gemini CLI: gemini -p --output-format json", build)]
