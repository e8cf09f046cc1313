"""Read an interpreter's program (python -c, perl -e, node -e, awk '...', a heredoc fed to python3 -) for what it
does to the machine: the shell commands it runs, the files it deletes and writes, and whether it evaluates code it
decodes at run time.

This is not a parser for eight languages. It finds the string literals, folds the expressions that build paths and
commands out of them (`'rm -rf ' + os.path.expanduser('~')`, `os.path.join('/etc', f)`, `Path.home() / '.ssh'`,
`''.join([...])`), and looks at the calls around them (codeapi.py). A part it cannot know (a variable, `{x}` in an
f-string) becomes an unknown shell variable, so `rm -rf {x}` is still an unresolved recursive delete.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field

from dun.guard import codeapi as api

UNKNOWN = "${__dun_unknown}"
_HOME, _CWD, _ARG = "\x01", "\x02", "\x03"
_LIT = re.compile(r"\x00(\d+)\x00")
_L = r"\x00(\d+)\x00"
_IDENT = r"\$?[A-Za-z_][\w.]*(?:\[[^\]\x00]*\])?(?:\(\))?"
_QUOTE_OPEN = re.compile(r"(?<![\w\x00])([rRbBuUfF]{0,2})('''|\"\"\"|'|\"|`)"
                         r"|(?:(?<![\w$@%&])(q[qwx]?)|(?<![\w)\]'\"\s])(%[qQwWx]?))([({\[<])")
_CLOSE = {"(": ")", "{": "}", "[": "]", "<": ">"}
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "0": "\0", "\\": "\\", "'": "'", '"': '"', "`": "`", "e": "\x1b"}
_INTERPOLATION = re.compile(r"#\{[^}]*\}|\$\{[^}]*\}|\$[A-Za-z_]\w*(?:\[[^\]]*\]|\{[^}]*\})?")
_SHELL_NAMES = frozenset({"sh", "bash", "zsh", "dash", "ksh", "ash", "fish"})


@dataclass
class CodeFacts:
    commands: list[str] = field(default_factory=list)  # shell command lines it runs
    deletes: list[tuple[str, bool]] = field(default_factory=list)  # (path text, recursive)
    writes: list[str] = field(default_factory=list)
    unseen: bool = False  # it evaluates code it decodes or reads at run time, or pipes its output into a shell


@dataclass
class _Program:
    skeleton: str  # the code with every literal replaced by \x00N\x00
    values: list[str]  # the literals' texts (unknown parts as UNKNOWN)
    exec_literals: list[int] = field(default_factory=list)  # literals that are commands by their quoting (`...`)

    def literal(self, text: str) -> int:
        self.values.append(text)
        return len(self.values) - 1

    def lit(self, index: int) -> str:
        return f"\x00{index}\x00"


def scan(code: str, lang: str, params: list[str]) -> CodeFacts:
    prog = _read(code, lang, params)
    _fold(prog)
    out = CodeFacts()
    skeleton = prog.skeleton
    calls = _exec_calls(prog, code)
    if calls or prog.exec_literals:
        out.commands = _commands(prog, calls)
    if api.EVAL_CALLS.search(skeleton) and api.DECODERS.search(code):
        out.unseen = True  # exec(b64decode(...)), eval(pack(...)), exec(open(...).read())
    if any(api.DECODERS.search(region) for region in calls):
        out.unseen = True  # os.system(b64decode(...).decode())
    out.deletes = _deletes(prog)
    out.writes = _writes(prog)
    out.unseen = out.unseen or any(shlex_words(c)[:1] and shlex_words(c)[0].rsplit("/", 1)[-1] in _SHELL_NAMES
                                   and len(shlex_words(c)) == 1 for c in out.commands)
    return out


def shlex_words(text: str) -> list[str]:
    try:
        return shlex.split(text)
    except ValueError:
        return []


def _read(code: str, lang: str, params: list[str]) -> _Program:
    """Split the code into literals and the rest; idioms for HOME, the cwd and the parameters become literals."""
    code = api.HOME_IDIOMS.sub(_HOME, code)
    code = api.CWD_IDIOMS.sub(_CWD, code)
    code = api.ARGV.sub(lambda m: _ARG + str(_param_index(m)) + _ARG, code)
    prog = _Program("", [])
    parts: list[str] = []
    i = 0
    while i < len(code):
        m = _QUOTE_OPEN.search(code, i)
        if m is None:
            parts.append(_idioms(code[i:], prog, params))
            break
        parts.append(_idioms(code[i:m.start()], prog, params))
        body, i, is_exec = _string(code, m, lang)
        index = prog.literal(_inner(body, params, m))
        if is_exec:
            prog.exec_literals.append(index)
        parts.append(prog.lit(index))
    prog.skeleton = "".join(parts)
    return prog


def _param_index(m: re.Match[str]) -> int:
    for group, base in zip(m.groups(), api.ARGV_BASE, strict=True):
        if group is not None:
            return int(group) + base
    return -1


def _param(index: int, params: list[str]) -> str:
    return params[index - 1] if 1 <= index <= len(params) else UNKNOWN


def _idioms(text: str, prog: _Program, params: list[str]) -> str:
    if _HOME in text:
        text = text.replace(_HOME, prog.lit(prog.literal("~")))
    if _CWD in text:
        text = text.replace(_CWD, prog.lit(prog.literal(".")))
    return re.sub(_ARG + r"(-?\d+)" + _ARG, lambda m: prog.lit(prog.literal(_param(int(m.group(1)), params))), text)


def _string(code: str, m: re.Match[str], lang: str) -> tuple[str, int, bool]:
    """(raw body, index after the string, whether its quoting makes it a command) for the string opening at m."""
    name = m.group(3) or m.group(4)
    if name:  # q(...), qq{...}, qx(...), %x(...)
        opener = m.group(5)
        end = _balanced(code, m.end(), opener, _CLOSE[opener])
        return code[m.end():end], end + 1, name in ("qx", "%x")
    quote = m.group(2)
    j = m.end()
    while j < len(code):
        if code[j] == "\\" and "r" not in m.group(1).lower():
            j += 2
            continue
        if code.startswith(quote, j):
            body = code[m.end():j]
            return (body if "r" in m.group(1).lower() else _unescape(body)), j + len(quote), \
                quote == "`" and lang not in ("node", "deno", "bun")
        j += 1
    return code[m.end():], len(code), False


def _balanced(code: str, start: int, opener: str, closer: str) -> int:
    depth = 1
    for j in range(start, len(code)):
        if code[j] == opener:
            depth += 1
        elif code[j] == closer:
            depth -= 1
            if depth == 0:
                return j
    return len(code)


def _unescape(body: str) -> str:
    def one(m: re.Match[str]) -> str:
        esc = m.group(1)
        if esc[0] in "xX":
            return chr(int(esc[1:], 16))
        if esc[0].isdigit() and len(esc) > 1:
            return chr(int(esc, 8))
        return _ESCAPES.get(esc, "\\" + esc)

    return re.sub(r"\\(x[0-9a-fA-F]{2}|[0-7]{2,3}|.)", one, body, flags=re.S)


def _inner(body: str, params: list[str], m: re.Match[str]) -> str:
    """A literal's text: idioms inside it resolved, other interpolations unknown."""
    body = body.replace(_HOME, "~").replace(_CWD, ".")
    body = re.sub(_ARG + r"(-?\d+)" + _ARG, lambda a: _param(int(a.group(1)), params), body)
    interpolates = m.group(2) in ('"', "`", '"""') or "f" in (m.group(1) or "").lower() or (
        m.group(3) or m.group(4)) in ("qq", "qx", "%x", "%Q", "%W")
    if not interpolates:
        return body
    if "f" in (m.group(1) or "").lower():
        body = re.sub(r"\{[^}]*\}", UNKNOWN, body)
    return _INTERPOLATION.sub(lambda i: "~" if "HOME" in i.group(0) else UNKNOWN, body)


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
)


def _fold(prog: _Program) -> None:
    for _ in range(64):
        for pattern, kind in _FOLDS:
            m = pattern.search(prog.skeleton)
            if m is not None:
                text = _folded(prog, kind, m)
                prog.skeleton = prog.skeleton[:m.start()] + prog.lit(prog.literal(text)) + prog.skeleton[m.end():]
                break
        else:
            return


def _folded(prog: _Program, kind: str, m: re.Match[str]) -> str:
    values = [prog.values[int(i)] for i in _LIT.findall(m.group(0))]
    if kind == "join":  # os.path.join('/etc', f): what it cannot know is unknown
        values = [prog.values[int(m.group(1))]] + [
            prog.values[int(lit.group(1))] if (lit := _LIT.fullmatch(a.strip())) else UNKNOWN
            for a in _top_level_split(m.group(2))[1:]]
    if kind == "pass":
        return values[0]
    if kind in ("join", "joinpath", "slash"):
        return "/".join(v.rstrip("/") if n < len(values) - 1 else v for n, v in enumerate(values))
    if kind == "strjoin":
        return values[0].join(values[1:])
    if kind == "concat":
        return values[0] + values[1]
    return values[0] + UNKNOWN if kind == "concat-unknown" else UNKNOWN + values[0]


def _region(skeleton: str, start: int) -> str:
    """The argument text of a call whose name ends at `start`: up to the matching `)`, or to the statement's end."""
    rest = skeleton[start:]
    stripped = rest.lstrip()
    if stripped.startswith("("):
        at = start + len(rest) - len(stripped)
        return skeleton[at + 1:_balanced(skeleton, at + 1, "(", ")")]
    end = re.search(r"[;\n}]", rest)
    return rest if end is None else rest[:end.start()]


def _exec_calls(prog: _Program, code: str) -> list[str]:
    """The argument regions of the calls that run commands."""
    found = list(api.EXEC_CALLS.finditer(prog.skeleton))
    if "subprocess" in code:
        found += list(api.SUBPROCESS_CALLS.finditer(prog.skeleton))
    return [_region(prog.skeleton, m.end() - (1 if prog.skeleton[m.end() - 1] in "('\" " else 0)) for m in found]


def _argv_join(texts: list[str]) -> str:
    """An argv as a command line: words quoted where they need it, but `~` and unknown parts left to expand."""
    out = []
    for t in texts:
        if re.fullmatch(r"[\w@%+=:,./~-]+", t):
            out.append(t)
        elif UNKNOWN in t:
            out.append('"' + t.replace('"', '\\"') + '"')
        else:
            out.append(shlex.quote(t))
    return " ".join(out)


def _commands(prog: _Program, regions: list[str]) -> list[str]:
    out = [prog.values[i] for i in prog.exec_literals]
    for region in regions:
        texts = [prog.values[int(i)] for i in _LIT.findall(region)]
        if len(texts) > 1:
            out.append(_argv_join(texts))
            out.append("".join(texts))
    out += [v for v in prog.values if v.strip()]  # a command built earlier: cmd = '...'; os.system(cmd)
    return list(dict.fromkeys(out))


def _path_like(text: str) -> bool:
    return bool(text) and " " not in text.strip() and (text.startswith(("/", "~", ".", UNKNOWN)) or "/" in text
                                                       or "*" in text)


def _fallback_paths(prog: _Program) -> list[str]:
    return [v for v in (prog.values[int(i)] for i in _LIT.findall(prog.skeleton)) if _path_like(v)]


def _deletes(prog: _Program) -> list[tuple[str, bool]]:
    out: list[tuple[str, bool]] = []
    for pattern, recursive in api.DELETE_CALLS:
        for m in pattern.finditer(prog.skeleton):
            if m.group(0).startswith("recursive"):
                continue
            region = _region(prog.skeleton, m.end())
            first = _LIT.search(region)
            targets = [prog.values[int(first.group(1))]] if first else _fallback_paths(prog)
            is_tree = recursive or bool(re.search(r"recursive", region))
            out += [(t, is_tree) for t in targets]
    for m in api.PATH_METHODS.finditer(prog.skeleton):
        if m.group(1) in ("unlink", "rmdir"):
            before = re.search(rf"{_L}\s*$", prog.skeleton[:m.start()])
            targets = [prog.values[int(before.group(1))]] if before else _fallback_paths(prog)
            out += [(t, False) for t in targets]
    return out


def _writes(prog: _Program) -> list[str]:
    out: list[str] = []
    skeleton = prog.skeleton
    for m in api.OPEN_CALLS.finditer(skeleton):  # open(path, 'w'): only a mode that writes
        args = [a.strip() for a in _top_level_split(_region(skeleton, m.end() - 1))]
        lits = [_LIT.fullmatch(a) for a in args[:2]]
        if len(lits) == 2 and lits[0] and lits[1] and re.search(r"[wax+]", prog.values[int(lits[1].group(1))]):
            out.append(prog.values[int(lits[0].group(1))])
    for pattern, index in api.WRITE_CALLS:
        for m in pattern.finditer(skeleton):
            args = [a.strip() for a in _top_level_split(_region(skeleton, m.end() - (skeleton[m.end() - 1] == "(")))]
            if len(args) > index and (lit := _LIT.fullmatch(args[index])):
                out.append(prog.values[int(lit.group(1))])
    for m in api.PATH_METHODS.finditer(skeleton):
        before = re.search(rf"{_L}\s*$", skeleton[:m.start()])
        if before and m.group(1) not in ("unlink", "rmdir"):
            out.append(prog.values[int(before.group(1))])
    for m in re.finditer(rf"\bopen\s*\(?\s*[\w$]+\s*,\s*{_L}(?:\s*,\s*{_L})?", skeleton):  # perl open
        mode = prog.values[int(m.group(1))]
        if mode.lstrip().startswith((">", "+<", "+>")):
            out.append(prog.values[int(m.group(2))] if m.group(2) else mode.lstrip("+<> "))
    for m in re.finditer(rf"\bprintf?\b[^;{{}}]*?>>?\s*\(?\s*{_L}", skeleton):  # awk: print > "file"
        out.append(prog.values[int(m.group(1))])
    return out


def _top_level_split(region: str) -> list[str]:
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
