"""`command`: any command line; the prompt on stdin, in a file ({prompt_file}) or as an argument ({prompt})."""

from __future__ import annotations

from dun.agents.base import AgentAdapter, AgentRequest, Invocation, project_env
from dun.core.errors import ConfigError
from dun.engine.hookspecs import hookimpl


def build(req: AgentRequest) -> Invocation:
    cfg = req.config
    command = list(cfg.command)
    if not command:
        raise ConfigError("agent.command: the `command` agent needs a command line, e.g. [my-agent, --json]")
    via = cfg.prompt_via
    argv = [a.replace("{prompt_file}", str(req.prompt_file)).replace("{prompt}", req.prompt) for a in command]
    argv += list(cfg.extra_args)
    if via == "arg" and not any("{prompt}" in a for a in command):
        argv.append(req.prompt)
    if via == "file" and not any("{prompt_file}" in a for a in command):
        argv.append(str(req.prompt_file))
    return Invocation(argv=argv, stdin_file=req.prompt_file if via == "stdin" else None, env=project_env(req),
                      redact=[req.prompt])


@hookimpl
def dun_agents() -> list[AgentAdapter]:
    return [AgentAdapter("command", "Any command line (agent.command)", build)]
