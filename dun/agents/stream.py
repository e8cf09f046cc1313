"""The agent's output as a person follows it (`dun watch`, `dun logs -f`): the event streams of the CLIs that
stream (Claude Code and Gemini stream-json, Codex and OpenCode JSON events, pi) turned into one short
line per event worth seeing, and any other line (a text agent's) shown as it is.

Read from the tail of `.dun/logs/iteration-N.out`, which the runner writes as the agent prints: the loop itself does
nothing more for a watcher.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path

from dun.agents.events import mapping, number

TAIL_BYTES = 64 * 1024
_CONTROL = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|[\x00-\x08\x0b-\x1f\x7f]")  # escape sequences whole, first
WIDTH = 400  # a line longer than this is cut: a watcher shows the gist, `dun logs N --out` has the rest


def _clean(text: str) -> str:
    return _CONTROL.sub("", text).rstrip()[:WIDTH]


def _text_lines(text: str) -> list[str]:
    return [_clean(line) for line in text.splitlines() if line.strip()]


def _tool(name: str, args: Mapping[str, object]) -> str:
    """`Bash: pytest -q`, `Edit: src/app.py`: a tool call by what it acts on."""
    for key in ("command", "cmd", "file_path", "filePath", "path", "pattern", "url", "query", "description"):
        value = args.get(key)
        if isinstance(value, str) and value.strip():
            return _clean(f"{name}: {value.strip().splitlines()[0]}")
        if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
            return _clean(f"{name}: {' '.join(value)}")
    return _clean(name)


def _claude(obj: Mapping[str, object]) -> list[str] | None:
    kind = obj.get("type")
    if kind == "system":
        if obj.get("subtype") == "init":
            return [_clean(f"(session started: {obj.get('model') or 'model?'})")]
        if obj.get("subtype") == "api_retry":
            return ["(API error: retrying)"]
        return []
    if kind in ("assistant", "user"):
        out: list[str] = []
        content = mapping(obj.get("message")).get("content")
        for part in content if isinstance(content, list) else []:
            part = mapping(part)
            if kind == "assistant" and part.get("type") == "text" and isinstance(part.get("text"), str):
                out += _text_lines(part["text"])
            elif part.get("type") == "tool_use":
                out.append("> " + _tool(str(part.get("name") or "tool"), mapping(part.get("input"))))
            elif part.get("type") == "tool_result" and part.get("is_error"):
                out.append("  (the tool failed)")
        return out
    if kind == "result":
        cost = number(obj.get("total_cost_usd"))
        what = "error" if obj.get("is_error") else "done"
        return [f"({what}: {obj.get('subtype') or '-'}" + (f", ${cost:.4f}" if cost is not None else "") + ")"]
    if kind == "rate_limit_event":
        status = mapping(obj.get("rate_limit_info")).get("status")
        return [f"(rate limit: {status})"] if status and status != "allowed" else []
    if kind == "stream_event":
        return []
    return None


def _codex(obj: Mapping[str, object]) -> list[str] | None:
    kind = obj.get("type")
    if kind in ("thread.started", "turn.started"):
        return []
    if kind in ("item.started", "item.completed", "item.updated"):
        item = mapping(obj.get("item"))
        itype = item.get("type")
        if itype == "agent_message" and kind == "item.completed":
            return _text_lines(str(item.get("text") or ""))
        if itype == "reasoning" and kind == "item.completed":
            return [_clean(f"(thinking) {line}") for line in _text_lines(str(item.get("text") or ""))[:2]]
        if itype == "command_execution":
            if kind == "item.started":
                return ["> " + _clean(f"$ {item.get('command')}")]
            if kind == "item.completed" and item.get("status") == "declined":
                return [_clean(f"  (declined: {item.get('command')})")]
            code = item.get("exit_code")
            return [f"  (exit {code})"] if kind == "item.completed" and code not in (0, None) else []
        if itype == "file_change" and kind == "item.completed":
            changes = item.get("changes")
            paths = [str(mapping(c).get("path")) for c in changes] if isinstance(changes, list) else []
            return ["> " + _clean(f"edit: {', '.join(paths)}")]
        return []
    if kind == "turn.completed":
        return []
    if kind in ("turn.failed", "error"):
        message = obj.get("message") or mapping(obj.get("error")).get("message")
        return [_clean(f"(error: {message})")]
    return None


def _opencode(obj: Mapping[str, object]) -> list[str] | None:
    kind = obj.get("type")
    part = mapping(obj.get("part"))
    if kind == "text" and "part" in obj:
        return _text_lines(str(part.get("text") or ""))
    if kind == "tool_use" and "part" in obj:
        state = mapping(part.get("state"))
        return ["> " + _tool(str(part.get("tool") or "tool"), mapping(state.get("input")))]
    if kind in ("step_start", "step_finish") and "part" in obj:
        return []
    return None


def _gemini(obj: dict[str, object]) -> list[str] | None:
    """`gemini --output-format stream-json` (`agent.live`): init, message, tool_use, tool_result, result."""
    kind = obj.get("type")
    if kind == "message" and "role" in obj:
        return _text_lines(str(obj.get("content") or "")) if obj["role"] == "assistant" else []
    if kind == "tool_use" and "tool_name" in obj:
        return ["> " + _tool(str(obj["tool_name"]), mapping(obj.get("parameters")))]
    if kind == "tool_result" and "tool_id" in obj:
        return ["  (the tool failed)"] if obj.get("status") == "error" else []
    if kind == "init" and "session_id" in obj:
        return [_clean(f"(session started: {obj.get('model') or 'model?'})")]
    if kind == "result" and "stats" in obj:
        message = mapping(obj.get("error")).get("message")
        first = str(message).splitlines()[0] if message else ""
        return [_clean(f"(error: {first})")] if obj.get("status") == "error" else ["(done: success)"]
    return None


def describe(obj: dict[str, object]) -> list[str]:
    """The lines one event of any known stream shows; an unknown event shows nothing (a watcher is not a dump)."""
    for reader in (_gemini, _claude, _codex, _opencode):
        try:
            lines = reader(obj)
        except (AttributeError, TypeError, ValueError):
            continue
        if lines is not None:
            return lines
    return _pi(obj)


def _pi(obj: Mapping[str, object]) -> list[str]:
    """pi's JSON mode: a tool as it starts, an assistant message when it ends (its text, or its error)."""
    kind = obj.get("type")
    if kind == "tool_execution_start":
        return ["> " + _tool(str(obj.get("toolName") or "tool"), mapping(obj.get("args")))]
    message = mapping(obj.get("message"))
    if kind != "message_end" or message.get("role") != "assistant":
        return []
    if message.get("stopReason") == "error":
        return [_clean(f"(error: {message.get('errorMessage') or 'pi reported an error'})")]
    content = message.get("content")
    texts = [str(mapping(c).get("text") or "") for c in content if mapping(c).get("type") == "text"] \
        if isinstance(content, list) else []
    return [line for text in texts for line in _text_lines(text)]


def _document(data: bytes) -> list[str] | None:
    """An answer printed as one JSON document (Gemini's `--output-format json`, Claude's JSON array with
    `--verbose`), pretty-printed over many lines: its lines, or None when `data` is not one."""
    head = data.lstrip()[:1]
    if head not in (b"{", b"[") or b"\n" not in data.strip():
        return None
    try:
        doc = json.loads(data)
    except (ValueError, RecursionError):
        return None
    if isinstance(doc, list):
        return [line for item in doc if isinstance(item, dict) for line in describe(item)]
    if not isinstance(doc, dict):
        return None
    if "type" not in doc and ("response" in doc or "stats" in doc or "error" in doc):  # gemini
        error = mapping(doc.get("error"))
        lines = _text_lines(str(doc.get("response") or ""))
        return lines + ([_clean(f"(error: {error.get('message')})")] if error else [])
    return describe(doc)


def readable(data: bytes, partial_first: bool = False) -> list[str]:
    """The lines a person reads for `data` (whole lines of an agent's stdout); `partial_first`: the first line
    may be the end of a line cut by the read, and is left out."""
    if not partial_first:
        whole = _document(data)
        if whole is not None:
            return whole
    lines = data.decode("utf-8", "replace").split("\n")
    if partial_first:
        lines = lines[1:]
    out: list[str] = []
    for line in lines:
        stripped = line.strip()
        if not stripped:
            continue
        if stripped.startswith("{") and stripped.endswith("}"):
            try:
                obj = json.loads(stripped)
            except (ValueError, RecursionError):
                obj = None
            if isinstance(obj, dict):
                out += describe(obj)
                continue
        out.append(_clean(line))
    return out


def output_tail(path: Path, lines: int, size: int = TAIL_BYTES) -> list[str]:
    """The last `lines` readable lines of the agent's stdout in `path` (its last `size` bytes; an event still
    being written is left for the next read)."""
    try:
        with path.open("rb") as fh:
            end = fh.seek(0, 2)
            start = max(0, end - size)
            fh.seek(start)
            data = fh.read(size)
    except OSError:
        return []
    cut = data.rfind(b"\n")
    complete = data[:cut + 1] if cut >= 0 else b""
    return readable(complete, partial_first=start > 0)[-lines:] if lines > 0 else []
