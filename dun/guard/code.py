"""Read an interpreter's program (python -c, perl -e, node -e, awk '...', a heredoc fed to python3 -) for what it
does to the machine: the shell commands it runs, the files it deletes and writes, and whether it evaluates code it
decodes at run time.

This is not a parser for eight languages. It finds the string literals, folds the expressions that build paths and
commands out of them (codefold.py), and looks at the calls around them (codeapi.py). A part it cannot know (a
variable, `{x}` in an f-string) becomes an unknown shell variable, so `rm -rf {x}` is still an unresolved recursive
delete.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field

from dun.guard import codeapi as api
from dun.guard import codemore as more
from dun.guard.codefold import Program, fold, top_level_split
from dun.guard.codestrings import ARG, CWD, HOME, QUOTE_OPEN, UNKNOWN, balanced, inner, param, string

_LIT = re.compile(r"\x00(\d+)\x00")
_L = r"\x00(\d+)\x00"
_SHELL_NAMES = frozenset({"sh", "bash", "zsh", "dash", "ksh", "ash", "fish"})


@dataclass
class CodeFacts:
    commands: list[str] = field(default_factory=list)  # shell command lines it runs
    deletes: list[tuple[str, bool]] = field(default_factory=list)  # (path text, recursive)
    writes: list[str] = field(default_factory=list)
    unseen: bool = False  # it evaluates code it decodes or reads at run time, or pipes its output into a shell
    chdir: str | None = None  # the directory it changes into, which its relative paths and commands start from
    queries: list[str] = field(default_factory=list)  # SQL it sends, deletes of every row through an ORM


def scan(code: str, lang: str, params: list[str], depth: int = 0) -> CodeFacts:
    prog = _read(code, lang, params)
    fold(prog, lang)
    out = CodeFacts()
    skeleton = prog.skeleton
    prog.skeleton = more.strip_local_scripts(prog.skeleton, prog.values)
    calls = _exec_calls(prog, code)
    if calls or prog.exec_literals:
        out.commands = _commands(prog, calls)
    out.commands += more.piped_commands(skeleton, prog.values, lang) + more.http_deletes(skeleton, prog.values)
    out.queries = more.code_queries(skeleton, prog.values)
    if api.EVAL_CALLS.search(skeleton) and api.DECODERS.search(more.without_local_scripts(code)):
        out.unseen = True  # exec(b64decode(...)), eval(pack(...)), exec(open(...).read())
    if any(api.DECODERS.search(region) for region in calls):
        out.unseen = True  # os.system(b64decode(...).decode())
    out.deletes = _deletes(prog) + more.callback_deletes(skeleton, prog.values)
    out.chdir = more.chdir_target(skeleton, prog.values)
    out.writes = _writes(prog, lang) + more.opened_for_writing(skeleton, prog.values)
    out.unseen = out.unseen or any(shlex_words(c)[:1] and shlex_words(c)[0].rsplit("/", 1)[-1] in _SHELL_NAMES
                                   and len(shlex_words(c)) == 1 for c in out.commands)
    if depth < 3:  # exec('...'), eval "...", new Function('...'): the string is code in the same language
        for text in more.evaluated(skeleton, prog.values, api.EVAL_CALLS):
            inner = scan(text, lang, params, depth + 1)
            out.commands += inner.commands
            out.deletes += inner.deletes
            out.writes += inner.writes
            out.queries += inner.queries
            out.unseen = out.unseen or inner.unseen
    return out


def literals(code: str, lang: str) -> list[str] | None:
    """The strings a program holds once its expressions are folded; None when one is built from what the guard
    cannot know, or the program decodes text at run time."""
    if api.DECODERS.search(code):
        return None
    prog = _read(code, lang, [])
    fold(prog, lang)
    values = [prog.values[int(i)] for i in _LIT.findall(prog.skeleton)]
    return None if any(UNKNOWN in v for v in values) else values


def shlex_words(text: str) -> list[str]:
    try:
        return shlex.split(text)
    except ValueError:
        return []


def _read(code: str, lang: str, params: list[str]) -> Program:
    """Split the code into literals and the rest; idioms for HOME, the cwd and the parameters become literals."""
    code = api.HOME_IDIOMS.sub(HOME, more.normalize_imports(code))
    code = api.SITE_IDIOMS.sub(lambda m: "'~/.local/lib/python3/site-packages'" if "user" in m.group(0).lower() else
                               "'/usr/lib/python3/site-packages'", code)  # where .pth and sitecustomize.py go
    code = api.CWD_IDIOMS.sub(CWD, code)
    code = more.perl_shifts(code) if lang == "perl" else code
    code = more.argv_lists(code, params)
    code = api.ARGV.sub(lambda m: ARG + str(_param_index(m, lang)) + ARG, code)
    prog = Program("", [])
    parts: list[str] = []
    i = 0
    while i < len(code):
        m = QUOTE_OPEN.search(code, i)
        if m is None:
            parts.append(_idioms(code[i:], prog, params))
            break
        parts.append(_idioms(code[i:m.start()], prog, params))
        body, i, is_exec = string(code, m, lang)
        index = prog.literal(inner(body, params, m))
        if is_exec:
            prog.exec_literals.append(index)
        parts.append(prog.lit(index))
    prog.skeleton = "".join(parts)
    return prog


def _param_index(m: re.Match[str], lang: str) -> int:
    for n, (group, base) in enumerate(zip(m.groups(), api.ARGV_BASE, strict=True)):
        if group is not None:
            return int(group) + (0 if lang == "awk" and n == 3 else base)  # awk's ARGV[1] is the first parameter
    return -1


def _idioms(text: str, prog: Program, params: list[str]) -> str:
    if HOME in text:
        text = text.replace(HOME, prog.lit(prog.literal("~")))
    if CWD in text:
        text = text.replace(CWD, prog.lit(prog.literal(".")))
    return re.sub(ARG + r"(-?\d+)" + ARG, lambda m: prog.lit(prog.literal(param(int(m.group(1)), params))), text)


def _region(skeleton: str, start: int) -> str:
    """The argument text of a call whose name ends at `start`: up to the matching `)`, or to the statement's end."""
    rest = skeleton[start:]
    stripped = rest.lstrip()
    if stripped.startswith("("):
        at = start + len(rest) - len(stripped)
        return skeleton[at + 1:balanced(skeleton, at + 1, "(", ")")]
    end = re.search(r"[;\n}]", rest)
    return rest if end is None else rest[:end.start()]


def _exec_calls(prog: Program, code: str) -> list[str]:
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


def _commands(prog: Program, regions: list[str]) -> list[str]:
    out = [prog.values[i] for i in prog.exec_literals]
    for region in regions:
        texts = [prog.values[int(i)] for i in _LIT.findall(region)]
        if len(texts) > 1:
            out.append(_argv_join(texts))
            out.append("".join(texts))
        if len(texts) > 2 and texts[0].rsplit("/", 1)[-1] == texts[1]:  # os.spawnlp(P_WAIT, 'git', 'git', ...)
            out.append(_argv_join(texts[1:]))
    # A command built earlier: cmd = '...'; os.system(cmd). Only what is left after folding: the parts folded into
    # a longer string are not commands of their own ('rm -rf ' + os.getcwd() + '/dist' is not `rm -rf .`).
    out += [prog.values[int(i)] for i in _LIT.findall(prog.skeleton) if prog.values[int(i)].strip()]
    return list(dict.fromkeys(out))


def _path_like(text: str) -> bool:
    return bool(text) and " " not in text.strip() and (text.startswith(("/", "~", ".", UNKNOWN)) or "/" in text
                                                       or "*" in text)


def _fallback_paths(prog: Program) -> list[str]:
    """The path-like literals of the program, for a delete whose argument is not one; a directory the code lists
    stands for the things under it."""
    out = []
    for i in _LIT.findall(prog.skeleton):
        value = prog.values[int(i)]
        if _path_like(value):
            out.append(value.rstrip("/") + "/" + UNKNOWN if more.iterated(prog.skeleton, int(i)) else value)
    return out


def _deletes(prog: Program) -> list[tuple[str, bool]]:
    out: list[tuple[str, bool]] = []
    for pattern, recursive in api.DELETE_CALLS:
        for m in pattern.finditer(prog.skeleton):
            if m.group(0).startswith("recursive"):
                continue
            region = _region(prog.skeleton, m.end())
            lits = [prog.values[int(i)] for i in _LIT.findall(region)]
            flags = [v for v in lits if re.fullmatch(r"-[A-Za-z]+", v)]  # shelljs: rm('-rf', dir)
            first = next((v for v in lits if v not in flags), None)
            targets = [first] if first is not None else _fallback_paths(prog)
            is_tree = recursive or bool(re.search(r"recursive", region)) or any("r" in f.lower() for f in flags)
            out += [(t, is_tree) for t in targets]
    for m in api.PATH_METHODS.finditer(prog.skeleton):
        if m.group(1) in api.PATH_DELETES and not (m.group(1) == "replace" and len(top_level_split(
                _region(prog.skeleton, m.end() - 1))) > 1):  # s.replace('a', 'b') is a string's, not Path.replace
            before = re.search(rf"{_L}\s*$", prog.skeleton[:m.start()])
            targets = [prog.values[int(before.group(1))]] if before else _fallback_paths(prog)
            out += [(t, m.group(1) in ("rename", "replace")) for t in targets]
    return out


def _writes(prog: Program, lang: str) -> list[str]:
    out: list[str] = []
    skeleton = prog.skeleton
    for m in api.OPEN_CALLS.finditer(skeleton):  # open(path, 'w'): only a mode that writes
        args = [a.strip() for a in top_level_split(_region(skeleton, m.end() - 1))]
        lits = [_LIT.fullmatch(re.sub(r"^mode\s*=\s*", "", a)) for a in args[:2]]
        if len(lits) == 2 and lits[0] and lits[1] and re.search(r"[wax+]", prog.values[int(lits[1].group(1))]):
            out.append(prog.values[int(lits[0].group(1))])
    for pattern, index in api.WRITE_CALLS:
        for m in pattern.finditer(skeleton):
            args = [a.strip() for a in top_level_split(_region(skeleton, m.end() - (skeleton[m.end() - 1] == "(")))]
            if len(args) > index and (lit := _LIT.fullmatch(args[index])):
                out.append(prog.values[int(lit.group(1))])
    for m in api.PATH_METHODS.finditer(skeleton):
        before = re.search(rf"{_L}\s*$", skeleton[:m.start()])
        if before and m.group(1) not in api.PATH_DELETES:
            out.append(prog.values[int(before.group(1))])
    for m in re.finditer(rf"\bopen\s*\(?\s*(?:my\s+)?[\w$]+\s*,\s*{_L}(?:\s*,\s*{_L})?", skeleton):  # perl
        mode = prog.values[int(m.group(1))]
        if mode.lstrip().startswith((">", "+<", "+>")):
            out.append(prog.values[int(m.group(2))] if m.group(2) else mode.lstrip("+<> "))
    if lang == "awk":  # print > "file"
        for m in re.finditer(rf"\bprintf?\b[^;{{}}\n]*?>>?\s*\(?\s*{_L}", skeleton):
            out.append(prog.values[int(m.group(1))])
    return out
