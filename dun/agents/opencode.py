"""`opencode`: OpenCode `opencode run --format json` (JSONL events on stdout; stderr empty, errors included).

Events: `step_start`, `tool_use` (part.tool, part.state), `step_finish` (part.tokens, part.cost in USD: summed over
the steps), `text` (part.text: the answer; the last one holds the status block) and `error` (error.data.message,
statusCode). `--auto` approves every permission not denied in its config (agent.skip_permissions); without it a
permission set to `ask` is rejected and the session ends. `--title` stops the title side request. It takes its
project from $PWD, which dun sets."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, BinaryIO

from dun.agents.base import AgentAdapter, AgentRequest, Invocation, binary, project_env
from dun.agents.events import add_cost, add_tokens, count, from_final, mapping, read_jsonl
from dun.answer.transcript import ParseResult
from dun.engine.hookspecs import hookimpl

READ_ONLY = {"edit": "deny", "bash": "deny", "webfetch": "deny", "external_directory": "deny"}


def build(req: AgentRequest) -> Invocation:
    cfg = req.config
    argv = [*binary(cfg, "opencode"), "run", "--format", "json", "--title", f"dun: {req.prompt_file.stem}"]
    if cfg.model:
        argv += ["--model", cfg.model]
    if cfg.skip_permissions and not req.read_only:
        argv.append("--auto")
    argv += [*cfg.extra_args, req.prompt]
    env = {**project_env(req), "OPENCODE_DISABLE_AUTOUPDATE": "1"}  # dun is tested against a pinned version
    if req.read_only:  # merged over its config's permissions: a reviewer reads, never edits or runs commands
        env["OPENCODE_PERMISSION"] = json.dumps(READ_ONLY)
    return Invocation(argv=argv, env=env, redact=[req.prompt])


class Reader:
    def __init__(self) -> None:
        self.agent: dict[str, Any] = {}
        self.texts: list[str] = []
        self.step_texts: list[str] = []  # the text parts of the current step

    def event(self, obj: Mapping[str, object]) -> None:
        kind, part, a = obj.get("type"), obj.get("part"), self.agent
        part = mapping(part)
        if isinstance(obj.get("sessionID"), str):
            a.setdefault("session_id", obj["sessionID"])
        if kind == "step_start":
            self.step_texts = []
        elif kind == "text" and isinstance(part.get("text"), str):
            self.step_texts.append(part["text"])
        elif kind == "tool_use":
            state = mapping(part.get("state"))
            a["tool_calls"] = a.get("tool_calls", 0) + 1
            if state.get("status") == "error" and "rejected permission" in str(state.get("error", "")):
                a.setdefault("permission_denials", []).append({"tool_name": part.get("tool")})
        elif kind == "step_finish":
            tokens = mapping(part.get("tokens"))
            cache = mapping(tokens.get("cache"))
            add_tokens(a, count(tokens.get("input")) + count(cache.get("write")), count(cache.get("read")),
                       count(tokens.get("output")) + count(tokens.get("reasoning")))
            add_cost(a, part.get("cost"))
            if self.step_texts:
                self.texts.append("".join(self.step_texts))
                self.step_texts = []
        elif kind == "error":
            error = mapping(obj.get("error"))
            data = mapping(error.get("data"))
            a["is_error"] = True
            a["error"] = str(data.get("message") or error.get("name") or "opencode reported an error")[:1000]
            if data.get("statusCode") is not None:
                a["api_error_status"] = data["statusCode"]


def parse(stream: BinaryIO) -> ParseResult:
    reader = Reader()
    total = read_jsonl(stream, reader.event)
    if reader.step_texts:  # a step cut off before its step_finish
        reader.texts.append("".join(reader.step_texts))
    final = reader.texts[-1] if reader.texts else None
    return from_final(final, reader.texts[:-1], reader.agent, "opencode-jsonl", total)


@hookimpl
def dun_agents() -> list[AgentAdapter]:
    # cost: its own per-step dollars (from the provider's model prices); a $0 with tokens spent is unknown
    return [AgentAdapter("opencode", "OpenCode: opencode run --format json", build, parse=parse,
                         state_dirs=(".config/opencode", ".local/share/opencode", ".local/state/opencode",
                                     ".cache/opencode"))]
