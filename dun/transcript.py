"""Read an agent's answer in any shape (raw text, Claude Code json and stream-json, Codex JSONL, Gemini json)
in bounded memory and extract the status block and the agent's own facts (error, cost, session)."""

from __future__ import annotations

import io
import json
import re
from dataclasses import dataclass, field
from typing import Any, BinaryIO

from dun.status import BlockScanner, RawBlock, StatusBlock, choose, interpret

CHUNK = 1 << 20
MAX_LINE = 64 << 20  # longer lines are cut; a single JSON document larger than this is read as text
_MARKER = re.compile(rb"(?i)dun_status")
# JSONL lines worth decoding: those that carry facts or may carry the block
_INTERESTING = re.compile(
    rb'"type"\s*:\s*"(?:result|system|rate_limit_event|error|turn\.failed|turn\.completed|thread\.started)"'
    rb'|(?i:dun_status)')


@dataclass
class ParseResult:
    outcome: str  # parsed | no_status_block | parse_error
    shape: str
    block: StatusBlock | None = None
    error: str | None = None
    agent: dict[str, Any] = field(default_factory=dict)
    earlier_blocks: list[dict[str, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    bytes_read: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {"outcome": self.outcome, "shape": self.shape,
                "status": self.block.to_dict() if self.block else None, "error": self.error, "agent": self.agent,
                "earlier_blocks": self.earlier_blocks, "notes": self.notes, "bytes_read": self.bytes_read}


class _Reader:
    def __init__(self) -> None:
        self.scanner = BlockScanner()
        self.agent: dict[str, Any] = {}
        self.shapes: set[str] = set()

    def scan_text(self, text: str) -> None:
        for line in text.split("\n"):
            self.scanner.feed(line)

    def event(self, obj: Any) -> None:
        """One decoded JSON object from any of the agents' formats."""
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
            if isinstance(obj.get("total_cost_usd"), int | float):
                a["cost_usd"] = float(obj["total_cost_usd"])
            denials = obj.get("permission_denials")
            if isinstance(denials, list):
                a["permission_denials"] = denials[:20]
            if isinstance(obj.get("result"), str):
                a["result_excerpt"] = obj["result"][:1000]
                self.scan_text(obj["result"])
        elif kind == "assistant":
            self.shapes.add("claude-stream")
            content = (obj.get("message") or {}).get("content") or []
            for part in content if isinstance(content, list) else []:
                if isinstance(part, dict) and part.get("type") == "text" and isinstance(part.get("text"), str):
                    self.scan_text(part["text"])
        elif kind == "system":
            self.shapes.add("claude-stream")
            for key in ("session_id", "model", "claude_code_version"):
                if key in obj:
                    a.setdefault(key, obj[key])
        elif kind == "rate_limit_event":
            a["rate_limit"] = obj.get("rate_limit_info", {k: v for k, v in obj.items() if k != "type"})
        elif kind in ("thread.started", "turn.completed", "turn.failed", "item.completed", "error"):
            self._codex(kind, obj)
        elif "response" in obj or ("stats" in obj and "error" in obj):
            self.shapes.add("gemini")
            if obj.get("error"):
                a["is_error"] = True
                err = obj["error"]
                a["error"] = str(err.get("message", err) if isinstance(err, dict) else err)[:1000]
            if isinstance(obj.get("stats"), dict):
                a["stats"] = obj["stats"]
            if isinstance(obj.get("response"), str):
                self.scan_text(obj["response"])

    def _codex(self, kind: str, obj: dict[str, Any]) -> None:
        self.shapes.add("codex")
        a = self.agent
        if kind == "thread.started":
            a["session_id"] = obj.get("thread_id")
        elif kind == "turn.completed" and isinstance(obj.get("usage"), dict):
            usage = a.setdefault("usage", {})
            for key, value in obj["usage"].items():
                if isinstance(value, int):
                    usage[key] = usage.get(key, 0) + value
        elif kind in ("turn.failed", "error"):
            a["is_error"] = True
            err = obj.get("error") if kind == "turn.failed" else obj
            a["error"] = str(err.get("message", err) if isinstance(err, dict) else err)[:1000]
        elif kind == "item.completed":
            item = obj.get("item") or {}
            if item.get("type") in ("agent_message", "assistant_message") and isinstance(item.get("text"), str):
                self.scan_text(item["text"])


def parse_stream(stream: BinaryIO) -> ParseResult:
    """Parse an answer from a binary stream, reading it once in chunks."""
    reader = _Reader()
    total = 0
    first = stream.read(CHUNK)
    total += len(first)
    head = first.lstrip()
    mode = "text"
    pending = first
    if head.startswith(b"{"):
        line_end = head.find(b"\n")
        first_line = head if line_end < 0 else head[:line_end]
        if _loads(first_line) is not None:
            mode = "jsonl"
        else:  # a pretty-printed single document (Gemini): read it whole, up to a cap
            doc = bytearray(first)
            while len(doc) <= MAX_LINE:
                more = stream.read(CHUNK)
                if not more:
                    break
                total += len(more)
                doc += more
            obj = _loads(bytes(doc)) if len(doc) <= MAX_LINE else None
            if obj is not None:
                reader.event(obj)
                return _finish(reader, "json", total)
            pending = bytes(doc)
    carry = b""
    data = pending
    while True:
        buf = carry + data
        cut = buf.rfind(b"\n")
        if cut < 0 and len(buf) > MAX_LINE:
            cut = len(buf) - 1  # a line without end: cut it rather than grow without bound
        complete, carry = (buf[: cut + 1], buf[cut + 1:]) if cut >= 0 else (b"", buf)
        if complete:
            _consume(reader, complete, mode)
        data = stream.read(CHUNK)
        if not data:
            break
        total += len(data)
    if carry:
        _consume(reader, carry + b"\n", mode)
    return _finish(reader, mode, total)


def _consume(reader: _Reader, complete: bytes, mode: str) -> None:
    scanner = reader.scanner
    if mode == "jsonl":
        start = 0
        for match in _INTERESTING.finditer(complete):
            if match.start() < start:
                continue  # a second match on a line already handled
            begin = complete.rfind(b"\n", 0, match.start()) + 1
            end = complete.find(b"\n", match.end())
            end = len(complete) if end < 0 else end
            reader.event(_loads(complete[begin:end]))
            start = end
        return
    if scanner.inside or _MARKER.search(complete):
        for line in complete.decode("utf-8", "replace").split("\n")[:-1]:
            scanner.feed(line)
    else:
        scanner.skip(complete.count(b"\n"))


def _loads(data: bytes) -> Any:
    try:
        return json.loads(data)
    except (ValueError, RecursionError):
        return None


def _shape(mode: str, shapes: set[str]) -> str:
    if "claude-stream" in shapes:
        return "claude-stream-json"
    if "claude" in shapes:
        return "claude-json"
    if "codex" in shapes:
        return "codex-jsonl"
    if "gemini" in shapes:
        return "gemini-json"
    return "text" if mode == "text" else mode


def _finish(reader: _Reader, mode: str, total: int) -> ParseResult:
    scanner = reader.scanner
    scanner.finish()
    blocks = _dedupe(scanner.blocks)
    result = ParseResult(outcome="no_status_block", shape=_shape(mode, reader.shapes), agent=reader.agent,
                         notes=scanner.notes, bytes_read=total)
    if total == 0:
        result.notes.append("empty answer")
    chosen = choose(blocks)
    if chosen is None:
        if scanner.incomplete:
            result.outcome, result.error = "parse_error", "status block without its end marker ---END_DUN_STATUS---"
        return result
    result.earlier_blocks = [b.fields for b in blocks if b is not chosen]
    block, error = interpret(chosen)
    result.block = block
    result.outcome = "parsed" if block else "parse_error"
    result.error = error
    return result


def _dedupe(blocks: list[RawBlock]) -> list[RawBlock]:
    """stream-json repeats the final text in the result event: identical neighbours are one block."""
    out: list[RawBlock] = []
    for block in blocks:
        if out and out[-1].fields == block.fields:
            out[-1] = block
        else:
            out.append(block)
    return out


def parse_text(text: str | bytes) -> ParseResult:
    return parse_stream(io.BytesIO(text.encode("utf-8") if isinstance(text, str) else text))
