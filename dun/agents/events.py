"""Reading the JSON event streams of CLIs that dun.answer's generic reader does not know (opencode, pi), and the
shared tail of every parse: the status block taken from the final answer's text only."""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from typing import Any, BinaryIO

from dun.answer.block import BlockScanner
from dun.answer.transcript import ParseResult, parse_text

CHUNK = 1 << 20
MAX_LINE = 64 << 20  # an event line longer than this is skipped (pi repeats the whole message in every update)


def read_jsonl(stream: BinaryIO, handle: Callable[[dict[str, object]], None]) -> int:
    """Feed every JSON object line of `stream` to `handle`, in bounded memory; returns the bytes read. Lines that
    are not JSON objects (a warning, a truncated tail) are skipped."""
    total = 0
    parts: list[bytes] = []
    size = 0
    overlong = False
    while data := stream.read(CHUNK):
        total += len(data)
        lines = data.split(b"\n")
        for i, piece in enumerate(lines):
            last = i == len(lines) - 1
            if not overlong:
                parts.append(piece)
                size += len(piece)
                if size > MAX_LINE:
                    parts, size, overlong = [], 0, True
            if last:
                break
            if not overlong:
                _decode(b"".join(parts), handle)
            parts, size, overlong = [], 0, False
    if parts and not overlong:
        _decode(b"".join(parts), handle)
    return total


def _decode(line: bytes, handle: Callable[[dict[str, object]], None]) -> None:
    line = line.strip()
    if not line.startswith(b"{"):
        return
    try:
        obj = json.loads(line)
    except (ValueError, RecursionError):
        return
    if isinstance(obj, dict):
        try:
            handle(obj)
        except (AttributeError, TypeError, ValueError, KeyError):
            return  # an event of an unexpected shape carries nothing we can use


def mapping(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def number(value: object) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def count(value: object) -> int:
    """A token count, or 0 for anything that is not one."""
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) and value > 0 else 0


def add_tokens(agent: dict[str, Any], input_tokens: int = 0, cached: int = 0, output: int = 0,
               model: str | None = None) -> None:
    """Sum normalized token counts into the facts: `input` excludes cache reads (`cached`), `output` includes
    reasoning. With a model name they are also kept per model, each priced at its own rate."""
    targets = [agent.setdefault("tokens", {"input": 0, "cached": 0, "output": 0})]
    if model:
        targets.append(agent.setdefault("tokens_by_model", {}).setdefault(
            model, {"input": 0, "cached": 0, "output": 0}))
    for tokens in targets:
        tokens["input"] += input_tokens
        tokens["cached"] += cached
        tokens["output"] += output


def add_cost(agent: dict[str, Any], value: object) -> None:
    cost = number(value)
    if cost is not None:
        agent["cost_usd"] = round(agent.get("cost_usd", 0.0) + cost, 10)


def from_final(final: str | None, earlier: list[str], agent: dict[str, object], shape: str, bytes_read: int,
               notes: list[str] | None = None) -> ParseResult:
    """The parse of an answer whose final text is known: its block is the only candidate; earlier messages'
    blocks are recorded as superseded, never chosen."""
    if final is None:
        result = ParseResult(outcome="no_status_block", shape=shape, agent=agent, bytes_read=bytes_read,
                             notes=list(notes or []))
        if bytes_read == 0:
            result.notes.append("empty answer")
        return result
    result = parse_text(final)
    result.shape, result.agent, result.bytes_read = shape, agent, bytes_read
    result.notes = [*(notes or []), *result.notes]
    chosen = result.block.to_dict() if result.block else None
    for text in earlier:
        scanner = BlockScanner()
        for line in text.split("\n"):
            scanner.feed(line)
        scanner.finish()
        for raw in scanner.blocks:
            if raw.fields not in result.earlier_blocks and (chosen is None or raw.fields != chosen):
                result.earlier_blocks.append(raw.fields)
    return result


class Prefixed(io.RawIOBase):
    """A stream whose first bytes were already read (to sniff its shape), put back in front of the rest."""

    def __init__(self, head: bytes, rest: BinaryIO) -> None:
        self.head = head
        self.rest = rest

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        view = memoryview(buffer).cast("B")
        if self.head:
            n = min(len(view), len(self.head))
            view[:n] = self.head[:n]
            self.head = self.head[n:]
            return n
        data = self.rest.read(len(view))
        view[: len(data)] = data
        return len(data)


def rewound(head: bytes, rest: BinaryIO) -> BinaryIO:
    return io.BufferedReader(Prefixed(head, rest), CHUNK)
