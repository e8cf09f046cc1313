"""Walk a parsed command line in order, the way the shell would run it: track `cd` and variables, recurse into
`$(...)`, `sh -c`, `eval`, here-documents fed to shells and wrapper commands, and turn every simple command (however
deeply nested) into `Facts` for the rules."""

from __future__ import annotations

import re
from dataclasses import dataclass

from dun.guard.effects import (
    DOWNLOADERS,
    SQL_CLIENTS,
    Effect,
    Facts,
    child,
    command_opts,
    file_effects,
    find_parts,
    interpreter,
    program_name,
    queries,
)
from dun.guard.expand import Ctx, Env, Val, classify, expand, normalize
from dun.guard.lexer import LIT, ShellError, Word, expand_body
from dun.guard.options import sliced
from dun.guard.shell import Group, Pipeline, Redirect, Simple, parse
from dun.guard.unwrap import unwrap

MAX_DEPTH = 12
MAX_UNROLLED = 64  # loop bodies analysed once per value while nested loops multiply to at most this
MAX_COMMANDS = 5000  # simple commands analysed per decision (loops are unrolled, substitutions re-analysed)
_ASSIGN = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)(\[[^\]]*\])?\+?=")
_OUTPUT_OPS = frozenset({">", ">>", ">|", "&>", "&>>", "<>"})
_PASS_PATHS = frozenset({"grep", "egrep", "fgrep", "rg", "sort", "uniq", "head", "tail", "cat", "tee", "tr"})
_DECLARE = frozenset({"export", "declare", "typeset", "local", "readonly"})


@dataclass
class Stream:
    """What a pipeline stage hands the next one, as far as it is known."""

    text: str | None = None  # echo/printf output, or a here-document passed through cat
    paths: list[Val] | None = None  # file names it prints (find, ls, echo), for xargs
    dl: bool = False  # network content flows through it


class Walker:
    def __init__(self, env: Env) -> None:
        self.env = env
        self.facts: list[Facts] = []
        self.budget = MAX_COMMANDS
        self.unrolled = 1

    def run(self, src: str, ctx: Ctx) -> set[str]:
        """Analyse the command string; return the programs it runs. Raises ShellError when it cannot be read."""
        if ctx.depth > MAX_DEPTH:
            raise ShellError("commands nested too deeply")
        return self.pipelines(parse(src), ctx, None)

    def pipelines(self, pipelines: list[Pipeline], ctx: Ctx, stdin: Stream | None) -> set[str]:
        seen: set[str] = set()
        for pipeline in pipelines:
            seen |= self.pipeline(pipeline, ctx, stdin)
        return seen

    def pipeline(self, pipeline: Pipeline, ctx: Ctx, stdin: Stream | None) -> set[str]:
        seen: set[str] = set()
        units: list[str] = []
        fed_from_network: list[Facts] = []
        stream = stdin
        for stage in pipeline.stages:
            progs: set[str] = set()
            if isinstance(stage, Group):
                out, unit = self.group(stage, ctx, stream, progs), "( ... )"
            else:
                out, unit, facts = self.simple(stage, ctx, stream, progs)
                if facts is not None and facts.exec_download and stream is not None and stream.dl:
                    fed_from_network.append(facts)
            out.dl = out.dl or bool(progs & DOWNLOADERS) or bool(stream and stream.dl)
            units.append(unit)
            seen |= progs
            stream = out
        for facts in fed_from_network:  # the pipeline is the unit for curl ... | sh
            facts.unit = " | ".join(units)
        return seen

    def word(self, word: Word, ctx: Ctx, seen: set[str]) -> Val:
        val = expand(word, ctx, self.env)
        for body in val.subs:
            progs = self.run(body, ctx.child())
            seen |= progs
            val.dl = val.dl or bool(progs & DOWNLOADERS)
        return val

    def group(self, group: Group, ctx: Ctx, stdin: Stream | None, seen: set[str]) -> Stream:
        vals = [self.word(w, ctx, seen) for w in group.words]
        inner = ctx.child(deeper=False) if group.subshell else ctx
        effects, herein, in_dl, redirs = self.redirects(group.redirects, ctx, seen)
        feed = Stream(herein, None, in_dl) if herein is not None or in_dl else stdin
        values: list[str | None] = [None]
        if group.loop_vars and vals and self.unrolled * len(vals) <= MAX_UNROLLED and all(v.known for v in vals):
            values = [v.text for v in vals]  # for x in a b c: analyse the body once per value
        self.unrolled *= len(values)
        for value in values:
            for name in group.loop_vars:
                inner.vars[name] = value
            seen |= self.pipelines(group.body, inner, feed)
        self.unrolled //= len(values)
        if effects:
            self.facts.append(Facts(unit=f"( ... ) {redirs}", effects=effects))
        return Stream()

    def redirects(self, redirects: list[Redirect], ctx: Ctx, seen: set[str]) -> tuple[list[Effect], str | None,
                                                                                       bool, str]:
        """(file effects, text fed on stdin, whether stdin is network content, the redirections as text)."""
        effects: list[Effect] = []
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
            elif r.op == "<":
                in_dl = in_dl or val.dl
            elif r.op in _OUTPUT_OPS or (r.op == ">&" and not re.fullmatch(r"[0-9]+-?|-", val.text)):
                path, where = classify(val, ctx, self.env)
                effects.append(Effect("write", path, where))
        return effects, herein, in_dl, " ".join(shown)

    def simple(self, cmd: Simple, ctx: Ctx, stdin: Stream | None, seen: set[str]) -> tuple[Stream, str,
                                                                                             Facts | None]:
        self.budget -= 1
        if self.budget < 0:
            raise ShellError("command too complex to analyse")
        vals = [self.word(w, ctx, seen) for w in cmd.words]
        effects, herein, in_dl, redirs = self.redirects(cmd.redirects, ctx, seen)
        assignments: list[tuple[str, Val]] = []
        while len(assignments) < len(vals) and (m := _assignment(cmd.words[len(assignments)])):
            assignments.append((m.group(1), sliced(vals[len(assignments)], m.end())))
        n = len(assignments)
        if n == len(vals):
            for name, val in assignments:
                self.assign(ctx, name, val)
        feed = Stream(herein, None, in_dl) if herein is not None or in_dl else stdin
        argv = [field for val in vals[n:] for field in val.words()]
        facts = self.command(argv, ctx, feed, seen, effects, redirs)
        if facts is None:
            return Stream(), redirs, None
        return self.stream_out(facts.program, argv[1:], feed), facts.unit, facts

    def assign(self, ctx: Ctx, name: str, val: Val) -> None:
        ctx.vars[name] = val.text if val.known else None
        if val.dl:
            ctx.tainted.add(name)

    def command(self, argv: list[Val], ctx: Ctx, feed: Stream | None, seen: set[str], effects: list[Effect],
                redirs: str) -> Facts | None:
        u = unwrap(argv, feed.paths if feed else None)
        where = ctx.child(remote=True, deeper=False) if u.remote and not ctx.remote else ctx
        for code, remote in u.nested:
            seen |= self.run(code, ctx.child(remote=remote))
        unit = " ".join([*(v.text for v in u.argv), *([redirs] if redirs else [])])
        if not u.argv:
            if effects:
                self.facts.append(Facts(unit=unit or redirs, effects=effects))
            return None
        prog, args = program_name(u.argv[0]), u.argv[1:]
        seen.add(prog)
        sub, opts, values = command_opts(prog, args)
        facts = Facts(unit=unit, program=prog, sub=sub, flags=opts.flags, operands=[v.text for v in opts.operands],
                      effects=file_effects(prog, args, where, self.env) + effects, queries=queries(prog, args),
                      values=values)
        self.facts.append(facts)
        self.code(facts, u.argv, where, feed, seen)
        if prog == "find":
            for sub_argv in find_parts(args)[1]:
                self.command(sub_argv, where, None, seen, [], "")
        if prog in DOWNLOADERS:
            where.downloads.update(e.path for e in facts.effects if e.op == "write")
        if not where.remote:
            self.builtin(prog, args, ctx)
        return facts

    def code(self, facts: Facts, argv: list[Val], ctx: Ctx, feed: Stream | None, seen: set[str]) -> None:
        """Programs that run code: shells (-c, stdin, scripts), eval, source, interpreters, and downloaded files."""
        prog, args = facts.program, argv[1:]
        fed = feed.text if feed is not None else None
        network = feed is not None and feed.dl
        interp = interpreter(prog, args)
        scripts = [argv[0]] if "/" in argv[0].text else []
        if argv[0].dl:
            facts.exec_download = True
        if interp is not None:
            if interp.kind == "shell":
                for code in interp.code:
                    seen |= self.run(code.text, _with_params(ctx.child(), interp.params))
                if interp.stdin and fed:
                    seen |= self.run(fed, ctx.child())
            if any(v.dl for v in interp.code) or (interp.script is not None and interp.script.dl):
                facts.exec_download = True
            if interp.stdin and network:
                facts.exec_download = True
            scripts += [interp.script] if interp.script is not None else []
        elif prog == "eval" and args:
            seen |= self.run(" ".join(v.text for v in args), ctx.child())
            facts.exec_download = facts.exec_download or any(v.dl for v in args)
        elif prog in ("source", ".") and args:
            facts.exec_download = facts.exec_download or args[0].dl
            scripts.append(args[0])
        if prog in SQL_CLIENTS and fed:
            facts.queries.append(fed)
        for script in scripts:
            path = normalize(script.text, ctx.cwd) if script.known else None
            if path is not None and path in ctx.downloads:
                facts.download_exec = True

    def builtin(self, prog: str, args: list[Val], ctx: Ctx) -> None:
        if prog in ("cd", "pushd"):
            targets = [a for a in args if not a.text.startswith("-") or a.text == "-"]
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
                if m := _ASSIGN.match(a.text):
                    self.assign(ctx, m.group(1), sliced(a, m.end()))
        elif prog in ("unset", "read", "mapfile", "readarray"):
            for a in args:
                if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", a.text):
                    ctx.vars[a.text] = None

    def stream_out(self, prog: str, args: list[Val], feed: Stream | None) -> Stream:
        if prog == "echo":
            words = args
            while words and re.fullmatch(r"-[neE]+", words[0].text):
                words = words[1:]
            return Stream(" ".join(v.text for v in words) + "\n", words)
        if prog == "printf" and args:
            rest = args[1:]
            printed = "\n".join(v.text for v in rest) if rest else args[0].text.replace("\\n", "\n")
            return Stream(printed, rest or None)
        if prog == "find":
            return Stream(None, find_parts(args)[0])
        if prog == "ls":
            names = [a for a in args if not a.text.startswith("-")]
            return Stream(None, [child(a) for a in names] or None)
        if prog in _PASS_PATHS and feed is not None:
            files = [a for a in args if not a.text.startswith("-")]
            text = feed.text if prog == "tee" or (prog == "cat" and not files) else None
            return Stream(text, feed.paths, feed.dl)
        return Stream()


def _with_params(ctx: Ctx, params: list[Val]) -> Ctx:
    """sh -c CODE NAME ARG...: $0 is NAME, $1... the ARGs."""
    for i, val in enumerate(params):
        ctx.vars[str(i)] = val.text if val.known else None
    rest = params[1:]
    joined = " ".join(v.text for v in rest) if all(v.known for v in rest) else None
    ctx.vars["@"] = ctx.vars["*"] = joined
    return ctx


def _assignment(word: Word) -> re.Match[str] | None:
    first = word.parts[0] if word.parts else None
    return _ASSIGN.match(first.text) if first is not None and first.kind == LIT else None
