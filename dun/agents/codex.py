"""`codex`: Codex CLI `exec --json` (JSONL events; tokens only, priced by the configured rates)."""

from __future__ import annotations

from dun.agents.base import AgentAdapter, AgentRequest, Invocation, binary
from dun.engine.hookspecs import hookimpl


def build(req: AgentRequest) -> Invocation:
    cfg = req.config
    argv = [*binary(cfg, "codex"), "exec", "--json", "--skip-git-repo-check"]
    if cfg.get("model"):
        argv += ["--model", str(cfg["model"])]
    argv += ["--dangerously-bypass-approvals-and-sandbox"] if cfg.get("skip_permissions") else ["--full-auto"]
    argv += [*(cfg.get("extra_args") or []), req.prompt]
    return Invocation(argv=argv, redact=[req.prompt])  # stdin stays closed: codex reads it otherwise


@hookimpl
def dun_agents() -> list[AgentAdapter]:
    return [AgentAdapter("codex", "Codex CLI: codex exec --json", build)]
