"""`codex`: Codex CLI `codex exec --json` (JSONL events on stdout; stderr always says `Reading additional input from
stdin...`). It reports tokens per turn, never dollars: they are priced by the configured rates or dun's table for
the model (agent.model, else `model` in $CODEX_HOME/config.toml, else Codex's default).

Permissions: `--dangerously-bypass-approvals-and-sandbox` with agent.skip_permissions, else the workspace-write
sandbox with the repository's git directories writable (by default the sandbox keeps `.git` read-only: the agent's
commits fail while the turn still ends with exit 0). `--full-auto` no longer exists."""

from __future__ import annotations

import json
import os
import subprocess
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from dun.agents.base import AgentAdapter, AgentRequest, Invocation, binary, project_env
from dun.agents.events import add_tokens, count
from dun.agents.prices import DEFAULT_MODEL, priced, table_refusal
from dun.answer.transcript import ParseResult, parse_stream
from dun.core.gitsafe import neutral_env
from dun.engine.hookspecs import hookimpl

if TYPE_CHECKING:
    from dun.config.sections import Agent


def git_dirs(root: Path) -> list[str]:
    """The git directories a commit writes to: `.git`, or a worktree's own directory and the common one."""
    try:
        out = subprocess.run(["git", "rev-parse", "--absolute-git-dir", "--git-common-dir"], cwd=root,
                             capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL,
                             env=neutral_env(str(root)))
    except (OSError, subprocess.TimeoutExpired):
        return [str(root / ".git")]
    if out.returncode != 0:
        return [str(root / ".git")]
    found: list[str] = []
    for line in out.stdout.splitlines():
        path = str((root / line.strip()).resolve()) if line.strip() else ""
        if path and path not in found:
            found.append(path)
    return found or [str(root / ".git")]


def build(req: AgentRequest) -> Invocation:
    cfg = req.config
    argv = [*binary(cfg, "codex"), "exec", "--json", "--skip-git-repo-check"]
    if cfg.model:
        argv += ["--model", cfg.model]
    if req.read_only:
        argv += ["--sandbox", "read-only"]
    elif cfg.skip_permissions or req.os_sandboxed:
        # inside dun's sandbox, codex's own (bubblewrap too) cannot nest; dun's already confines writes to the repo
        argv.append("--dangerously-bypass-approvals-and-sandbox")
    else:
        roots = json.dumps(git_dirs(req.root))
        argv += ["--sandbox", "workspace-write", "-c", f"sandbox_workspace_write.writable_roots={roots}"]
    argv += [*cfg.extra_args, req.prompt]
    return Invocation(argv=argv, env=project_env(req), redact=[req.prompt])  # stdin stays closed: codex reads it


def parse(stream: BinaryIO) -> ParseResult:
    result = parse_stream(stream)
    usage = result.agent.get("usage")
    if isinstance(usage, dict):  # summed over the turns: input includes cache reads, output includes reasoning
        cached = count(usage.get("cached_input_tokens"))
        add_tokens(result.agent, max(0, count(usage.get("input_tokens")) - cached), cached,
                   count(usage.get("output_tokens")))
    return result


def configured_model(config: Agent) -> str:
    """agent.model, else `model` in Codex's config.toml, else its default."""
    if config.model:
        return config.model
    home = Path(os.environ.get("CODEX_HOME") or Path.home() / ".codex")
    try:
        model = tomllib.loads((home / "config.toml").read_text("utf-8")).get("model")
    except (OSError, ValueError, UnicodeDecodeError):
        model = None
    return model if isinstance(model, str) and model else DEFAULT_MODEL["codex"]


def cost(agent: Mapping[str, object], config: Agent) -> float | None:
    return priced(agent, config, configured_model(config))


def pricing(config: Agent) -> str | None:
    return table_refusal("codex", configured_model(config), config)


@hookimpl
def dun_agents() -> list[AgentAdapter]:
    return [AgentAdapter("codex", "Codex CLI: codex exec --json", build, parse=parse, cost=cost, pricing=pricing,
                         state_dirs=(".codex",))]
