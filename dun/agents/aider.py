"""`aider`: aider with the prompt in a message file; plain text output (the status block is read from it)."""

from __future__ import annotations

from dun.agents.base import AgentAdapter, AgentRequest, Invocation, binary
from dun.engine.hookspecs import hookimpl


def build(req: AgentRequest) -> Invocation:
    cfg = req.config
    argv = [*binary(cfg, "aider"), "--message-file", str(req.prompt_file), "--yes", "--no-pretty"]
    if cfg.get("model"):
        argv += ["--model", str(cfg["model"])]
    argv += list(cfg.get("extra_args") or [])
    return Invocation(argv=argv)


@hookimpl
def dun_agents() -> list[AgentAdapter]:
    return [AgentAdapter("aider", "aider --message-file --yes", build)]
