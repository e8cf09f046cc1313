"""`gemini`: Gemini CLI `gemini -p PROMPT --output-format json` (one JSON document on stdout: `response`, `stats`),
or with `agent.live` `--output-format stream-json` (one event per line: `init`, `message`, `tool_use`,
`tool_result`, `result` with the stats or the error), which `dun watch` shows as it streams.

The workspace is trusted through GEMINI_CLI_TRUST_WORKSPACE (else exit 55). Its stderr always carries warnings, and
in json mode API errors go there only: a stack trace, then `{"session_id", "error": {type, message, code}}`, with
the HTTP status as the exit code (modulo 256: 429 -> 173, 401 -> 145). Its shell tool runs git with
GIT_CONFIG_GLOBAL=/dev/null, so dun passes the user's git identity in the environment. Tokens per model are in
`stats.models`, never dollars: priced by the configured rates or dun's table."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from dun.agents.base import AgentAdapter, AgentRequest, Invocation, binary, classify_failure, project_env
from dun.agents.events import CHUNK, add_tokens, count, from_final, mapping, read_jsonl, rewound
from dun.agents.limits import AgentError
from dun.agents.prices import DEFAULT_MODEL, priced, table_refusal
from dun.answer.transcript import ParseResult, parse_stream
from dun.core.gitsafe import neutral_env
from dun.engine.hookspecs import hookimpl

if TYPE_CHECKING:
    from dun.config.sections import Agent

UNTRUSTED, NO_AUTH = 55, 41  # its exit codes for an untrusted folder and for settings that select no auth method
_IDENTITY = (("GIT_AUTHOR_NAME", "user.name"), ("GIT_AUTHOR_EMAIL", "user.email"),
             ("GIT_COMMITTER_NAME", "user.name"), ("GIT_COMMITTER_EMAIL", "user.email"))


def git_identity(root: Path) -> dict[str, str]:
    """The identity git would use here, for the agent's commits; variables already set are left alone."""
    env: dict[str, str] = {}
    for var, key in _IDENTITY:
        if os.environ.get(var):
            continue
        try:
            out = subprocess.run(["git", "config", key], cwd=root, capture_output=True, text=True, timeout=30,
                                 stdin=subprocess.DEVNULL, env=neutral_env(str(root)))
        except (OSError, subprocess.TimeoutExpired):
            continue
        if out.returncode == 0 and out.stdout.strip():
            env[var] = out.stdout.strip()
    return env


def build(req: AgentRequest) -> Invocation:
    cfg = req.config
    argv = [*binary(cfg, "gemini"), "-p", req.prompt, "--output-format", "stream-json" if cfg.live else "json"]
    if cfg.model:
        argv += ["--model", cfg.model]
    # yolo: headless, any other mode has no shell tool (no tests, no commits); auto_edit still edits files
    if not req.read_only:
        argv += ["--approval-mode", "yolo" if cfg.skip_permissions else "auto_edit"]
    argv += list(cfg.extra_args)
    env = {**project_env(req), "GEMINI_CLI_TRUST_WORKSPACE": "true", **git_identity(req.root)}
    return Invocation(argv=argv, env=env, redact=[req.prompt])


class StreamReader:
    """The events of `--output-format stream-json`: the final answer is the assistant's last message (its deltas
    joined; a tool call ends a message), tokens per model from the `result` event, an error from it too."""

    def __init__(self) -> None:
        self.agent: dict[str, Any] = {}
        self.texts: list[str] = []
        self.current: list[str] = []

    def close_message(self) -> None:
        if self.current:
            self.texts.append("".join(self.current))
            self.current = []

    def event(self, obj: dict[str, Any]) -> None:
        kind, a = obj.get("type"), self.agent
        if kind == "init":
            a.setdefault("session_id", obj.get("session_id"))
        elif kind == "message" and obj.get("role") == "assistant" and isinstance(obj.get("content"), str):
            self.current.append(obj["content"])
        elif kind in ("tool_use", "tool_result"):
            self.close_message()
            if kind == "tool_use":
                a["tool_calls"] = a.get("tool_calls", 0) + 1
        elif kind == "result":
            self.close_message()
            stats = mapping(obj.get("stats"))
            for name, model in mapping(stats.get("models")).items():
                model = mapping(model)  # input_tokens includes the cache reads
                cached = count(model.get("cached"))
                add_tokens(a, max(0, count(model.get("input_tokens")) - cached), cached,
                           count(model.get("output_tokens")), model=str(name))
            if obj.get("status") == "error":
                error = mapping(obj.get("error"))
                a["is_error"] = True
                a["error"] = str(error.get("message") or "the Gemini CLI reported an error")[:1000]


def parse(stream: BinaryIO) -> ParseResult:
    head = stream.read(CHUNK)
    if head.lstrip().startswith(b'{"type":'):  # stream-json: one event per line
        reader = StreamReader()
        total = read_jsonl(rewound(head, stream), reader.event)
        reader.close_message()
        final = reader.texts[-1] if reader.texts else None
        return from_final(final, reader.texts[:-1], reader.agent, "gemini-stream-json", total)
    result = parse_stream(rewound(head, stream))
    stats = result.agent.get("stats")
    models = stats.get("models") if isinstance(stats, dict) else None
    for name, model in (models.items() if isinstance(models, dict) else []):
        tokens = model.get("tokens") if isinstance(model, dict) else None
        if isinstance(tokens, dict):  # prompt includes cache reads; thoughts bill as output
            cached = count(tokens.get("cached"))
            add_tokens(result.agent, max(0, count(tokens.get("prompt")) - cached), cached,
                       count(tokens.get("candidates")) + count(tokens.get("thoughts")), model=str(name))
    return result


def stderr_error(stderr_tail: str) -> dict[str, object] | None:
    """The `error` of the JSON document json mode prints on stderr after a failure."""
    lines = stderr_tail.splitlines()
    for start in range(len(lines) - 1, -1, -1):
        if lines[start].strip() != "{":
            continue
        try:
            doc = json.loads("\n".join(lines[start:]))
        except ValueError:
            continue
        error = doc.get("error") if isinstance(doc, dict) else None
        if not isinstance(error, dict):
            return None
        try:  # an API error body, passed on as the message: its own message is the readable one
            inner = json.loads(str(error.get("message")))["error"]["message"]
        except (ValueError, TypeError, KeyError):
            return error
        return {**error, "message": inner} if isinstance(inner, str) else error
    return None


def classify(agent: Mapping[str, object], exit_code: int | None, stdout_tail: str,
             stderr_tail: str) -> AgentError | None:
    if not agent.get("is_error"):
        error = stderr_error(stderr_tail)
        if error is not None:
            agent = {**agent, "is_error": True, "error": str(error.get("message") or error)[:1000],
                     "api_error_status": error.get("code")}
        elif exit_code == UNTRUSTED:
            return AgentError("other", "the Gemini CLI does not trust this folder (exit 55)", None)
        elif exit_code == NO_AUTH:
            return AgentError("auth", "the Gemini CLI's settings select no auth method (exit 41): set "
                                      "security.auth.selectedType in ~/.gemini/settings.json", None)
    return classify_failure(agent, exit_code, stdout_tail, stderr_tail)


def cost(agent: Mapping[str, object], config: Agent) -> float | None:
    return priced(agent, config, config.model or DEFAULT_MODEL["gemini"])


def pricing(config: Agent) -> str | None:
    return table_refusal("gemini", config.model, config)


@hookimpl
def dun_agents() -> list[AgentAdapter]:
    return [AgentAdapter("gemini", "Gemini CLI: gemini -p --output-format json (stream-json with agent.live)", build,
                         parse=parse,
                         classify=classify, cost=cost, pricing=pricing, state_dirs=(".gemini",))]
