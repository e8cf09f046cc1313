"""A program's string literals, and the expressions that build paths and commands out of them folded into one
literal each (`'rm -rf ' + os.path.expanduser('~')`, `os.path.join('/etc', f)`, `Path.home() / '.ssh'`,
`''.join([...])`), innermost first; code.py looks at the calls around what is left."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from dun.guard import codeapi as api
from dun.guard import codemore as more
from dun.guard.codestrings import UNKNOWN

_LIT = re.compile(r"\x00(\d+)\x00")
_MAX_FOLD_ROUNDS = 16
_L = r"\x00(\d+)\x00"
_IDENT = r"\$?[A-Za-z_][\w.]*(?:\[[^\]\x00]*\])?(?:\(\))?"


@dataclass
class Program:
    skeleton: str  # the code with every literal replaced by \x00N\x00
    values: list[str]  # the literals' texts (unknown parts as UNKNOWN)
    exec_literals: list[int] = field(default_factory=list)  # literals that are commands by their quoting (`...`)

    def literal(self, text: str) -> int:
        self.values.append(text)
        return len(self.values) - 1

    def lit(self, index: int) -> str:
        return f"\x00{index}\x00"


_FOLDS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(rf"(?:{api.PASS_THROUGH.pattern})\s*\(\s*{_L}\s*(?:,[^()]*)?\)"), "pass"),
    (re.compile(rf"{_L}\s*\.\s*(?:expanduser|resolve|absolute|expand_path|to_s|toString)\s*\(\s*\)"), "pass"),
    (re.compile(rf"(?:{api.JOIN_CALLS.pattern})\s*\(\s*{_L}((?:\s*,\s*(?:{_L}|{_IDENT}))+)\s*\)"), "join"),
    (re.compile(rf"{_L}\s*\.\s*joinpath\s*\(\s*({_L}(?:\s*,\s*{_L})*)\s*\)"), "joinpath"),
    (re.compile(rf"{_L}\s*\.\s*join\s*\(\s*\[\s*({_L}(?:\s*,\s*{_L})*)\s*,?\s*\]\s*\)"), "strjoin"),
    (re.compile(rf"{_L}\s*(?:\+|\.\.|\.(?=\s*\x00)|\s\.\s)\s*{_L}"), "concat"),
    (re.compile(rf"{_L}\s*/\s*{_L}"), "slash"),
    (re.compile(rf"{_L}\s*(?:\+|\s\.\s|\.\.)\s*{_IDENT}"), "concat-unknown"),
    (re.compile(rf"(?<![\w\x00]){_IDENT}\s*(?:\+|\s\.\s|\.\.)\s*{_L}"), "unknown-concat"),
    *more.FOLDS,
    *more.JOIN_FOLDS,
)


def fold(prog: Program, lang: str) -> None:
    """Fold every foldable expression, innermost first, until nothing changes (each round is one pass per pattern);
    a variable assigned a literal stands for it from there on."""
    folds = _FOLDS + more.AWK_FOLDS if lang == "awk" else _FOLDS
    for _ in range(_MAX_FOLD_ROUNDS):
        before = prog.skeleton
        prog.skeleton = more.callable_names(more.substitute_variables(prog.skeleton), prog.values)
        for pattern, kind in folds:
            def fold(m: re.Match[str], kind: str = kind) -> str:
                return prog.lit(prog.literal(_folded(prog, kind, m)))

            prog.skeleton = pattern.sub(fold, prog.skeleton)
        if prog.skeleton == before:
            return


def _folded(prog: Program, kind: str, m: re.Match[str]) -> str:
    values = [prog.values[int(i)] for i in _LIT.findall(m.group(0))]
    if kind in more.FOLD_KINDS:
        return more.folded(kind, values)
    if kind == "join":  # os.path.join('/etc', f): what it cannot know is unknown
        values = [prog.values[int(m.group(1))]] + [
            prog.values[int(lit.group(1))] if (lit := _LIT.fullmatch(a.strip())) else UNKNOWN
            for a in top_level_split(m.group(2))[1:]]
    if kind == "pass":
        return values[0]
    if kind in ("join", "joinpath", "slash"):
        return "/".join(v.rstrip("/") if n < len(values) - 1 else v for n, v in enumerate(values))
    if kind == "strjoin":
        return values[0].join(values[1:])
    if kind == "concat":
        return values[0] + values[1]
    return values[0] + UNKNOWN if kind == "concat-unknown" else UNKNOWN + values[0]


def top_level_split(region: str) -> list[str]:
    parts: list[str] = []
    buf: list[str] = []
    depth = 0
    for ch in region:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(buf))
            buf = []
        else:
            buf.append(ch)
    parts.append("".join(buf))
    return parts
