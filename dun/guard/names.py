"""What earlier commands of a command line defined, by name, and their use: shell aliases (and `hash -p`),
functions, programs copied or linked under another name (`ln -s /bin/rm del && ./del -rf ~`), and git config and
aliases set with `git config` (`git config alias.wipe 'reset --hard' && git wipe`). The shell reads these as it
goes; so does the guard, whatever `shopt -s expand_aliases` says (a definition it honours needlessly only makes it
stricter)."""

from __future__ import annotations

import posixpath
import shlex

from dun.guard import gitread
from dun.guard.context import with_params
from dun.guard.effects import Effect, Facts, program_name
from dun.guard.expand import Ctx, Val, literal_words
from dun.guard.options import SPECS, parse
from dun.guard.paths import normalize
from dun.guard.runs import Stream
from dun.guard.shell import Pipeline
from dun.guard.shell import parse as parse_shell
from dun.guard.subcommands import git_config

MAX_CALLS = 12  # alias, function and git alias expansions nested in one another
_BIN_DIRS = frozenset({"/bin", "/sbin", "/usr/bin", "/usr/sbin", "/usr/local/bin", "/usr/local/sbin",
                       "/opt/homebrew/bin", "/snap/bin"})


class Names:
    """The definitions; a mixin of the walker, whose run/pipelines/command it calls."""

    def __init__(self) -> None:
        self.aliases: dict[str, str] = {}
        self.functions: dict[str, list[Pipeline]] = {}
        self.renamed: dict[str, str] = {}
        self.gitconfig: dict[str, str] = {}
        self.active: set[str] = set()  # the aliases and functions being expanded
        self.calls = 0

    def run(self, src: str, ctx: Ctx) -> set[str]:
        raise NotImplementedError

    def pipelines(self, pipelines: list[Pipeline], ctx: Ctx, stdin: Stream | None) -> set[str]:
        raise NotImplementedError

    def command(self, argv: list[Val], ctx: Ctx, feed: Stream | None, seen: set[str], effects: list[Effect],
                redirs: str) -> Facts | None:
        raise NotImplementedError

    def define(self, prog: str, args: list[Val], ctx: Ctx) -> None:
        """Record what `alias`, `hash -p`, `cp`/`install`/`ln` of a program and `git config` define."""
        if prog == "alias":
            for a in args:
                name, eq, body = a.text.partition("=")
                if eq and body:
                    self.aliases[name] = body
        elif prog == "hash" and len(args) >= 3 and args[0].text == "-p":
            self.aliases[args[2].text] = shlex.quote(args[1].text)
        elif prog in ("cp", "install", "ln") and len(args) >= 2:
            self.rename(args, ctx)

    def git_set(self, values: list[str]) -> None:
        for value in values:
            if value.startswith("config="):
                key, _, setting = value[7:].partition("=")
                self.gitconfig[key] = setting

    def program(self, head: Val, ctx: Ctx) -> str:
        """The program a command word runs: a copy or link of a program made earlier in the line runs that program
        (`ln -s /bin/rm del && ./del -rf ~`)."""
        if head.text in self.renamed:
            return self.renamed[head.text]
        path = normalize(head.text, ctx.cwd) if "/" in head.text else None
        if path is not None:
            if path in self.renamed:
                return self.renamed[path]
            target = ctx.links.get(path)
            if target:
                return program_name(Val(target))
        return program_name(head)

    def expand_name(self, argv: list[Val], ctx: Ctx, feed: Stream | None, seen: set[str]) -> bool:
        """Run an alias (or `hash -p` name) or a function defined earlier in the line in place of the command. One
        already being expanded is not expanded again (`alias ls='ls -F'`; a function calling itself is analysed
        once, a fork bomb is caught where it is defined)."""
        name = argv[0].text
        if name in self.active or (name not in self.aliases and name not in self.functions):
            return False
        self.active.add(name)
        try:
            if name in self.aliases:
                rest = " ".join(shlex.quote(v.text) if v.known else v.text for v in argv[1:])
                seen |= self.pipelines(parse_shell(f"{self.aliases[name]} {rest}"), ctx, feed)  # stdin too
            else:
                seen |= self.pipelines(self.functions[name], with_params(ctx.child(), argv), feed)
        finally:
            self.active.discard(name)
        return True

    def git_alias(self, argv: list[Val], ctx: Ctx, feed: Stream | None, seen: set[str], effects: list[Effect],
                  redirs: str) -> bool:
        """`git X` where X is an alias from `-c alias.X=...` or a `git config alias.X` earlier in the line: the
        command it stands for is what runs."""
        top = parse(argv[1:], SPECS["git"])
        if not top.operands:
            return False
        config = {**self.gitconfig, **git_config(argv[1:])}
        sub = top.operands[0].text
        body = config.get(f"alias.{sub.lower()}")
        if body is None:
            return False
        self.calls += 1
        try:
            if body.startswith("!"):
                rest = " ".join(shlex.quote(v.text) for v in top.operands[1:])
                seen |= self.run(f"{body[1:]} {rest}", ctx.child())
            else:
                words = gitread.alias_argv(sub, config) or []
                self.command([argv[0], *gitread.with_alias(argv[1:], top, words)], ctx, feed, seen, effects, redirs)
        finally:
            self.calls -= 1
        return True

    def rename(self, args: list[Val], ctx: Ctx) -> None:
        """`cp /bin/rm ./x`, `ln -s "$(which git)" g`: the copy runs the program it copies."""
        names = [a for a in args if not a.text.startswith("-")]
        if len(names) != 2:
            return
        source, dest = names
        if not (posixpath.dirname(source.text) in _BIN_DIRS or any(
                literal_words(body)[:1] in (["which"], ["command"], ["type"]) for body in source.subs)):
            return
        path = normalize(dest.text, ctx.cwd)
        if path is not None:
            self.renamed[path] = program_name(source)
            self.renamed[dest.text] = program_name(source)
