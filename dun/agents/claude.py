"""`claude`: Claude Code in print mode, JSON result (stream-json with `agent.live`)."""

from __future__ import annotations

from dun.agents.base import AgentAdapter, AgentRequest, Invocation, binary
from dun.engine.hookspecs import hookimpl


def build(req: AgentRequest) -> Invocation:
    cfg = req.config
    argv = [*binary(cfg, "claude"), "-p", req.prompt]
    argv += ["--output-format", "stream-json", "--verbose"] if cfg.get("live") else ["--output-format", "json"]
    if cfg.get("model"):
        argv += ["--model", str(cfg["model"])]
    if cfg.get("allowed_tools"):
        argv += ["--allowedTools", *cfg["allowed_tools"]]
    if req.budget_usd:
        argv += ["--max-budget-usd", f"{req.budget_usd:g}"]
    if req.settings_file is not None:
        argv += ["--settings", str(req.settings_file)]  # the guard hook, without touching the user's settings
    if cfg.get("skip_permissions"):
        argv.append("--dangerously-skip-permissions")
    argv += list(cfg.get("extra_args") or [])
    return Invocation(argv=argv, redact=[req.prompt])


@hookimpl
def dun_agents() -> list[AgentAdapter]:
    return [AgentAdapter("claude", "Claude Code: claude -p --output-format json", build)]
