"""The YAML diagnostics of a TAP failure in the plain form node's test runner and tape write, read without a YAML
library: importing and running ruamel's pure-Python parser cost 50-90 ms a run with failures, after the runner had
ended (node's report is read from its file). Only what this reads exactly as YAML 1.2 reads it (ruamel's safe
loader): a mapping of simple keys to decimal integers and floats, plain strings, single-quoted strings on one line,
literal block scalars (`|`, `|-`) and nested mappings. Anything else (a sequence, a double-quoted or multi-line
string, a tag, an anchor, a boolean, a null, a tab) is `None`: the caller reads the block with ruamel."""

from __future__ import annotations

import re

_KEY = re.compile(r"(?P<key>[A-Za-z_][\w.-]*|0|[1-9][0-9]{0,17}):(?: (?P<value>.*))?$")
_INT = re.compile(r"-?(?:0|[1-9][0-9]*)")
_FLOAT = re.compile(r"-?(?:0|[1-9][0-9]*)\.[0-9]+")
_QUOTED = re.compile(r"'((?:[^']|'')*)'")
# a plain scalar that is a string: no indicator first, nothing a YAML reader would take for a number, a boolean, a
# null or a comment, no `: ` or ` #` inside, no trailing `:` or space
_PLAIN = re.compile(r"(?![-?:,\[\]{}#&*!|>'\"%@`+.0-9~])(?:(?!: | #)[^\t])*(?<![: ])")
_WORDS = {"true", "false", "null", "y", "n", "yes", "no", "on", "off"}


class _Other(Exception):
    """Outside the subset: read with a YAML library."""


def load(text: str) -> dict[str, object] | None:
    """The mapping `text` holds, or None when it is not in the plain subset (module doc) or a key of its own is a
    number."""
    if "\t" in text or "\r" in text:
        return None
    lines = text.split("\n")
    try:
        found, end = _mapping(lines, 0, 0)
        if any(line.strip() for line in lines[end:]):
            return None
    except _Other:
        return None
    if not found or not all(isinstance(key, str) for key in found):
        return None  # nothing (ruamel reads that as a null), or a number for a key
    return {str(key): value for key, value in found.items()}


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _mapping(lines: list[str], at: int, indent: int) -> tuple[dict[object, object], int]:
    out: dict[object, object] = {}
    while at < len(lines):
        line = lines[at]
        if not line.strip():
            at += 1
            continue
        if _indent(line) < indent:
            break
        if _indent(line) > indent:
            raise _Other
        match = _KEY.fullmatch(line[indent:])
        if match is None or match["key"].lower() in _WORDS:
            raise _Other
        key: object = int(match["key"]) if match["key"].isdigit() else match["key"]
        if key in out:
            raise _Other  # a duplicate key is an error to ruamel
        value = (match["value"] or "").strip(" ")
        at += 1
        if value in ("|", "|-"):
            out[key], at = _literal(lines, at, indent, keep=value == "|")
        elif not value:
            nxt = next((i for i in range(at, len(lines)) if lines[i].strip()), len(lines))
            if nxt == len(lines) or _indent(lines[nxt]) <= indent:
                raise _Other  # a null
            out[key], at = _mapping(lines, nxt, _indent(lines[nxt]))
        else:
            out[key] = _scalar(value)
    return out, at


def _literal(lines: list[str], at: int, indent: int, keep: bool) -> tuple[str, int]:
    """A literal block scalar's text, its indentation that of its first line that is not blank; `keep`: `|` (the
    last line break kept), else `|-` (none)."""
    first = next((i for i in range(at, len(lines)) if lines[i].strip()), len(lines))
    if first == len(lines) or _indent(lines[first]) <= indent:
        raise _Other  # an empty block
    width = _indent(lines[first])
    if any(len(lines[i]) > width for i in range(at, first)):
        raise _Other  # a blank line before the text, longer than its indentation: an error to YAML
    body: list[str] = []
    end = at
    while end < len(lines):
        line = lines[end]
        if line.strip() and _indent(line) < width:
            if _indent(line) > indent:
                raise _Other  # less indented than the block, more than its key: an error to YAML
            break
        if not line.strip() and len(line) > width:
            raise _Other  # spaces past the indentation on a blank line are text: left to ruamel
        body.append(line[width:])
        end += 1
    while body and not body[-1]:
        body.pop()
    text = "\n".join(body)
    return (text + "\n" if keep else text), end


def _scalar(value: str) -> object:
    if _INT.fullmatch(value):
        return int(value)
    if _FLOAT.fullmatch(value):
        return float(value)
    quoted = _QUOTED.fullmatch(value)
    if quoted:
        return quoted[1].replace("''", "'")
    if value.lower() in _WORDS or not _PLAIN.fullmatch(value):
        raise _Other
    return value
