"""Read an agent's answer in any shape (raw text, Claude Code json and stream-json, Codex JSONL, Gemini json)
in bounded memory and extract the status block and the agent's own facts (error, cost, session)."""

from __future__ import annotations

import io
import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import partial
from typing import Any, BinaryIO

from dun.answer.block import MAX_BLOCKS, RawBlock, StatusBlock, choose, interpret
from dun.answer.shapes import EventReader

CHUNK = 1 << 20
MAX_JSON_LINE = 64 << 20  # a JSONL event larger than this is skipped
MAX_TEXT_LINE = 1 << 20  # a text line longer than this cannot be part of a block: skipped
MAX_DOCUMENT = 4 << 20  # a pretty-printed JSON document larger than this is read as text
# JSONL lines worth decoding: they carry facts, or may carry the block (found by the marker separately)
_FACTS = re.compile(rb'"type": ?"(?:result|system|rate_limit_event|error|turn\.failed|turn\.completed'
                    rb'|thread\.started|item\.completed)"')
_ERROR_KEYS = (b'"error"', b'"response"')
_MARKER = b"dun_status"
_MARKER_RE = re.compile(re.escape(_MARKER), re.I)
LOWERED_COPY_MAX = 4 << 20


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

    def to_dict(self) -> dict[str, object]:
        return {"outcome": self.outcome, "shape": self.shape,
                "status": self.block.to_dict() if self.block else None, "error": self.error, "agent": self.agent,
                "earlier_blocks": self.earlier_blocks, "notes": self.notes, "bytes_read": self.bytes_read}


class _Lines:
    """Accumulates bytes into complete lines without re-copying a long unfinished line on every read."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.parts: list[bytes] = []
        self.size = 0
        self.overlong = False  # inside a line longer than the cap: drop until its end

    def push(self, data: bytes) -> bytes:
        """Return the complete lines (ending with a newline) that `data` finishes."""
        cut = data.rfind(b"\n")
        if cut < 0:
            if not self.overlong:
                self.parts.append(data)
                self.size += len(data)
                if self.size > self.cap:
                    self.parts, self.size, self.overlong = [], 0, True
            return b""
        head, tail = data[: cut + 1], data[cut + 1:]
        if self.overlong:
            head = head[head.find(b"\n") + 1:]  # the rest of the overlong line
            self.overlong = False
        out = b"".join([*self.parts, head]) if self.parts else head
        self.parts, self.size = ([tail], len(tail)) if tail else ([], 0)
        return out

    def rest(self) -> bytes:
        return b"" if self.overlong else b"".join(self.parts)


def parse_stream(stream: BinaryIO) -> ParseResult:
    """Parse an answer from a binary stream, reading it once in chunks."""
    reader = EventReader()
    first = stream.read(CHUNK)
    total = len(first)
    if first.startswith(b"\xef\xbb\xbf"):
        first = first[3:]
    head = first.lstrip()
    mode = "text"
    notes: list[str] = []
    if head.startswith(b"{"):
        first_line = head.split(b"\n", 1)[0].strip()
        if (b"\n" not in head and len(first) >= CHUNK) or _loads(first_line) is not None:
            mode = "jsonl"  # (a first line longer than a chunk is one big event, e.g. Claude's json result)
        elif first_line == b"{":  # a pretty-printed document (Gemini): read it whole, up to a cap
            doc = [first]
            size = len(first)
            while size <= MAX_DOCUMENT and (more := stream.read(CHUNK)):
                doc.append(more)
                size += len(more)
                total += len(more)
            data = b"".join(doc)
            del doc
            obj = _loads(data) if size <= MAX_DOCUMENT else None
            if obj is not None:
                reader.event(obj)
                return _finish(reader, "json", total, notes)
            first = data  # fed through the line splitter below, which keeps its own bound
            notes.append("the answer starts like a JSON document but is not valid JSON (truncated?); read as text")
        else:
            notes.append("the answer starts like JSON but its first line is not valid JSON (truncated?); read as text")
    lines = _Lines(MAX_JSON_LINE if mode == "jsonl" else MAX_TEXT_LINE)
    for at in range(CHUNK, len(first), CHUNK):  # a buffered document goes through in chunk-sized pieces
        complete = lines.push(first[at - CHUNK: at])
        if complete:
            mode = _consume(reader, complete, mode)
    data = first[(max(len(first) - 1, 0) // CHUNK) * CHUNK:]
    del first
    while data:
        complete = lines.push(data)
        if complete:
            mode = _consume(reader, complete, mode)
        data = stream.read(CHUNK)
        total += len(data)
    rest = lines.rest()
    if rest:
        _consume(reader, rest + b"\n", mode)
    return _finish(reader, mode, total, notes)


def _consume(reader: EventReader, complete: bytes, mode: str) -> str:
    """Handle complete lines; returns the mode for what follows (JSONL turns to text at a non-JSON marker line)."""
    if mode == "jsonl":
        starts: set[int] = set()
        starts.update(_lines_with(complete, lambda at: m.start() if (m := _FACTS.search(complete, at)) else -1))
        for needle in _ERROR_KEYS:
            starts.update(_lines_with(complete, partial(complete.find, needle)))
        starts.update(_lines_with(complete, _marker_finder(complete)))
        for begin in sorted(starts):
            end = complete.find(b"\n", begin)
            line = complete[begin: end if end >= 0 else len(complete)]
            obj = _loads(line)
            if obj is None and not line.lstrip().startswith(b"{") and _MARKER in line.lower():
                # not JSONL after all: a text answer that began with a JSON line (a broken event line, which
                # starts with a brace, is just skipped)
                _consume(reader, complete[begin:], "text")
                return "text"
            try:
                reader.event(obj)
            except (AttributeError, TypeError, ValueError):
                continue  # an event of an unexpected shape carries nothing we can use
        if len(reader.superseded) > 2 * MAX_BLOCKS:  # earlier messages' blocks are context: the last ones do
            del reader.superseded[:-MAX_BLOCKS]
        return mode
    scanner = reader.text
    if scanner.inside or _MARKER in complete.lower():
        for text_line in complete.decode("utf-8", "replace").split("\n")[:-1]:
            scanner.feed(text_line)
    else:
        scanner.skip(complete.count(b"\n"))
    return mode


def _marker_finder(complete: bytes) -> Callable[[int], int]:
    """Where the marker is, in any case: `find` on a lowered copy (many times faster than a case-blind regex), or
    the regex when the copy would be large (a single event of up to 64 MB)."""
    if len(complete) <= LOWERED_COPY_MAX:
        return partial(complete.lower().find, _MARKER)
    return lambda at: m.start() if (m := _MARKER_RE.search(complete, at)) else -1


def _lines_with(complete: bytes, find: Callable[[int], int]) -> Iterator[int]:
    """The start of every line holding a match, each line once: after a match the search resumes at the line's
    end, so a long line with many matches is not walked back once per match."""
    at = find(0)
    while at >= 0:
        yield complete.rfind(b"\n", 0, at) + 1
        end = complete.find(b"\n", at)
        if end < 0:
            return
        at = find(end)


def _loads(data: bytes) -> object:
    try:
        return json.loads(data)
    except (ValueError, RecursionError):
        return None


def _shape(mode: str, shapes: set[str]) -> str:
    for key, name in (("claude-stream", "claude-stream-json"), ("claude", "claude-json"), ("codex", "codex-jsonl"),
                      ("gemini", "gemini-json")):
        if key in shapes:
            return name
    return mode


def _finish(reader: EventReader, mode: str, total: int, notes: list[str]) -> ParseResult:
    reader.finish()
    scanner = reader.scanner()
    scanner.finish()
    blocks = _dedupe(scanner.blocks)
    result = ParseResult(outcome="no_status_block", shape=_shape(mode, reader.shapes), agent=reader.agent,
                         notes=notes + scanner.notes, bytes_read=total)
    if total == 0:
        result.notes.append("empty answer")
    chosen = choose(blocks)
    if chosen is None:
        if scanner.incomplete:
            result.outcome, result.error = "parse_error", "status block without its end marker ---END_DUN_STATUS---"
        return result
    for earlier in [*reader.superseded, *blocks][-MAX_BLOCKS:]:
        if earlier is not chosen and earlier.fields != chosen.fields and earlier.fields not in result.earlier_blocks:
            result.earlier_blocks.append(earlier.fields)
    block, error = interpret(chosen)
    result.block = block
    result.outcome = "parsed" if block else "parse_error"
    result.error = error
    return result


def _dedupe(blocks: list[RawBlock]) -> list[RawBlock]:
    out: list[RawBlock] = []
    for block in blocks:
        if out and out[-1].fields == block.fields:
            out[-1] = block
        else:
            out.append(block)
    return out


def parse_text(text: str | bytes) -> ParseResult:
    data = text.encode("utf-8", "replace") if isinstance(text, str) else text
    return parse_stream(io.BytesIO(data))
