"""The shell's own state a command line changes as it goes: variables and arrays assigned (and what they hold: a
command's output, downloaded text, PIDs found by name, a secret, a command a program will run), `cd`, `set --`,
`unset`, `alias` bodies, `trap` commands and symlinks; a mixin of the walker, whose run/words it calls."""

from __future__ import annotations

import re
import shlex

from dun.guard import linestate, marks, programs, secrets, textops
from dun.guard.effects import Facts
from dun.guard.expand import Ctx, Env, Val
from dun.guard.lexer import ShellError, Word, tokenize
from dun.guard.options import sliced
from dun.guard.paths import normalize

ASSIGN = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)(\[[^\]]*\])?\+?=")
_DECLARE = frozenset({"export", "declare", "typeset", "local", "readonly"})


class ShellState:
    env: Env
    facts: list[Facts]
    marks: marks.Seen
    traps: list[tuple[str, Ctx]]  # trap bodies set while running the current command string, with its context

    def run(self, src: str, ctx: Ctx) -> set[str]:
        raise NotImplementedError

    def words(self, words: list[Word], ctx: Ctx, seen: set[str]) -> list[Val]:
        raise NotImplementedError

    def assign(self, ctx: Ctx, name: str, val: Val, word: Word, seen: set[str]) -> None:
        raw = word.raw[word.raw.index("=") + 1:]
        append = word.raw[:word.raw.index("=")].endswith("+")  # a+=(x), s+=x
        if raw.startswith("(") and raw.endswith(")"):  # a=(x y z): an array
            items = self.array_items(raw[1:-1], ctx, seen)
            keyed = [m for i in items or [] if (m := re.fullmatch(r"\[([^\]]+)\]=(.*)", i, re.S))]
            if items and len(keyed) == len(items):  # declare -A m=([a]=push [b]=-f): ${m[a]}
                for m in keyed:
                    ctx.vars[f"{name}[{m.group(1)}]"] = m.group(2)
                return
            if append:
                scalar = ctx.vars.get(name)
                before = ctx.arrays.get(name, [scalar] if scalar is not None else [] if name not in ctx.vars else None)
                items = before + items if before is not None and items is not None else None
            ctx.arrays[name] = items
            ctx.vars[name] = items[0] if items else ("" if items is not None else None)
            return
        decoded = any(programs.DECODING.search(body) for body in val.subs)  # x=$(... | base64 -d): as generated
        if append:
            before_text = ctx.vars.get(name, "")
            ctx.vars[name] = before_text + val.text if val.known and before_text is not None else None
        else:
            ctx.vars[name] = val.text if val.known and not decoded else None
        if name in programs.COMMAND_VARS:
            self.command_var(name, val, ctx, seen)
        if any(marks.finds_pids(body, self.marks, ctx.cwd) for body in val.subs):
            self.marks.pid_vars.add(name)
        if any(secrets.text_secret(body, ctx, self.env) for body in val.subs):
            self.marks.secret_vars.add(name)
        if val.dl:
            ctx.tainted.add(name)
        if (not val.known and val.unknown_kind == "cmd") or decoded:
            ctx.generated.add(name)

    def command_var(self, name: str, val: Val, ctx: Ctx, seen: set[str]) -> None:
        """A variable git, man, less or bash runs as a command (GIT_PAGER, GIT_SSH_COMMAND, EDITOR), or a file bash
        sources (BASH_ENV, ENV)."""
        try:
            seen |= self.run(f". {shlex.quote(val.text)}" if name in ("BASH_ENV", "ENV") else val.text, ctx.child())
        except ShellError:
            self.facts.append(Facts(unit=val.text, signals={"unseen-code"}))

    def array_items(self, text: str, ctx: Ctx, seen: set[str]) -> list[str] | None:
        words = [t.word for t in tokenize(text) if t.kind == "word" and t.word is not None]
        vals = [f for v in self.words(words, ctx, seen) for f in v.words()]
        return [v.text for v in vals] if all(v.known for v in vals) else None

    def builtin(self, prog: str, args: list[Val], ctx: Ctx, seen: set[str], text: str | None = None) -> None:
        """`text`: what the command reads on stdin, when it is known (a here-string, echo x | ...)."""
        if prog in ("cd", "pushd"):
            targets = [a for a in args if not a.text.startswith("-") or a.text == "-"]
            ctx.vars["OLDPWD"] = ctx.cwd
            if not targets:
                ctx.cwd = self.env.home if prog == "cd" else None
            elif targets[0].known and targets[0].glob_at is None and targets[0].text != "-":
                ctx.cwd = normalize(targets[0].text, ctx.cwd)
            else:
                ctx.cwd = None
        elif prog == "popd":
            ctx.cwd = None
        elif prog in _DECLARE:
            for a in args:
                if m := ASSIGN.match(a.text):
                    self.assign(ctx, m.group(1), sliced(a, m.end()), Word([], a.text), seen)
        elif prog == "read":
            linestate.read_line(args, text, ctx)
        elif prog in ("mapfile", "readarray"):
            linestate.read_lines(args, text, ctx)
        elif prog == "printf" and len(args) >= 3 and args[0].text == "-v":  # printf -v cmd '%s' 'rm -rf x'
            value = textops.printf(args[2].text, [a.text for a in args[3:]])
            ctx.vars[args[1].text] = value if all(a.known for a in args[1:]) else None
        elif prog == "unset":
            for a in args:
                if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", a.text):
                    ctx.vars[a.text] = None
                    ctx.arrays.pop(a.text, None)
        elif prog == "set":
            linestate.positional(args, ctx)
        elif prog == "alias":
            for a in args:
                _, eq, body = a.text.partition("=")
                if eq and body:
                    seen |= self.run(body, ctx.child())
        elif prog == "trap" and args and not args[0].text.startswith("-") and len(args) > 1:
            self.traps.append((args[0].text, ctx))  # it runs when the shell exits: judged with the line's last state
        elif prog == "ln":
            linestate.symlink(args, ctx)
