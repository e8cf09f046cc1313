"""Scanning helpers for the lexer: find where a quote, a backquote, `$(...)` or `${...}` ends."""

from __future__ import annotations

import re

_ANSI = {"n": "\n", "t": "\t", "r": "\r", "a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b", "f": "\f", "v": "\v",
         "\\": "\\", "'": "'", '"': '"', "?": "?"}


class ShellError(ValueError):
    """The command line cannot be read as shell."""


def ansi_c(src: str, i: int) -> tuple[int, str]:
    """Decode a $'...' string whose body starts at i: (index after the closing quote, text)."""
    out: list[str] = []
    while i < len(src):
        c = src[i]
        if c == "'":
            return i + 1, "".join(out)
        if c == "\\" and i + 1 < len(src):
            nxt = src[i + 1]
            if nxt in _ANSI:
                out.append(_ANSI[nxt])
                i += 2
            elif m := re.match(r"x([0-9A-Fa-f]{1,2})|([0-7]{1,3})", src[i + 1:i + 4]):
                out.append(chr(int(m.group(1), 16) if m.group(1) else int(m.group(2), 8)))
                i += 1 + m.end()
            else:
                out.append("\\" + nxt)
                i += 2
        else:
            out.append(c)
            i += 1
    raise ShellError("unterminated $'...' quote")


def backtick(src: str, i: int) -> tuple[int, str]:
    """A `...` substitution whose body starts at i: (index of the closing backquote, unescaped body)."""
    out: list[str] = []
    while i < len(src):
        c = src[i]
        if c == "`":
            return i, "".join(out)
        if c == "\\" and i + 1 < len(src) and src[i + 1] in "`$\\":
            out.append(src[i + 1])
            i += 2
        else:
            out.append(c)
            i += 1
    raise ShellError("unterminated backquote")


def _skip_quoted(src: str, i: int) -> int:
    """src[i] opens a quote or substitution inside a $(...) scan; return the index of its last character."""
    c = src[i]
    if c == "\\":
        return i + 1
    if c == "'":
        end = src.find("'", i + 1)
        if end < 0:
            raise ShellError("unterminated single quote")
        return end
    if c == "`":
        return backtick(src, i + 1)[0]
    if c == "$" and src.startswith("$(", i):
        return match_paren(src, i + 2)
    j = i + 1  # double quote
    while j < len(src):
        if src[j] == "\\":
            j += 2
            continue
        if src[j] == '"':
            return j
        if src[j] in "`$" and (src[j] == "`" or src.startswith("$(", j)):
            j = _skip_quoted(src, j)
        j += 1
    raise ShellError("unterminated double quote")


def _match_close(src: str, i: int, opening: str, closing: str, what: str) -> int:
    """The index of the `closing` that balances an `opening` ending just before i (quotes, escapes, nesting)."""
    depth = 1
    while i < len(src):
        c = src[i]
        if c in "\\'\"`" or src.startswith("$(", i):
            i = _skip_quoted(src, i) + 1
            continue
        if c == opening:
            depth += 1
        elif c == closing:
            depth -= 1
            if depth == 0:
                return i
        i += 1
    raise ShellError(f"unterminated {what}")


def match_paren(src: str, i: int) -> int:
    """The index of the `)` closing a `(` that ends just before i."""
    return _match_close(src, i, "(", ")", "parenthesis or $(...)")


def match_brace(src: str, i: int) -> int:
    return _match_close(src, i, "{", "}", "${...}")
