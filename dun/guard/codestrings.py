"""String literals in interpreter code: where they open and close (quotes, triple quotes, prefixes, Perl's q()/qq()
and qx(), Ruby's %q()/%x()), their escapes, and their interpolations (`{x}`, `${x}`, `#{x}`, `$x`), which become
unknown unless they name the home directory."""

from __future__ import annotations

import re

UNKNOWN = "${__dun_unknown}"
HOME, CWD, ARG = "\x01", "\x02", "\x03"  # sentinels for idioms found before the literals are read
QUOTE_OPEN = re.compile(r"(?<![\w\x00])([rRbBuUfF]{0,2})('''|\"\"\"|'|\"|`)"
                         r"|(?:(?<![\w$@%&])(q[qwx]?)|((?<![\w)\]'\"])%[qQwWx]|(?<![\w)\]'\"\s])%))([({\[<])")
_CLOSE = {"(": ")", "{": "}", "[": "]", "<": ">"}
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "0": "\0", "\\": "\\", "'": "'", '"': '"', "`": "`", "e": "\x1b"}
_INTERPOLATION = re.compile(r"#\{[^}]*\}|\$\{[^}]*\}|\$[A-Za-z_]\w*(?:\[[^\]]*\]|\{[^}]*\})?")


def param(index: int, params: list[str]) -> str:
    return params[index - 1] if 1 <= index <= len(params) else UNKNOWN


def string(code: str, m: re.Match[str], lang: str) -> tuple[str, int, bool]:
    """(raw body, index after the string, whether its quoting makes it a command) for the string opening at m."""
    name = m.group(3) or m.group(4)
    if name:  # q(...), qq{...}, qx(...), %x(...)
        opener = m.group(5)
        end = balanced(code, m.end(), opener, _CLOSE[opener])
        return code[m.end():end], end + 1, name in ("qx", "%x")
    quote = m.group(2)
    j = m.end()
    while j < len(code):
        if code[j] == "\\" and "r" not in m.group(1).lower():
            j += 2
            continue
        if code.startswith(quote, j):
            body = code[m.end():j]
            return (body if "r" in m.group(1).lower() else unescape(body)), j + len(quote), \
                quote == "`" and lang not in ("node", "deno", "bun")
        j += 1
    return code[m.end():], len(code), False


def balanced(code: str, start: int, opener: str, closer: str) -> int:
    depth = 1
    for j in range(start, len(code)):
        if code[j] == opener:
            depth += 1
        elif code[j] == closer:
            depth -= 1
            if depth == 0:
                return j
    return len(code)


def unescape(body: str) -> str:
    def one(m: re.Match[str]) -> str:
        esc = m.group(1)
        if esc[0] in "xX":
            return chr(int(esc[1:], 16))
        if esc[0].isdigit() and len(esc) > 1:
            return chr(int(esc, 8))
        return _ESCAPES.get(esc, "\\" + esc)

    return re.sub(r"\\(x[0-9a-fA-F]{2}|[0-7]{2,3}|.)", one, body, flags=re.S)


def inner(body: str, params: list[str], m: re.Match[str]) -> str:
    """A literal's text: idioms inside it resolved, other interpolations unknown."""
    body = body.replace(HOME, "~").replace(CWD, ".")
    body = re.sub(ARG + r"(-?\d+)" + ARG, lambda a: param(int(a.group(1)), params), body)
    interpolates = m.group(2) in ('"', "`", '"""') or "f" in (m.group(1) or "").lower() or (
        m.group(3) or m.group(4)) in ("qq", "qx", "%x", "%Q", "%W")
    if not interpolates:
        return body
    if "f" in (m.group(1) or "").lower():
        body = re.sub(r"\{[^}]*\}", UNKNOWN, body)
    return _INTERPOLATION.sub(lambda i: "~" if "HOME" in i.group(0) else UNKNOWN, body)
