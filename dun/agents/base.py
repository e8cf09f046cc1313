"""What an agent adapter is: the whole lifecycle of one CLI for one iteration. Its command line and environment
(`build`), any settings file it needs (the guard hook), the shape of its answer (`parse`), how its failures read
(`classify`), and what a call cost (`cost`)."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from dun.agents.limits import AgentError, classify
from dun.agents.prices import priced
from dun.answer.transcript import ParseResult, parse_stream

if TYPE_CHECKING:
    from dun.config.sections import Agent


@dataclass(frozen=True)
class AgentRequest:
    """Everything an adapter needs to build one call."""

    prompt: str
    prompt_file: Path  # the same prompt, written to .dun/logs/iteration-N.prompt.md
    config: Agent  # the `agent:` config section, with CLI overrides applied
    budget_usd: float | None  # per-iteration cap, when there is one
    root: Path
    guard_command: str | None = None  # `dun guard` as a shell command, when the guard is enabled
    state_dir: Path | None = None  # `.dun/cache/`: where an adapter may write settings files for the run
    read_only: bool = False  # a reviewer: the CLI's read-only mode where it has one, never its skip flags
    os_sandboxed: bool = False  # dun runs the CLI in its OS sandbox: a CLI sandbox of its own would nest in it


@dataclass
class Invocation:
    argv: list[str]
    stdin_file: Path | None = None  # fed on stdin; otherwise stdin is closed
    env: dict[str, str] = field(default_factory=dict)
    redact: list[str] = field(default_factory=list)  # argv values never written to logs (the prompt, secrets)


def token_cost(agent: Mapping[str, object], config: Agent) -> float | None:
    """Cost from token counts times the configured rates, for CLIs that report tokens, not dollars."""
    usage = agent.get("usage")
    if not isinstance(usage, dict):
        return None
    rate_in, rate_out = config.input_usd_per_mtok, config.output_usd_per_mtok
    if not rate_in and not rate_out:
        return None
    tokens_in = sum(v for k, v in usage.items() if "input" in k and isinstance(v, int) and not isinstance(v, bool))
    tokens_out = sum(v for k, v in usage.items() if "output" in k and isinstance(v, int) and not isinstance(v, bool))
    return (tokens_in * rate_in + tokens_out * rate_out) / 1_000_000


def reported_cost(agent: Mapping[str, object], config: Agent) -> float | None:
    """The agent's own dollar figure when it gives one, else tokens times rates."""
    if isinstance(agent.get("tokens"), dict):  # normalized by an adapter's parse
        return priced(agent, config, config.model)
    cost = agent.get("cost_usd")
    if isinstance(cost, int | float) and not isinstance(cost, bool):
        return float(cost)
    return token_cost(agent, config)


def project_env(req: AgentRequest) -> dict[str, str]:
    """PWD names the directory the agent runs in: some CLIs (opencode) take their project from $PWD, not from the
    process's working directory."""
    return {"PWD": str(req.root)}


def guard_command() -> str:
    """`dun guard` as a shell command for a CLI's PreToolUse hook: this interpreter, whatever is on PATH."""
    import shlex
    import sys

    return f"{shlex.quote(sys.executable)} -m dun guard"


def binary(config: Agent, default: str) -> list[str]:
    """`agent.command` replaces the adapter's default binary (a wrapper, a pinned install)."""
    command = config.command
    return list(command) if command else [default]


_UNKNOWN_FLAG = re.compile(r"^.*(?:unexpected argument|unknown (?:option|argument|flag)|unrecognized (?:arguments?|"
                           r"option)|invalid option).*$", re.IGNORECASE | re.MULTILINE)


def classify_failure(agent: Mapping[str, object], exit_code: int | None, stdout_tail: str,
                     stderr_tail: str) -> AgentError | None:
    """The default: the CLI's own error facts first, else the text of both streams (stderr last, where most CLIs
    print their errors). A flag the CLI does not know (another version than the tested one) is said so."""
    error = classify(agent, exit_code, "\n".join(t for t in (stdout_tail, stderr_tail) if t))
    flag = _UNKNOWN_FLAG.search(stderr_tail) if error is not None and error.kind == "other" else None
    if error is not None and flag is not None:
        message = f"{flag[0].strip()} (a flag dun passes is unknown to this version of the CLI: see `dun doctor`)"
        return AgentError("other", message[:300], None)
    return error


@dataclass(frozen=True)
class AgentAdapter:
    """One agent CLI. Only `name`, `description` and `build` are required; the rest default to the generic
    readers, which know Claude Code, Codex, Gemini and plain-text answers."""

    name: str
    description: str
    build: Callable[[AgentRequest], Invocation]
    cost: Callable[[dict[str, object], Agent], float | None] = reported_cost
    parse: Callable[[BinaryIO], ParseResult] = parse_stream
    classify: Callable[[dict[str, object], int | None, str, str], AgentError | None] = classify_failure
    # None when dun can price this CLI's usage under this `agent:` config, else a one-line reason (checked before
    # a run with a budget starts)
    pricing: Callable[[Agent], str | None] = lambda config: None
    # where the CLI keeps its own state, relative to $HOME: made if missing and left writable in the OS sandbox
    state_dirs: tuple[str, ...] = ()
