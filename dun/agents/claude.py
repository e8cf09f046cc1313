"""`claude`: Claude Code in print mode, JSON result (stream-json with `agent.live`)."""

from __future__ import annotations

import json
from pathlib import Path

from dun.agents.base import AgentAdapter, AgentRequest, Invocation, binary
from dun.core.atomic import write_text_atomic
from dun.engine.hookspecs import hookimpl

GUARDED_TOOLS = "Bash|Write|Edit|MultiEdit|NotebookEdit"


def guard_settings(req: AgentRequest) -> Path | None:
    """A settings file wiring `dun guard` in as the PreToolUse hook for this run, without touching the user's."""
    if req.guard_command is None or req.state_dir is None:
        return None
    settings = {"hooks": {"PreToolUse": [{"matcher": GUARDED_TOOLS,
                                          "hooks": [{"type": "command", "command": req.guard_command}]}]}}
    path = req.state_dir / "guard-settings.json"
    write_text_atomic(path, json.dumps(settings, indent=2) + "\n")
    return path


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
    settings = guard_settings(req)
    if settings is not None:
        argv += ["--settings", str(settings)]
    if cfg.get("skip_permissions"):
        argv.append("--dangerously-skip-permissions")
    argv += list(cfg.get("extra_args") or [])
    return Invocation(argv=argv, redact=[req.prompt])


@hookimpl
def dun_agents() -> list[AgentAdapter]:
    return [AgentAdapter("claude", "Claude Code: claude -p --output-format json", build)]
