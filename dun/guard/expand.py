"""Word expansion: what a word will be when the shell runs it, as far as can be known without running anything.

Variables, positional parameters (`set -- a b`, `sh -c CODE $0 $1`) and arrays (`a=(x y)`, `"${a[@]}"`) are
followed; an unquoted expansion is split on IFS (as set earlier in the line) into fields, and `"$@"` gives one field
per parameter. Where a path lands is paths.py's business.
"""

from __future__ import annotations

import re

from dun.guard.context import Ctx, Env, Val
from dun.guard.lexer import ARITH, CMD, LIT, PROC, QUOTED, VAR, Part, ShellError, Word, tokenize
from dun.guard.textops import b64decode, echo, edited, printf, rev, tr

REMOTE_HOME = "/~remote"  # the home directory on another machine (ssh, docker exec): never local
DEFAULT_IFS = " \t\n"
_SHELL_STATE = frozenset({"OLDPWD", "PWD", "IFS", "RANDOM", "LINENO", "SECONDS", "PPID", "BASHPID", "_"})
_TILDE = re.compile(r"([A-Za-z_][A-Za-z0-9_]*=)?~([+-]|[A-Za-z0-9_.-]*)(?=/|$)")
_PARAM = re.compile(r"([A-Za-z_][A-Za-z0-9_]*(?:\[[^\]]*\])?|[0-9]+|[@*#?$!-])(?::?([-=?+])(.*))?\Z", re.S)
FIND_TESTS = frozenset({  # find predicates that select some files (without one, find returns its start paths too)
    "-name", "-iname", "-path", "-ipath", "-wholename", "-iwholename", "-regex", "-iregex", "-type", "-xtype",
    "-newer", "-newermt", "-mtime", "-mmin", "-atime", "-amin", "-ctime", "-cmin", "-size", "-empty", "-user",
    "-group", "-nouser", "-nogroup", "-perm", "-links", "-lname", "-ilname", "-samefile", "-inum", "-used",
    "-readable", "-writable", "-executable", "-fstype", "-uid", "-gid", "-prune"})
_PATTERN_OP = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)(//|/|##|#|%%|%|\^\^|,,)(.*)\Z", re.S)
_PARAM_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_REQUIRED = re.compile(r"[A-Za-z_][A-Za-z0-9_]*:\?")


def lookup(name: str, ctx: Ctx, env: Env) -> str | None:
    if name in ctx.vars:
        return ctx.vars[name]
    if name == "IFS":
        return DEFAULT_IFS  # ${IFS} in place of spaces: the shell's default
    if name == "HOME":
        return REMOTE_HOME if ctx.remote else env.home
    if name == "PWD":
        return ctx.cwd
    if ctx.remote or name in _SHELL_STATE:
        return None  # the hook's own values, not the agent shell's
    if name in ("SHELL", "BASH"):  # $SHELL -c '...': a shell, whichever
        return env.environ.get(name) or "/bin/sh"
    return env.environ.get(name) or None


class _Builder:
    """The word being built: its text (unknown expansions kept as written) and its fields after splitting."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.fields = [""]
        self.split = False
        self.unknown_at: int | None = None
        self.unknown_kind = ""

    def length(self) -> int:
        return sum(len(p) for p in self.parts)

    def known(self, text: str) -> None:
        self.parts.append(text)
        self.fields[-1] += text

    def unknown(self, text: str, kind: str) -> None:
        if self.unknown_at is None:
            self.unknown_at, self.unknown_kind = self.length(), kind
        self.known(text)

    def split_into(self, text: str, pieces: list[str], lead: bool = False, trail: bool = False) -> None:
        """An expansion whose value `text` the shell splits into `pieces`; `lead`/`trail`: it starts/ends with a
        separator, which ends the field before it (`rm${IFS}-rf` is two words)."""
        self.parts.append(text)
        if lead:
            self.fields.append("")
        if pieces:
            self.fields[-1] += pieces[0]
            self.fields += pieces[1:]
        if trail:
            self.fields.append("")
        self.split = self.split or len(self.fields) > 1


def expand(word: Word, ctx: Ctx, env: Env) -> Val:
    out = Val("")
    b = _Builder()
    for idx, part in enumerate(word.parts):
        text = part.text
        if part.kind == LIT:
            if idx == 0 and (m := _TILDE.match(text)):
                home = _home_of(m.group(2), ctx, env)
                if home is None:
                    b.unknown(text[:m.end()], "var")
                    text = text[m.end():]
                else:
                    text = (m.group(1) or "") + home + text[m.end():]
            if out.glob_at is None and (g := re.search(r"[*?\[]", text)):
                out.glob_at = b.length() + g.start()
            b.known(text)
        elif part.kind == QUOTED:
            b.known(text)
        elif part.kind == PROC:
            out.subs.append(text[1:])
            b.known(f"{text[0]}({text[1:]})")
        elif part.kind == CMD:
            out.subs.append(text)
            special = _special_substitution(text, ctx, env)
            if special is None:
                b.unknown(f"$({text})", "cmd")
            else:
                if special == "./*" and out.glob_at is None:
                    out.glob_at = b.length() + 2
                ifs = current_ifs(ctx)
                if part.quoted or not ifs or not any(c in special for c in ifs):
                    b.known(special)
                else:  # $(echo rm -rf /) unquoted: split into words as the shell does
                    b.split_into(special, ifs_split(special, ifs), special[0] in ifs, special[-1] in ifs)
        elif part.kind == ARITH:
            b.unknown(f"$(({text}))", "var")
        else:
            _parameter_part(part, ctx, env, out, b)
    out.text = "".join(b.parts)
    out.unknown_at, out.unknown_kind = b.unknown_at, b.unknown_kind
    out.split, out.fields = b.split, b.fields
    return out


def _parameter_part(part: Part, ctx: Ctx, env: Env, out: Val, b: _Builder) -> None:
    name_m = _PARAM_NAME.match(part.text)
    name = name_m.group(0) if name_m else ""
    if name in ctx.tainted:
        out.dl = True
    items = _array(part.text, ctx)
    if items is not None:  # "$@", "${a[@]}": one field per item, quoted or not
        b.split_into(" ".join(items), items)
        return
    value = _parameter(part.text, ctx, env)
    if value is None:
        required = _REQUIRED.match(part.text) is not None  # ${X:?}: unset or empty, the shell stops there
        b.unknown("${" + part.text + "}", "required" if required else "cmd" if name in ctx.generated else "var")
        return
    ifs = current_ifs(ctx)
    if part.quoted or not ifs or not any(c in value for c in ifs):
        b.known(value)
        return
    b.split_into(value, ifs_split(value, ifs), value[0] in ifs, value[-1] in ifs)


def current_ifs(ctx: Ctx) -> str:
    ifs = ctx.vars.get("IFS", DEFAULT_IFS) if "IFS" in ctx.vars else DEFAULT_IFS
    return DEFAULT_IFS if ifs is None else ifs


def ifs_split(value: str, ifs: str) -> list[str]:
    """Field splitting as bash does it: runs of IFS whitespace, with at most one other IFS character, separate."""
    white = "".join(c for c in ifs if c in DEFAULT_IFS)
    value = value.strip(white) if white else value
    fields, current, i = [], "", 0
    while i < len(value):
        if value[i] not in ifs:
            current += value[i]
            i += 1
            continue
        while i < len(value) and value[i] in white:
            i += 1
        if i < len(value) and value[i] in ifs and value[i] not in white:
            i += 1
            while i < len(value) and value[i] in white:
                i += 1
        fields.append(current)
        current = ""
    fields.append(current)
    return fields


def _array(text: str, ctx: Ctx) -> list[str] | None:
    """The items of "$@", "$*", "${a[@]}" or "${a[*]}" when they are known."""
    m = re.fullmatch(r"([@*])|([A-Za-z_][A-Za-z0-9_]*)\[[@*]\]", text)
    if m is None:
        return None
    items = ctx.arrays.get("@" if m.group(1) else m.group(2))
    return list(items) if items is not None else None


def _home_of(user: str, ctx: Ctx, env: Env) -> str | None:
    if not user:
        return REMOTE_HOME if ctx.remote else env.home
    if user == "+":
        return ctx.cwd
    if user == "-":
        return ctx.vars.get("OLDPWD")
    return "/root" if user == "root" else f"/home/{user}"


def _parameter(expr: str, ctx: Ctx, env: Env) -> str | None:
    m = _PARAM.match(expr)
    if m is None:
        op = _PATTERN_OP.match(expr)  # ${x/X/ }, ${x//_/ }, ${x#pre}, ${x%suf}, ${x^^}, ${x,,}
        value = lookup(op.group(1), ctx, env) if op is not None and "$" not in op.group(3) else None
        return None if op is None or value is None else edited(value, op.group(2), op.group(3))
    return _plain_parameter(m, ctx, env)


def _plain_parameter(m: re.Match[str], ctx: Ctx, env: Env) -> str | None:
    name = m.group(1)
    if "[" in name:  # ${a[0]}: one item of an array
        base, index = name[:-1].split("[", 1)
        items = ctx.arrays.get(base)
        value = items[int(index)] if items is not None and index.isdigit() and int(index) < len(items) else \
            ctx.vars.get(name)  # ${m[key]} of an associative array
    else:
        value = lookup(name, ctx, env)
    op, word = m.group(2), m.group(3)
    plain = word is not None and "$" not in word and "`" not in word
    if op == "+":  # ${X:+word}: the word when X is set
        return (word if value else "") if value is not None and plain else None
    if value is None and op in ("-", "=") and plain:  # ${CMD:-'git status'}: the word, its quotes removed
        return re.sub(r"'([^']*)'|\"([^\"]*)\"", lambda q: q.group(1) if q.group(1) is not None else q.group(2), word)
    return value  # ${X:?}: its value, or the shell stops


def literal_words(body: str) -> list[str]:
    """The words of a substitution that is one simple command without expansions; [] otherwise."""
    try:
        tokens = tokenize(body)
    except ShellError:
        return []
    words = [t.word.literal() if t.kind == "word" and t.word is not None else None for t in tokens]
    return [w for w in words if w is not None] if all(w is not None for w in words) else []


_SITE = re.compile(r"-m\s+site\s+--user-(?:site|base)|getusersitepackages|getsitepackages|USER_SITE|purelib|platlib"
                   r"|get_python_lib")
_MKTEMP = re.compile(r"\s*mktemp(?:\s[^;&|<>`\n]*)?")


def _filtered(body: str) -> str | None:
    """echo/printf text through tr, rev or base64 -d, as a pipeline of literal words prints it."""
    stages = [literal_words(stage) for stage in body.split("|")]
    if len(stages) < 2 or not all(stages) or stages[0][0] not in ("echo", "printf"):
        return None
    text: str | None = echo(stages[0][1:]) if stages[0][0] == "echo" else printf(stages[0][1], stages[0][2:]) \
        if len(stages[0]) > 1 else None
    for words in stages[1:]:
        if text is None or words[0] not in ("tr", "rev", "base64"):
            return None
        text = tr(text, words[1:]) if words[0] == "tr" else rev(text.rstrip("\n")) if words[0] == "rev" else \
            b64decode(text) if {"-d", "--decode", "-D"} & set(words) else None
    return text.rstrip("\n") if text is not None else None


def _special_substitution(body: str, ctx: Ctx, env: Env) -> str | None:
    """The value of $(...) when it is known or stands for names in a known place: $(pwd), $(mktemp -d),
    $(which rm), $(git rev-parse --show-toplevel), $(find DIR ...), $(git ls-files)."""
    if _SITE.search(body) and re.match(r"\s*\S*(?:python|pypy)[0-9.]*\s", body):  # where start-up files go
        user = "user" in body.lower() or "USER_SITE" in body
        return f"{env.home}/.local/lib/python3/site-packages" if user else "/usr/lib/python3/site-packages"
    if _MKTEMP.fullmatch(body):  # a new, empty name, wherever its template puts it: $(mktemp -d "$TMPDIR/x.XXX")
        return "/tmp/tmp.guard"
    if "|" in body and (piped := _filtered(body)) is not None:  # $(echo 'QEBC ...' | tr 'A-Za-z' 'N-ZA-Mn-za-m')
        return piped
    words = literal_words(body)
    words = [w if ctx.remote or not (w == "~" or w.startswith("~/")) else env.home + w[1:] for w in words]
    if (len(words) == 2 and words[0] in ("which", "realpath")) or words[:2] in (["command", "-v"], ["type", "-P"]):
        return words[-1]  # $(which rm) -rf /
    if words[:1] == ["echo"] and len(words) > 1:  # $(echo --force), $(printf -- '--force'): known text
        return echo(words[1:]).rstrip("\n")
    if words[:1] == ["printf"] and len(words) > 1:
        fmt = words[2:] if words[1] == "--" else words[1:]
        return printf(fmt[0], fmt[1:]).rstrip("\n") if fmt else None
    if words == ["pwd"]:
        return ctx.cwd
    if words == ["git", "rev-parse", "--show-toplevel"] and not ctx.remote:
        return env.root
    if words[:1] == ["find"]:  # names under find's first start path
        start = words[1] if len(words) > 1 and not words[1].startswith(("-", "(", "!")) else "."
        return start.rstrip("/") + "/{}" if FIND_TESTS.intersection(words) else start
    return git_listing(words)


def git_listing(words: list[str]) -> str | None:
    """What `git ls-files` (git diff --name-only, git status -s) names: every file, as ./* does (rm $(git ls-files),
    git ls-files -m | xargs git checkout --), or some files under the repository (a pathspec, --deleted)."""
    if words[:2] != ["git", "ls-files"] and words[:3] not in (["git", "diff", "--name-only"],
                                                              ["git", "status", "--porcelain"],
                                                              ["git", "status", "--short"], ["git", "status", "-s"]):
        return None
    specs = [w for w in words[2:] if not w.startswith("-") and w not in (".", ":/", "./")]
    return "./{}" if specs or {"-d", "--deleted"} & set(words) else "./*"
    return None


__all__ = ["ARITH", "CMD", "LIT", "PROC", "QUOTED", "VAR", "Ctx", "Env", "Val", "expand", "lookup"]
