"""A small, pure markdown scanner: ATX headings and task-list checkboxes.

It is deliberately not a full CommonMark parser. It knows just enough (fenced code blocks, ATX
headings, list-item checkboxes) to find outstanding work reliably, and it never raises on any str.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from dun.checks.readers import DEFAULT_OPTIONAL_HEADINGS

__all__ = ["Box", "Heading", "has_heading", "parse_boxes", "parse_headings"]


# Explicit [ \t] and [0-9] instead of \s and \d: those also match unicode spaces and digits.
# Every pattern here is free of nested or adjacent ambiguous quantifiers, so matching stays linear.
_FENCE_OPEN = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")
_FENCE_CLOSE = re.compile(r"^ {0,3}(`{3,}|~{3,})[ \t]*$")
_HEADING = re.compile(r"^ {0,3}(#{1,6})(?:[ \t](.*))?$")
_BOX = re.compile(r"^([ \t]*)(?:[-*+]|[0-9]{1,9}[.)])[ \t]+\[([ xX])\](?:[ \t]+(.*))?$")
_VERIFY = re.compile(r"^([ \t]+)(?:(?:[-*+]|[0-9]{1,9}[.)])[ \t]+)?verify:(.*)$")
_WORD = re.compile(r"[^\W_]+")


@dataclass(frozen=True)
class Box:
    file: str
    line: int
    text: str
    checked: bool
    optional: bool
    heading: str | None
    indent: int
    verify: str | None


@dataclass(frozen=True)
class Heading:
    level: int
    text: str
    line: int


def _lines(text: str) -> list[str]:
    # Split on "\n" only: str.splitlines() also breaks on \x0c, \u2028 etc., which would shift line
    # numbers away from what editors and grep report.
    return [line[:-1] if line.endswith("\r") else line for line in text.split("\n")]


def _columns(whitespace: str) -> int:
    return sum(4 if ch == "\t" else 1 for ch in whitespace)


def _unfenced(lines: list[str]) -> Iterator[int]:
    """Yield the indexes of lines outside fenced code blocks (fence lines themselves excluded)."""
    fence_char = ""
    fence_len = 0
    for i, line in enumerate(lines):
        if fence_char:
            close = _FENCE_CLOSE.match(line)
            if close and close.group(1)[0] == fence_char and len(close.group(1)) >= fence_len:
                fence_char = ""
            continue
        opening = _FENCE_OPEN.match(line)
        # A backtick "fence" whose info string holds a backtick is inline code, not a fence.
        if opening and not (opening.group(1)[0] == "`" and "`" in opening.group(2)):
            fence_char, fence_len = opening.group(1)[0], len(opening.group(1))
            continue
        yield i


def _heading_at(line: str, lineno: int) -> Heading | None:
    match = _HEADING.match(line)
    if match is None:
        return None
    content = (match.group(2) or "").strip()
    # Closing sequence: trailing #'s count only when alone or preceded by whitespace ("# C#" keeps it).
    without = content.rstrip("#")
    if not without:
        content = ""
    elif without != content and without[-1] in " \t":
        content = without.rstrip()
    return Heading(level=len(match.group(1)), text=content, line=lineno)


def _words(text: str) -> list[str]:
    return _WORD.findall(text.casefold())


def _is_optional(heading: str, names: list[list[str]]) -> bool:
    # Whole-word prefix match: "Nice to Have (later)" matches, "Optionality of X" does not.
    words = _words(heading)
    return any(words[: len(name)] == name for name in names)


def parse_headings(text: str) -> list[Heading]:
    """Return every ATX heading outside fenced code blocks, in document order."""
    lines = _lines(text)
    found = (_heading_at(lines[i], i + 1) for i in _unfenced(lines))
    return [heading for heading in found if heading is not None]


def has_heading(text: str, heading: str) -> bool:
    """True when some ATX heading's text equals `heading`, ignoring case and runs of whitespace."""
    wanted = " ".join(heading.split()).casefold()
    return any(" ".join(h.text.split()).casefold() == wanted for h in parse_headings(text))


def parse_boxes(
    text: str,
    file: str = "",
    optional_headings: Sequence[str] = DEFAULT_OPTIONAL_HEADINGS,
) -> list[Box]:
    """Return every checkbox list item outside fenced code blocks, in document order."""
    names = [words for words in (_words(name) for name in optional_headings) if words]
    lines = _lines(text)
    # Enclosing headings as (level, text, optional-here-or-in-an-ancestor); popped on same-or-higher level.
    stack: list[tuple[int, str, bool]] = []
    boxes: list[Box] = []
    for i in _unfenced(lines):
        line = lines[i]
        heading = _heading_at(line, i + 1)
        if heading is not None:
            while stack and stack[-1][0] >= heading.level:
                stack.pop()
            inherited = bool(stack) and stack[-1][2]
            stack.append((heading.level, heading.text, inherited or _is_optional(heading.text, names)))
            continue
        match = _BOX.match(line)
        if match is None:
            continue
        indent = _columns(match.group(1))
        boxes.append(
            Box(
                file=file,
                line=i + 1,
                text=(match.group(3) or "").strip(),
                checked=match.group(2) != " ",
                optional=bool(stack) and stack[-1][2],
                heading=stack[-1][1] if stack else None,
                indent=indent,
                verify=_verify_after(lines, i, indent),
            )
        )
    return boxes


def _verify_after(lines: list[str], index: int, indent: int) -> str | None:
    """The command of a "verify:" line directly under the box at `index`, if indented deeper than it."""
    if index + 1 >= len(lines):
        return None
    match = _VERIFY.match(lines[index + 1])
    if match is None or _columns(match.group(1)) <= indent:
        return None
    return match.group(2).strip() or None
