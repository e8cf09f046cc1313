"""Programs that run code, and what code they run: shells (-c, stdin, scripts), eval, source, interpreters
(python/perl/ruby/node/php/awk/... one-liners, stdin programs and scripts), makefiles from stdin, git config
commands, commands hidden in options, sed's `e`, and files written or downloaded earlier in the same command line.

Code the guard can read is analysed as if typed; code it cannot read (decoded, generated or piped in at run time)
raises the `unseen-code` signal instead, which a rule denies.
"""

from __future__ import annotations

import contextlib
import functools
import posixpath
import re
import shlex
from dataclasses import dataclass
from typing import Protocol

from dun.guard import code as interp_code
from dun.guard import dialects, edits, longtail, posture_code, tasks
from dun.guard.context import with_params
from dun.guard.effects import Effect, Facts, interpreter
from dun.guard.expand import Ctx, Env, Val, expand
from dun.guard.lexer import ShellError, tokenize
from dun.guard.options import Spec, parse
from dun.guard.paths import classify, normalize
from dun.guard.programs import git_config_commands, hidden_commands, is_env_generator
from dun.guard.secrets import ENV_DUMP_CODE, text_secret
from dun.guard.sqlclients import SQL_CLIENTS
from dun.guard.textops import make_recipes, sed_commands, tcl_commands

STDIN_PATHS = frozenset({"/dev/stdin", "/dev/fd/0", "/proc/self/fd/0", "-"})
_MAKES = frozenset({"make", "gmake", "bmake"})
_MAKE = Spec("fCIjlo", frozenset({"--file", "--makefile", "--directory", "--include-dir", "--jobs"}))
_PWSH = ((re.compile(r"(?i)(?<![\w-])(Remove-Item|ri|del|erase|rd)(?![\w-])"), "rm -rf"),
         (re.compile(r"(?i)(?<![\w-])(Set-Content|Out-File|Add-Content)(?![\w-])"), "tee"),
         (re.compile(r"(?i)(?<![\w-])-(Recurse|Force|Path|LiteralPath|Confirm:\$false)(?![\w-])"), ""))
_SQL_FILES = Spec("fcdhpUeu", frozenset({"--file", "--command", "--dbname", "--host", "--port", "--username"}))
_SED = Spec("efl", frozenset({"--expression", "--file", "--line-length"}), attached="i")


@dataclass
class Stream:
    """What a pipeline stage hands the next one, as far as it is known."""

    text: str | None = None  # echo/printf output, or a here-document passed through cat
    paths: list[Val] | None = None  # file names it prints (find, ls, echo), for xargs
    dl: bool = False  # network content flows through it
    pids: bool = False  # process IDs found by name flow through it (pgrep x | ...)
    secret: str | None = None  # a secret flows through it (cat ~/.ssh/id_rsa | ...): which


class Runner(Protocol):
    env: Env
    facts: list[Facts]

    def run(self, src: str, ctx: Ctx) -> set[str]: ...

    def output_of(self, body: str, ctx: Ctx) -> Stream: ...


def run_code(w: Runner, facts: Facts, argv: list[Val], ctx: Ctx, feed: Stream | None, seen: set[str]) -> None:
    prog, args = facts.program, argv[1:]
    scripts: list[tuple[Val, str]] = [(argv[0], "shell")] if "/" in argv[0].text else []
    if argv[0].dl:
        facts.exec_download = True
    interp = interpreter(prog, args)
    if interp is not None:
        for code in interp.code:
            _program(w, facts, interp.kind, dialects.posix(prog, code.text), ctx, seen, interp.params)
        if any(v.dl for v in interp.code) or (interp.script is not None and interp.script.dl):
            facts.exec_download = True
        if interp.stdin:
            _from_stdin(w, facts, interp.kind, ctx, feed, seen, interp.params)
        if interp.script is not None:
            scripts.append((interp.script, interp.kind))
        if interp.unseen:
            facts.signals.add("unseen-code")
    elif not prog and len(args) >= 2 and args[0].text == "-c":  # $SH -c '...': a program given -c CODE is a shell
        with contextlib.suppress(ShellError):
            seen |= w.run(args[1].text, with_params(ctx.child(), args[2:]))
    elif prog == "eval" and args:
        seen |= w.run(" ".join(_known_output(w, v, ctx) for v in args), ctx.child())
        facts.exec_download = facts.exec_download or any(v.dl for v in args)
    elif prog in ("source", ".") and args:
        facts.exec_download = facts.exec_download or args[0].dl
        scripts.append((args[0], "shell"))
    elif prog in _MAKES:
        _makefile(w, facts, args, ctx, feed, seen)
    elif prog == "sed":
        _sed(w, facts, args, ctx, seen)
    for source in tasks.sources(prog, args, ctx.cwd):
        _task_file(w, facts, source, ctx, seen)
    if (bin_argv := tasks.package_bin(prog, args)) is not None:  # pnpm prisma migrate reset: the package's program
        with contextlib.suppress(ShellError):
            seen |= w.run(" ".join(shlex.quote(v) for v in bin_argv), ctx.child())
    for command in hidden_commands(prog, args) + git_config_commands(prog, args):
        seen |= w.run(command, ctx.child())
    if prog in SQL_CLIENTS and feed is not None and feed.text:
        facts.queries.append(feed.text)
    if prog in SQL_CLIENTS:  # psql -f FILE: a file written earlier in the line, or psql -f <(echo ...)
        for name in parse(args, _SQL_FILES).value("-f", "--file"):
            text = w.output_of(name.subs[-1], ctx).text if name.text.startswith("<(") and name.subs else \
                ctx.written.get(classify(name, ctx, w.env)[0])
            if text:
                facts.queries.append(text)
    for script, kind in scripts:
        _script(w, facts, script, kind, ctx, feed, seen)


def runner_files(w: Runner, facts: Facts, runners: list[str], ctx: Ctx, seen: set[str]) -> None:
    """The files a runner itself loads before the command it runs (bundle exec: the Gemfile; direnv exec: .envrc)."""
    for runner in runners:
        for source in tasks.sources(runner, [], ctx.cwd):
            _task_file(w, facts, source, ctx, seen)


def _known_output(w: Runner, val: Val, ctx: Ctx) -> str:
    """eval "$(echo ... | base64 -d)": a word that is one command's output, when the guard knows what it prints."""
    if len(val.subs) == 1 and val.text.strip() == f"$({val.subs[0]})":
        out = w.output_of(val.subs[0], ctx)
        if out.text is not None and not out.dl:
            return out.text
    return val.text


def _program(w: Runner, facts: Facts, kind: str, text: str, ctx: Ctx, seen: set[str],
             params: list[Val] | None = None) -> None:
    """Analyse program text for an interpreter of `kind` (shell: as commands; others: code.scan)."""
    if kind == "shell":
        seen |= w.run(text, with_params(ctx.child(), params or []))
        return
    if kind == "tcl":  # tclsh/expect: exec, spawn and open "|..." run commands; code decoded at run time is unseen
        facts.signals.update({"unseen-code"} if re.search(r"(?:exec|eval|spawn|open)\b.*binary\s+decode", text) else ())
        for command in tcl_commands(text):
            try:
                seen |= w.run(command, ctx.child())
            except ShellError:
                facts.signals.add("unseen-code")
        return
    if kind == "pwsh":  # PowerShell's commands read as shell once its cmdlets are named as their Unix peers
        text = functools.reduce(lambda t, pair: pair[0].sub(pair[1], t), _PWSH, text)
        try:
            seen |= w.run(text, ctx.child())
        except ShellError:
            facts.signals.add("unseen-code")
        return
    found = interp_code.scan(text, kind, [p.text for p in params or []])
    if found.chdir is not None:  # os.chdir(os.path.expanduser('~')); os.system('rm -rf projects')
        ctx = ctx.child(deeper=False)
        ctx.cwd = classify(path_val(found.chdir, ctx, w.env), ctx, w.env)[0] if ctx.cwd else None
    longtail.code_signals(facts, text)  # kills by name or all, SDK calls that destroy, publishing, exfiltration
    posture_code.mark(facts, text)  # SDK calls that promote, push, delete or send on a platform others use
    if found.writes and (name := text_secret(text, ctx, w.env)):  # tarfile.open('/tmp/k.tgz', 'w').add('~/.ssh')
        facts.notes["reads-secret"] = name
    for command in found.commands:
        try:
            seen |= w.run(command, ctx.child())
        except ShellError:
            continue  # a string that is not a command line
    for path, recursive in found.deletes:
        facts.effects.append(Effect("delete", *classify(path_val(path, ctx, w.env), ctx, w.env, False), recursive))
    for path in found.writes:
        place = classify(path_val(path, ctx, w.env), ctx, w.env)
        facts.effects.append(Effect("write", *place))
        ctx.written[place[0]] = None
        if place[1] == "inside" and ENV_DUMP_CODE.search(text):  # writeFileSync('env.json', JSON.stringify(...env))
            facts.signals.add("exfiltrate")
            facts.notes["exfiltrate"] = "secret: the environment, written into the repository by interpreter code"
    facts.queries += found.queries
    if found.unseen:
        facts.signals.add("obfuscated-code")


def path_val(text: str, ctx: Ctx, env: Env) -> Val:
    """A path from interpreter code as a shell word would be: `~` expanded, globs seen, unknown parts unknown."""
    try:
        tokens = tokenize(text)
    except ShellError:
        return Val(text)
    if len(tokens) != 1 or tokens[0].word is None:
        return Val(text)
    return expand(tokens[0].word, ctx, env)


def _from_stdin(w: Runner, facts: Facts, kind: str, ctx: Ctx, feed: Stream | None, seen: set[str],
                params: list[Val] | None = None) -> None:
    if feed is None:
        return  # the terminal, which the agent does not have
    if feed.dl:
        facts.exec_download = True
    elif feed.text is not None:
        _program(w, facts, kind, feed.text, ctx, seen, params)
    else:
        facts.signals.add("unseen-code")  # base64 -d | sh, cat x | python3


def _script(w: Runner, facts: Facts, script: Val, kind: str, ctx: Ctx, feed: Stream | None, seen: set[str]) -> None:
    if script.text.startswith("<(") and script.subs:  # bash <(...), source <(...)
        body = script.subs[-1]
        out = w.output_of(body, ctx)
        if out.dl or script.dl:
            facts.exec_download = True
        elif out.text is not None:
            _program(w, facts, kind, out.text, ctx, seen)
        elif not is_env_generator(body):
            facts.signals.add("unseen-code")
        return
    if script.text in STDIN_PATHS:
        _from_stdin(w, facts, kind, ctx, feed, seen)
        return
    if not script.known:
        return
    path = normalize(script.text, ctx.cwd)
    if path is not None and path in ctx.downloads:
        facts.download_exec = True
        return
    real, _ = classify(script, ctx, w.env)
    if real in ctx.written:  # a file written earlier in this command line
        text = ctx.written[real]
        if text is None:
            facts.signals.add("unseen-code")
        else:
            _program(w, facts, kind if kind != "shell" else _kind_of(text), text, ctx, seen)
    elif kind == "shell" and (got := tasks.read(real, ctx, w.env)) is not None and got[0] is not None \
            and _kind_of(got[0]) == "shell":  # a shell script already in the repository: judged by its commands
        _on_disk(w, got[0], ctx, seen)


def _kind_of(text: str) -> str:
    """The interpreter a script names on its #! line (shell when it names none)."""
    if not (first := text.split("\n", 1)[0]).startswith("#!"):
        return "shell"
    words = first[2:].split()
    name = posixpath.basename(words[1] if words and posixpath.basename(words[0]) == "env" and len(words) > 1
                              else words[0] if words else "sh")
    found = interpreter(name, [Val("-")])
    return found.kind if found is not None else "shell"


def _makefile(w: Runner, facts: Facts, args: list[Val], ctx: Ctx, feed: Stream | None, seen: set[str]) -> None:
    """make -f -: the makefile comes from stdin (files are tasks.py's)."""
    for name in parse(args, _MAKE).value("-f", "--file", "--makefile"):
        if name.text in STDIN_PATHS:
            text = feed.text if feed is not None else None
            if feed is not None and text is None:
                facts.signals.add("unseen-code")
            if text:
                seen |= w.run(make_recipes(text), ctx.child())


def _task_file(w: Runner, facts: Facts, source: tasks.Source, ctx: Ctx, seen: set[str]) -> None:
    """A file a tool runs (Makefile, package.json, conftest.py, ...), written earlier in the line or on disk."""
    got = tasks.read(source.path, ctx, w.env, source.disk)
    if got is None:
        return
    text, from_disk = got
    if text is None:  # written earlier: what the edit could have put there, else code the guard cannot see
        texts = ctx.edits.get(source.path) if source.kind == "shell" else None
        if texts is None:
            facts.signals.add("unseen-code")
            return
        if disk := tasks.read_disk(source.path, ctx, w.env):
            _on_disk(w, source.pick(disk[0] or ""), ctx, seen)
        for command in edits.commands(texts):
            try:
                seen |= w.run(command, ctx.child())
            except ShellError:
                facts.signals.add("unseen-code")
        return
    code = source.pick(text)
    if not code.strip():
        return
    if from_disk and source.kind != "shell":  # go run ./cmd/x: the code on disk, its parameters not held against it
        found = Facts(unit=f"{facts.unit} (runs {source.path})", program=facts.program, lenient=True)
        _program(w, found, source.kind, code, ctx, seen)
        w.facts.append(found)
    elif from_disk:
        _on_disk(w, code, ctx, seen)
    else:
        _program(w, facts, source.kind, code, ctx, seen)


def _on_disk(w: Runner, code: str, ctx: Ctx, seen: set[str]) -> None:
    """Shell code from a file in the repository: what it leaves to its parameters or cannot be read is not held
    against it (lenient), and a file the guard cannot parse is not a reason to deny."""
    inner = ctx.child()
    inner.lenient = True
    with contextlib.suppress(ShellError):
        seen |= w.run(code, inner)


def _sed(w: Runner, facts: Facts, args: list[Val], ctx: Ctx, seen: set[str]) -> None:
    o = parse(args, _SED)
    scripts = o.value("-e", "--expression") or o.operands[:1]
    for script in scripts:
        commands, runs_text = sed_commands(script.text)
        for command in commands:
            seen |= w.run(command, ctx.child())
        if runs_text:
            facts.signals.add("unseen-code")
