"""`claude`: Claude Code in print mode, JSON result (stream-json with `agent.live`). With `--verbose` (or session
hooks) `--output-format json` prints an array of every message, `[system, assistant, ..., result]`, instead of the
result object: both are read. Cost: the CLI's own `total_cost_usd`."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import BinaryIO

from dun.agents.base import AgentAdapter, AgentRequest, Invocation, binary, project_env
from dun.agents.events import CHUNK, rewound
from dun.answer.transcript import ParseResult, parse_stream
from dun.core.atomic import write_text_atomic
from dun.engine.hookspecs import hookimpl

MAX_ARRAY = 64 << 20  # a larger array is read as text (its result element is then not found)

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
    argv += ["--output-format", "stream-json", "--verbose"] if cfg.live else ["--output-format", "json"]
    if cfg.model:
        argv += ["--model", cfg.model]
    if cfg.allowed_tools:
        argv += ["--allowedTools", *cfg.allowed_tools]
    if req.budget_usd:
        argv += ["--max-budget-usd", f"{req.budget_usd:g}"]
    settings = guard_settings(req)
    if settings is not None:
        argv += ["--settings", str(settings)]
    if cfg.skip_permissions and not req.read_only:
        argv.append("--dangerously-skip-permissions")
    argv += list(cfg.extra_args)
    return Invocation(argv=argv, env=project_env(req), redact=[req.prompt])


def parse(stream: BinaryIO) -> ParseResult:
    """The result object, stream-json, or the array of messages (fed to the generic reader as JSONL)."""
    head = stream.read(CHUNK)
    if not head.lstrip().startswith(b"["):
        return parse_stream(rewound(head, stream))
    parts, size = [head], len(head)
    while size <= MAX_ARRAY and (more := stream.read(CHUNK)):
        parts.append(more)
        size += len(more)
    data = b"".join(parts)
    try:
        items = json.loads(data) if size <= MAX_ARRAY else None
    except (ValueError, RecursionError):
        items = None
    if not isinstance(items, list):
        result = parse_stream(rewound(data, stream))
        result.notes.append("the answer starts like a JSON array but is not one (truncated?); read as text")
        return result
    lines = b"".join(json.dumps(item).encode() + b"\n" for item in items if isinstance(item, dict))
    result = parse_stream(io.BytesIO(lines))
    result.bytes_read = size
    if any(isinstance(i, dict) and i.get("type") == "result" for i in items):
        result.shape = "claude-json"
    return result


@hookimpl
def dun_agents() -> list[AgentAdapter]:
    return [AgentAdapter("claude", "Claude Code: claude -p --output-format json", build, parse=parse,
                         state_dirs=(".claude",))]
