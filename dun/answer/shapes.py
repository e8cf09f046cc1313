"""Facts and final answers from the agents' JSON events: Claude Code (json, stream-json), Codex (exec --json)
and Gemini (--output-format json)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dun.answer.block import BlockScanner, RawBlock


def _number(value: object) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _message(err: object) -> str:
    return str(err.get("message", err) if isinstance(err, dict) else err)[:1000]


class EventReader:
    """Collects facts from decoded events. Where a final answer exists (Claude's `result`, Codex's last
    agent message, Gemini's `response`), only it is scanned: an earlier message's block is stale."""

    def __init__(self) -> None:
        self.text = BlockScanner()  # raw text answers
        self.final: str | None = None  # the final answer text from a JSON shape
        self.assistant = BlockScanner()  # Claude assistant messages, used only when no result event came
        self.agent: dict[str, Any] = {}
        self.shapes: set[str] = set()
        self.pending_error: str | None = None  # Codex: an `error` event not followed by a completed turn
        self.superseded: list[RawBlock] = []  # blocks of earlier messages, recorded but never chosen

    def scanner(self) -> BlockScanner:
        if self.final is not None:
            self.superseded.extend(self.assistant.blocks)
            scanner = BlockScanner()
            for line in self.final.split("\n"):
                scanner.feed(line)
            return scanner
        if self.assistant.blocks or self.assistant.inside or self.assistant.incomplete:
            return self.assistant
        return self.text

    def event(self, obj: object) -> None:
        if not isinstance(obj, dict):
            return
        kind = obj.get("type")
        a = self.agent
        if kind == "result":  # Claude Code: the json object, or the last stream-json event
            self.shapes.add("claude")
            for key in ("is_error", "subtype", "session_id", "api_error_status", "num_turns", "duration_ms",
                        "stop_reason", "terminal_reason", "usage"):
                if key in obj:
                    a[key] = obj[key]
            cost = _number(obj.get("total_cost_usd"))
            if cost is not None:
                a["cost_usd"] = cost
            if isinstance(obj.get("permission_denials"), list):
                a["permission_denials"] = obj["permission_denials"][:20]
            result = obj.get("result")
            if isinstance(result, str):
                a["result_excerpt"] = result[:1000]
            self.final = result if isinstance(result, str) else ""
        elif kind == "assistant":
            self.shapes.add("claude-stream")
            message = obj.get("message")
            content = message.get("content") if isinstance(message, dict) else None
            for part in content if isinstance(content, list) else []:
                if isinstance(part, dict) and part.get("type") == "text" and isinstance(part.get("text"), str):
                    for line in part["text"].split("\n"):
                        self.assistant.feed(line)
        elif kind == "system":
            self.shapes.add("claude-stream")
            for key in ("session_id", "model", "claude_code_version"):
                if key in obj:
                    a.setdefault(key, obj[key])
        elif kind == "rate_limit_event":
            info = obj.get("rate_limit_info")
            a["rate_limit"] = info if isinstance(info, dict) else {k: v for k, v in obj.items() if k != "type"}
        elif kind in ("thread.started", "turn.completed", "turn.failed", "item.completed", "error"):
            self._codex(kind, obj)
        elif kind is None and ("response" in obj or "error" in obj):
            self._gemini(obj)

    def _gemini(self, obj: dict[str, Any]) -> None:
        self.shapes.add("gemini")
        a = self.agent
        if obj.get("error"):
            a["is_error"] = True
            a["error"] = _message(obj["error"])
        if isinstance(obj.get("stats"), dict):
            a["stats"] = obj["stats"]
        if "session_id" in obj:
            a["session_id"] = obj["session_id"]
        if isinstance(obj.get("response"), str):
            self.final = obj["response"]

    def _codex(self, kind: str, obj: Mapping[str, object]) -> None:
        self.shapes.add("codex")
        a = self.agent
        if kind == "thread.started":
            a["session_id"] = obj.get("thread_id")
        elif kind == "turn.completed":
            self.pending_error = None  # earlier `error` events were retries that recovered
            usage = obj.get("usage")
            for key, value in (usage.items() if isinstance(usage, dict) else []):
                if _number(value) is not None:
                    a.setdefault("usage", {})[key] = a.get("usage", {}).get(key, 0) + value
        elif kind == "turn.failed":
            a["is_error"] = True
            a["error"] = _message(obj.get("error"))
        elif kind == "error":
            self.pending_error = _message(obj.get("message", obj))
        elif kind == "item.completed":
            item = obj.get("item")
            if isinstance(item, dict) and item.get("type") in ("agent_message", "assistant_message") \
                    and isinstance(item.get("text"), str):
                if self.final is not None:
                    earlier = BlockScanner()
                    for line in self.final.split("\n"):
                        earlier.feed(line)
                    self.superseded.extend(earlier.blocks)
                self.final = item["text"]  # the last agent message is the answer

    def finish(self) -> None:
        if self.pending_error is not None and not self.agent.get("is_error"):
            self.agent["is_error"] = True
            self.agent["error"] = self.pending_error
