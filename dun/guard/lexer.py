"""A POSIX/bash lexer for the guard: words keep their quoting and expansions apart, so `'$(x)'` stays literal while
`"$(x)"` is a command substitution; operators, redirections and here-document bodies come out as tokens.

`shlex` (even with `punctuation_chars`) cannot do this: it drops the quote context, splits `$(`, and knows nothing of
`<<EOF` bodies, `$'...'`, backticks or `2>&1`. This lexer follows the bash grammar for those and raises `ShellError`
on anything it cannot read (an unterminated quote or substitution), which the guard treats as a denial.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from dun.guard.scan import ShellError, ansi_c, backtick, match_brace, match_paren

__all__ = ["ShellError", "Token", "Word", "expand_body", "match_paren", "tokenize"]

LIT = "lit"  # unquoted literal text: tilde and glob expansion apply
QUOTED = "q"  # quoted or backslash-escaped literal text
VAR = "var"  # $NAME or ${...}; text is NAME or the expression inside the braces
CMD = "cmd"  # $(...) or `...`; text is the command string
PROC = "proc"  # <(...) or >(...); text is "<" or ">" followed by the command string
ARITH = "arith"  # $((...)); text is the expression

OPERATORS = ("&&", "||", ";;&", ";;", ";&", "|&", "|", "&", ";", "(", ")")
_REDIRECT = re.compile(r"(\d+|\{[A-Za-z_][A-Za-z0-9_]*\})?(<<<|<<-|<<|<>|<&|>&|>>|>\||&>>|&>|<|>)")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|[0-9@*#?$!-]")
_META = " \t\n|&;()<>"
_QUALIFIER = re.compile(r"\([-.@/=p*%rwxRWXsStfedDLNnoOaAmMcCuUgGFT^+:0-9,\[\]]+\)(?=[\s;|&)]|$)")


@dataclass(frozen=True)
class Part:
    kind: str
    text: str
    quoted: bool = False  # an expansion inside double quotes (no word splitting)


@dataclass
class Word:
    parts: list[Part]
    raw: str

    def literal(self) -> str | None:
        """The word's text when it has no expansions, else None."""
        if any(p.kind not in (LIT, QUOTED) for p in self.parts):
            return None
        return "".join(p.text for p in self.parts)

    def is_reserved(self, *names: str) -> bool:
        return len(self.parts) == 1 and self.parts[0].kind == LIT and self.parts[0].text in names


@dataclass
class Heredoc:
    delimiter: str
    quoted: bool
    strip_tabs: bool
    body: str = ""


@dataclass
class Token:
    kind: str  # "word", "op", "redir" or "newline"
    text: str = ""
    word: Word | None = None  # the word, or a redirection's target
    fd: str = ""
    heredoc: Heredoc | None = None


@dataclass
class _State:
    src: str
    i: int = 0
    tokens: list[Token] = field(default_factory=list)
    pending: list[Heredoc] = field(default_factory=list)


def tokenize(src: str) -> list[Token]:
    st = _State(src)
    n = len(src)
    while True:
        _skip_blanks(st)
        if st.i >= n:
            break
        c = src[st.i]
        if c == "\n":
            st.i += 1
            st.tokens.append(Token("newline"))
            _read_heredocs(st)
        elif c == "#":
            end = src.find("\n", st.i)
            st.i = n if end < 0 else end
        elif c in "<>" and src.startswith("(", st.i + 1):
            st.tokens.append(Token("word", word=_word(st)))
        elif m := _REDIRECT.match(src, st.i):
            st.i = m.end()
            _redirect(st, m.group(2), m.group(1) or "")
        elif op := next((o for o in OPERATORS if src.startswith(o, st.i)), None):
            st.i += len(op)
            st.tokens.append(Token("op", op))
        else:
            st.tokens.append(Token("word", word=_word(st)))
    if st.pending:
        _read_heredocs(st)
    return st.tokens


def _skip_blanks(st: _State) -> None:
    while st.i < len(st.src):
        if st.src[st.i] in " \t\r":
            st.i += 1
        elif st.src.startswith("\\\n", st.i):
            st.i += 2
        else:
            return


def _redirect(st: _State, op: str, fd: str) -> None:
    _skip_blanks(st)
    if st.i >= len(st.src) or (st.src[st.i] in "\n|&;()<>" and not st.src.startswith(("<(", ">("), st.i)):
        raise ShellError(f"redirection {op} without a target")
    target = _word(st)
    tok = Token("redir", op, word=target, fd=fd)
    if op in ("<<", "<<-"):
        delim = "".join(p.text if p.kind in (LIT, QUOTED) else "$" + p.text for p in target.parts)
        tok.heredoc = Heredoc(delim, any(p.kind == QUOTED for p in target.parts), op == "<<-")
        st.pending.append(tok.heredoc)
    st.tokens.append(tok)


def _read_heredocs(st: _State) -> None:
    for doc in st.pending:
        lines: list[str] = []
        while st.i < len(st.src):
            end = st.src.find("\n", st.i)
            line = st.src[st.i:] if end < 0 else st.src[st.i:end]
            st.i = len(st.src) if end < 0 else end + 1
            if (line.lstrip("\t") if doc.strip_tabs else line) == doc.delimiter:
                break
            lines.append(line.lstrip("\t") if doc.strip_tabs else line)
        doc.body = "".join(line + "\n" for line in lines)
    st.pending = []


def _word(st: _State) -> Word:
    src, start = st.src, st.i
    parts: list[Part] = []
    buf: list[str] = []

    def flush(kind: str = LIT) -> None:
        if buf:
            parts.append(Part(kind, "".join(buf)))
            buf.clear()

    if src[st.i] in "<>" and src.startswith("(", st.i + 1):
        end = match_paren(src, st.i + 2)
        parts.append(Part(PROC, src[st.i] + src[st.i + 2:end]))
        st.i = end + 1
    while st.i < len(src):
        c = src[st.i]
        if c in _META:
            if c == "(" and buf and (buf[-1] in "=!@+*?" or (_QUALIFIER.match(src, st.i) and set(buf) & set("*?"))):
                # array assignment a=(x y), extglob !(x), a zsh glob qualifier *.ts(.N)
                end = match_paren(src, st.i + 1)
                buf.append(src[st.i:end + 1])
                st.i = end + 1
                continue
            break
        if c == "\\":
            if src.startswith("\\\n", st.i):
                st.i += 2
                continue
            flush()
            parts.append(Part(QUOTED, src[st.i + 1:st.i + 2] or "\\"))
            st.i += 2
        elif c == "'":
            end = src.find("'", st.i + 1)
            if end < 0:
                raise ShellError("unterminated single quote")
            flush()
            parts.append(Part(QUOTED, src[st.i + 1:end]))
            st.i = end + 1
        elif c == '"':
            flush()
            st.i = _double(src, st.i + 1, parts, '"')
        elif src.startswith("$'", st.i):
            flush()
            st.i, text = ansi_c(src, st.i + 2)
            parts.append(Part(QUOTED, text))
        elif src.startswith('$"', st.i):
            flush()
            st.i = _double(src, st.i + 2, parts, '"')
        elif c in "$`" and (part := _expansion(src, st)) is not None:
            flush()
            parts.append(part)
        else:
            buf.append(c)
            st.i += 1
    flush()
    return Word(parts, src[start:st.i])


def _expansion(src: str, st: _State) -> Part | None:
    """`$...` or a backtick at st.i: the expansion part (st.i moves past it), or None for a literal `$`."""
    i = st.i
    if src[i] == "`":
        end, body = backtick(src, i + 1)
        st.i = end + 1
        return Part(CMD, body)
    if src.startswith("$((", i):
        end = match_paren(src, i + 2)
        st.i = end + 1
        if src[end - 1] == ")":
            return Part(ARITH, src[i + 3:end - 1])
        return Part(CMD, src[i + 2:end])  # $( (subshell) ) written without the space
    if src.startswith("$(", i):
        end = match_paren(src, i + 2)
        st.i = end + 1
        return Part(CMD, src[i + 2:end])
    if src.startswith("${", i):
        end = match_brace(src, i + 2)
        st.i = end + 1
        return Part(VAR, src[i + 2:end])
    m = _NAME.match(src, i + 1)
    if m is None:
        return None
    st.i = m.end()
    return Part(VAR, m.group(0))


def _double(src: str, i: int, parts: list[Part], close: str) -> int:
    """Parse the inside of "..." (or a here-document body when close is ''); return the index after the end."""
    buf: list[str] = []
    st = _State(src, i)

    def flush() -> None:
        if buf:
            parts.append(Part(QUOTED, "".join(buf)))
            buf.clear()

    while st.i < len(src):
        c = src[st.i]
        if close and c == close:
            flush()
            return st.i + 1
        if c == "\\" and st.i + 1 < len(src) and src[st.i + 1] in "$`\\\n" + close:
            if src[st.i + 1] != "\n":
                buf.append(src[st.i + 1])
            st.i += 2
        elif c in "$`" and (part := _expansion(src, st)) is not None:
            flush()
            parts.append(Part(part.kind, part.text, True))
        else:
            buf.append(c)
            st.i += 1
    if close:
        raise ShellError("unterminated double quote")
    flush()
    return st.i


def expand_body(body: str) -> Word:
    """An unquoted here-document body: expansions apply, quotes are literal."""
    parts: list[Part] = []
    _double(body, 0, parts, "")
    return Word(parts, body)
