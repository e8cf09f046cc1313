"""Redirections: the files a command writes (and where they land), the text, secret or process IDs fed on its stdin
(`<`, `<<<`, here-documents, `< <(...)`), and output that goes into a shell (`> >(sh)`, a descriptor opened on one
with `exec 3> >(sh)`, `tee >(bash)`), which runs as commands; a mixin of the walker, whose word/run it calls."""

from __future__ import annotations

import contextlib
import re

from dun.guard import linestate, marks, secrets
from dun.guard.effects import Effect, Facts
from dun.guard.expand import Ctx, Env, Val
from dun.guard.lexer import ShellError, Word, expand_body
from dun.guard.paths import classify
from dun.guard.runs import Stream
from dun.guard.shell import Redirect

OUTPUT_OPS = frozenset({">", ">>", ">|", "&>", "&>>", "<>"})
STDOUT_OPS = frozenset({">", ">>", ">|", "&>", "&>>"})


class Redirections:
    env: Env
    facts: list[Facts]
    marks: marks.Seen
    in_secret: str | None
    in_pids: bool

    def __init__(self) -> None:
        self.shell_fds: set[str] = set()  # file descriptors a shell reads its commands from: exec 3> >(sh)
        self.to_shell = False  # the output of the command being analysed goes into such a shell
        self.appended: set[str] = set()  # the files the command being analysed appends its output to (>>)

    def run(self, src: str, ctx: Ctx) -> set[str]:
        raise NotImplementedError

    def word(self, word: Word, ctx: Ctx, seen: set[str]) -> Val:
        raise NotImplementedError

    def output_of(self, body: str, ctx: Ctx) -> Stream:
        raise NotImplementedError

    def redirects(self, redirects: list[Redirect], ctx: Ctx, seen: set[str]) -> tuple[
            list[Effect], str | None, bool, str, list[str]]:
        """(file effects, text fed on stdin, whether stdin is network content, the redirections as text, the files
        that receive stdout); `self.in_secret`: the secret a `<` redirection reads."""
        self.in_secret, self.in_pids, self.appended = None, False, set()
        to_shell = any(r.target is not None and r.fd in ("", "1") and (
            (r.op in OUTPUT_OPS and linestate.shell_sink(r.target.raw)) or (r.op == ">&" and r.target.raw in
                                                                            self.shell_fds)) for r in redirects)
        self.shell_fds |= {r.fd for r in redirects if r.fd and r.target is not None and linestate.shell_sink(
            r.target.raw)}
        effects: list[Effect] = []
        stdout: list[str] = []
        herein: str | None = None
        in_dl = False
        shown: list[str] = []
        for r in redirects:
            if r.heredoc is not None:
                body = r.heredoc.body
                if not r.heredoc.quoted:
                    expanded = self.word(expand_body(body), ctx, seen)
                    body, in_dl = expanded.text, in_dl or expanded.dl
                herein = body
                shown.append(f"{r.fd}{r.op}{r.heredoc.delimiter}")
                continue
            val = self.word(r.target, ctx, seen)
            shown.append(f"{r.fd}{r.op}{val.text}" if r.op in (">&", "<&") else f"{r.fd}{r.op} {val.text}")
            if r.op == "<<<":
                herein, in_dl = val.text + "\n", in_dl or val.dl
                self.in_pids = self.in_pids or any(marks.finds_pids(body) for body in val.subs)  # <<< "$(pgrep x)"
            elif r.op == "<":
                in_dl = in_dl or val.dl
                path = classify(val, ctx, self.env)[0]
                self.in_secret = secrets.val_secret(val, ctx, self.env) or self.marks.secret_files.get(path)
                self.in_pids = path in self.marks.pid_files
                if val.text.startswith("<(") and val.subs:  # cmd < <(echo ...)
                    sub = self.output_of(val.subs[-1], ctx)
                    herein, in_dl = sub.text if sub.text is not None else herein, in_dl or sub.dl
                    self.in_secret, self.in_pids = self.in_secret or sub.secret, self.in_pids or sub.pids
                elif ctx.written.get(path) is not None:  # a file written earlier in the line
                    herein = ctx.written[path]
            elif r.op in OUTPUT_OPS or (r.op == ">&" and not re.fullmatch(r"[0-9]+-?|-", val.text)):
                path, where = classify(val, ctx, self.env)
                effects.append(Effect("write", path, where))
                if r.fd in ("", "1") and r.op in STDOUT_OPS:
                    stdout.append(path)
                    self.appended |= {path} if r.op in (">>", "&>>") else set()
        self.to_shell = to_shell  # set last: the bodies of >(...) are walked on the way
        return effects, herein, in_dl, " ".join(shown), stdout

    def into_shell(self, text: str | None, ctx: Ctx, unit: str) -> None:
        """What a command writes into `>(sh)` (or a descriptor opened on one) runs as commands."""
        if text is None:
            self.facts.append(Facts(unit=unit, signals={"unseen-code"}))
            return
        with contextlib.suppress(ShellError):
            self.run(text, ctx.child())

