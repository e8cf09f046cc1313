"""zsh's and fish's own syntax, written out as POSIX shell so the walker judges what `zsh -c`/`fish -c` code runs
instead of denying it as unparseable: zsh's short loops (`for f (*.py) echo $f`, `repeat 3 ...`), `${(j:,:)x}` and
`=(cmd)`; fish's blocks (`for ...; ...; end`, `if`, `while`, `begin`, `function`), `(cmd)` substitutions, `and`/`or`/
`not` and `set NAME VALUE`. fish code is always rewritten, zsh code only when it does not parse as it is; what
the rewrite cannot make parse is still unparseable, and denied.
"""

from __future__ import annotations

import re

from dun.guard.lexer import ShellError
from dun.guard.shell import parse

_ZSH_FOR = re.compile(r"\bfor\s+(\w+)\s*\(([^)]*)\)\s*(?!do\b)([^;\n{]+)")
_FISH_SUB = re.compile(r"(?<![$\w\\'\"])\(")
_OPENS = {"for": "done", "while": "done", "if": "fi", "begin": "}", "function": "}"}


def posix(prog: str, text: str) -> str:
    if prog == "fish":  # never POSIX: `and`, `or`, `begin` and `end` are its own words
        return _fish(text)
    if prog != "zsh":
        return text
    try:
        parse(text)
        return text
    except ShellError:
        pass
    return _fish(text) if prog == "fish" else _zsh(text)


def _zsh(text: str) -> str:
    text = _ZSH_FOR.sub(lambda m: f"for {m[1]} in {m[2]}; do {m[3].strip()}; done", text)
    text = re.sub(r"\brepeat\s+\d+\s+", "", text)
    text = re.sub(r"\$\{\([^)]*\)(\w+)\}", r"${\1}", text)  # ${(j:,:)path}: the parameter, joined
    return re.sub(r"(?<![\w$<>])=\(", "<(", text)  # =(cmd): a temporary file holding cmd's output


def _fish(text: str) -> str:
    out: list[str] = []
    ends: list[str] = []
    for statement in (s.strip() for s in re.split(r"[;\n]", text)):
        if not statement:
            continue
        statement = _FISH_SUB.sub("$(", statement)
        word, _, rest = statement.partition(" ")
        if word in _OPENS:
            ends.append(_OPENS[word])
            piece = {"for": f"{statement}; do", "while": f"while {rest}; do", "if": f"if {rest}; then",
                     "begin": "{", "function": f"{rest.split()[0] if rest else 'f'}() {{"}[word]
        elif word == "else":
            piece = f"elif {rest[3:]}; then" if rest.startswith("if ") else "else"
        elif word == "end":
            piece = ends.pop() if ends else "true"
        elif word in ("and", "or") and out:
            out[-1] += f" {'&&' if word == 'and' else '||'} {rest}"
            continue
        elif word == "not":
            piece = f"! {rest}"
        elif word == "set" and (names := [w for w in rest.split() if not w.startswith("-")]):
            piece = f"{names[0]}=\"{' '.join(names[1:])}\""
        else:
            piece = statement
        out.append(piece)
    text = ""
    for piece in out:
        text += (" " if text.endswith((" do", " then", "{", "else")) else "; " if text else "") + piece
    return text
