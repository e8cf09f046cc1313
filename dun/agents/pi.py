"""`pi`: the pi coding agent, `pi -p --mode json --no-session PROMPT` (JSONL events on stdout).

The answer is the last assistant `message_end`; each carries `usage` (tokens, and `cost.total` in USD from the
provider's model prices: summed). An API error ends the run with exit 0 and an assistant message whose
`stopReason` is `error` (`errorMessage`): it is read from there. pi has no permission prompts (its tools always
run), so agent.skip_permissions changes nothing; a reviewer gets only the read-only tools."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, BinaryIO

from dun.agents.base import AgentAdapter, AgentRequest, Invocation, binary, project_env
from dun.agents.events import add_cost, add_tokens, count, from_final, mapping, read_jsonl
from dun.answer.transcript import ParseResult
from dun.engine.hookspecs import hookimpl

READ_ONLY_TOOLS = "read,grep,find,ls"


def build(req: AgentRequest) -> Invocation:
    cfg = req.config
    argv = [*binary(cfg, "pi"), "-p", "--mode", "json", "--no-session"]
    if cfg.model:
        argv += ["--model", cfg.model]
    if req.read_only:
        argv += ["--tools", READ_ONLY_TOOLS]
    argv += [*cfg.extra_args, req.prompt]
    return Invocation(argv=argv, env=project_env(req), redact=[req.prompt])


class Reader:
    def __init__(self) -> None:
        self.agent: dict[str, Any] = {}
        self.texts: list[str] = []

    def event(self, obj: Mapping[str, object]) -> None:
        kind, a = obj.get("type"), self.agent
        if kind == "session" and isinstance(obj.get("id"), str):
            a["session_id"] = obj["id"]
        elif kind == "tool_execution_start":
            a["tool_calls"] = a.get("tool_calls", 0) + 1
        if kind != "message_end":
            return
        message = obj.get("message")
        if not isinstance(message, dict) or message.get("role") != "assistant":
            return
        usage = mapping(message.get("usage"))
        add_tokens(a, count(usage.get("input")) + count(usage.get("cacheWrite")), count(usage.get("cacheRead")),
                   count(usage.get("output")))
        price = usage.get("cost")
        add_cost(a, price.get("total") if isinstance(price, dict) else None)
        if isinstance(message.get("model"), str):
            a["model"] = message["model"]
        if message.get("stopReason") == "error":
            a["is_error"] = True
            a["error"] = str(message.get("errorMessage") or "pi reported an error")[:1000]
            status = re.match(r"([1-5]\d\d)\b", a["error"])  # "429 Rate limit reached ..."
            if status:
                a["api_error_status"] = int(status[1])
        content = message.get("content")
        text = "".join(c["text"] for c in content if isinstance(c, dict) and c.get("type") == "text"
                       and isinstance(c.get("text"), str)) if isinstance(content, list) else ""
        if text:
            self.texts.append(text)


def parse(stream: BinaryIO) -> ParseResult:
    reader = Reader()
    total = read_jsonl(stream, reader.event)
    final = reader.texts[-1] if reader.texts else None
    return from_final(final, reader.texts[:-1], reader.agent, "pi-jsonl", total)


@hookimpl
def dun_agents() -> list[AgentAdapter]:
    # cost: its own per-message dollars (from the provider's model prices); a $0 with tokens spent is unknown
    return [AgentAdapter("pi", "pi: pi -p --mode json", build, parse=parse, state_dirs=(".pi",))]
