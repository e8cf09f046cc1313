"""What one simple command does, in the terms the rules speak: the files it deletes, writes or chmods (and where they
are), the SQL it sends, and whether it runs code from the network. Knowledge of individual programs lives here."""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass, field

from dun.guard import writers
from dun.guard.expand import FIND_TESTS, Ctx, Env, Val
from dun.guard.options import SPECS, Opts, Spec, parse, sliced
from dun.guard.paths import classify

DOWNLOADERS = frozenset({"curl", "wget", "fetch", "http", "https", "xh", "xhs", "aria2c", "lwp-request", "GET",
                         "nc", "ncat", "lynx"})
SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "csh", "tcsh", "yash", "rbash"})
_PYTHON = re.compile(r"(python|pypy)[0-9.]*")
_AWK = frozenset({"awk", "gawk", "mawk", "nawk"})
# program -> (kind, option spec, options whose value is the program)
_INTERPRETERS: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "python": ("python", "python", ("-c",)),
    **{name: ("node", "node", ("-e", "--eval", "-p", "--print")) for name in ("node", "nodejs", "bun", "zx")},
    "perl": ("perl", "interp", ("-e", "-E")), "ruby": ("ruby", "interp", ("-e",)), "php": ("php", "interp", ("-r",)),
    **{name: ("lua", "interp", ("-e",)) for name in ("lua", "luajit", "lua5.1", "lua5.3", "lua5.4")},
    "Rscript": ("r", "interp", ("-e",)), "R": ("r", "interp", ("-e",)), "osascript": ("osascript", "interp", ("-e",)),
    "julia": ("julia", "interp", ("-e", "-E")), "elixir": ("elixir", "interp", ("-e",)),
    "groovy": ("groovy", "interp", ("-e",)), "expect": ("tcl", "expect", ("-c",)),
    **{name: ("tcl", "interp", ()) for name in ("tclsh", "wish", "jimsh", *(f"tclsh8.{v}" for v in range(4, 8)))},
    **{name: ("pwsh", "pwsh", ("-c", "-Command", "-command")) for name in ("pwsh", "powershell")},
}
_CHMOD_FLAGS = frozenset("cfvR")
_VERB = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:[:_.-][A-Za-z0-9]+)*")
_NOT_FILTERS = frozenset({"-type", "-xtype", "-readable", "-writable", "-executable", "-fstype", "-prune"})


# The signals a simple command can raise, for rules to match.
SIGNALS = {
    "unseen-code": "runs code the guard cannot read: decoded, generated or read from a pipe at run time",
    "generated-program": "runs a program whose name is the output of a command",
    "unknown-program": "runs a program whose name is a variable the guard cannot resolve",
    "obfuscated-code": "an interpreter evaluates code it decodes at run time",
    "kill-all": "signals every process (kill -1, killall -u, pkill .)",
    "fork-bomb": "a function that starts itself more than once",
    "privileged-container": "a container with the host's privileges (--privileged, --pid=host, SYS_ADMIN, devices)",
    "kill-by-name": "kills processes found by name or port (kill $(pgrep x), pgrep x | xargs kill)",
    "exfiltrate": "sends a secret off the machine, or copies one into the repository",
    "detached-loop": "starts an endless loop detached from the session (nohup/setsid/disown/screen -d)",
    "expose": "opens this machine to the network (ssh -R, a tunnel of a sensitive port, a shell on a socket)",
    "code-destroys": "interpreter code calls an SDK that destroys remote state (delete_bucket, terminate_instances)",
    "db-destroy": "drops, resets or wipes a database by its words (wp db reset, dotnet ef database drop)",
    "publishes": "interpreter code that releases or registers a package (devtools::release(), register())",
    "nonprod-target": "names staging, a preview or a test environment (and not production) among its arguments",
    "prod-target": "names production among its arguments (--stage production, acme-prod)",
    "prod-write": "changes state on production named by its environment, settings, app or host (prodtarget.py)",
    "ci-weaken": "an edit of the repository's CI files that removes a test step or makes a failure pass",
    "gate-weaken": "an edit of a gate's config that lowers a threshold, skips tests or files, or makes failures pass",
    "hooks-skip": "a git command run with variables that make the hook manager skip its hooks (SKIP=, HUSKY=0)",
    "supply-source": "package sources redirected, verification turned off, or a lockfile's hashes or URLs edited",
    "agent-bypass": "a coding agent started with its permission checks, approvals or sandbox off",
    "agent-settings": "a coding agent's own settings changed (MCP servers, allowed tools, hooks, extensions)",
    "win-destroy": "a Windows tool run from WSL that destroys or weakens the Windows side",
}


@dataclass(frozen=True)
class Effect:
    op: str  # delete, write, chmod, mount (a container bind), use (an operand of an unknown program)
    path: str
    where: str  # a category from expand.category, or contents/unknown
    recursive: bool = False


@dataclass
class Facts:
    """One simple command as the rules see it."""

    unit: str  # the normalized command: wrappers stripped, variables expanded, quotes removed
    program: str = ""
    sub: str = ""  # the first operand (git: the subcommand)
    flags: list[str] = field(default_factory=list)
    operands: list[str] = field(default_factory=list)  # the operands after `sub`
    effects: list[Effect] = field(default_factory=list)
    queries: list[str] = field(default_factory=list)
    values: list[str] = field(default_factory=list)  # `option=value` for options with values (-X=DELETE)
    signals: set[str] = field(default_factory=set)  # what the walker noticed beyond files: see SIGNALS
    notes: dict[str, str] = field(default_factory=dict)  # signal -> what a denial shows about it
    lenient: bool = False  # from a file on disk: the rules for what the guard cannot resolve do not apply
    test_db: bool = False  # works on a test database only (testdb.py): the database rules do not apply
    free: frozenset[str] = frozenset()  # rules that do not apply: its target is this machine or its own (posture.py)
    words: list[str] = field(default_factory=list)  # the arguments after the program, as expanded
    exec_download: bool = False  # runs code fetched from the network (curl | sh, bash <(curl ...))
    download_exec: bool = False  # runs a file that curl/wget wrote earlier in the same command line

    @property
    def verbs(self) -> list[str]:
        """The leading words of the command line that name what it does (`exoscale compute instance delete web-1`:
        compute, instance, delete, web-1): up to four operands that look like words, lower-cased."""
        out: list[str] = []
        for word in [self.sub, *self.operands][:4]:
            if not _VERB.fullmatch(word):
                break
            out.append(word.lower())
        return out


@dataclass
class Interp:
    kind: str  # shell, python, node, perl, ruby, php, lua, r, awk, osascript, pwsh
    code: list[Val]  # -c/-e code (shell code for a shell), or awk's program
    script: Val | None
    stdin: bool  # reads its program from stdin
    params: list[Val] = field(default_factory=list)  # the parameters after the code (sh -c CODE $0 $1 ...)
    unseen: bool = False  # its program is encoded (pwsh -EncodedCommand)


def program_name(val: Val) -> str:
    return posixpath.basename(val.text) if val.text else ""


def interpreter(prog: str, args: list[Val]) -> Interp | None:
    if prog in SHELLS:
        o = parse(args, SPECS["shell"])
        if o.has("-c"):
            return Interp("shell", o.operands[:1], None, False, o.operands[1:])
        stdin = o.has("-s") or not o.operands
        return Interp("shell", [], None if stdin else o.operands[0], stdin,  # bash -s -- ARGS: $0 is bash
                      [Val(prog), *o.operands] if stdin else o.operands[1:])
    if prog in _AWK:
        o = parse(args, SPECS["awk"])
        preset = "".join(f'{v.text.partition("=")[0]} = "{v.text.partition("=")[2]}"\n'  # awk -v c='rm -rf ~'
                         for v in o.value("-v", "--assign") if '"' not in v.text)
        if preset:
            code = o.value("-e", "--source") or o.operands[:1]
            return Interp("awk", [Val(preset + c.text) for c in code], None, False, o.operands[1:]) if code else None
        if o.value("-e", "--source"):
            return Interp("awk", o.value("-e", "--source"), None, False, o.operands)
        if o.value("-f", "--file"):
            return Interp("awk", [], o.value("-f", "--file")[0], False)
        return Interp("awk", o.operands[:1], None, False, o.operands[1:]) if o.operands else None
    if prog == "rails" and len(args) >= 2 and args[0].text in ("runner", "r"):  # rails runner 'User.delete_all'
        return Interp("ruby", args[1:2], None, False, args[2:])
    if _PYTHON.fullmatch(prog) and len(args) >= 4 and args[0].text.endswith("manage.py") and args[1].text == "shell" \
            and args[2].text in ("-c", "--command"):  # python manage.py shell -c '...'
        return Interp("python", args[3:4], None, False)
    if prog in ("deno", "bun") and args and args[0].text == "eval":
        return Interp("node", args[1:2], None, False, args[2:])
    if prog == "deno" and args and args[0].text == "run":  # deno run -A - (stdin) or deno run -A x.ts
        ops = [a for a in args[1:] if not a.text.startswith("-") or a.text == "-"]
        stdin = not ops or ops[0].text == "-"
        return Interp("node", [], None if stdin else ops[0], stdin, ops[1:])
    entry = _INTERPRETERS.get(prog) or (_INTERPRETERS["python"] if _PYTHON.fullmatch(prog) else None)
    if entry is None:
        return None
    kind, spec_name, code_opts = entry
    o = parse(args, SPECS[spec_name])
    code = o.value(*code_opts)
    if kind == "pwsh":
        encoded = any(a.text.lower() in ("-encodedcommand", "-enc", "-ec", "-e") for a in args)
        return Interp(kind, code or o.operands[:1], None, False, unseen=encoded)
    if code or o.has("-m"):
        return Interp(kind, code, None, False, o.operands)
    stdin = not o.operands or o.operands[0].text == "-"
    return Interp(kind, [], None if stdin else o.operands[0], stdin, o.operands[1:])


def child(val: Val) -> Val:
    """Something under the directory `val` names (find's results)."""
    return Val(val.text.rstrip("/") + "/{}", val.unknown_at, val.glob_at)


def file_effects(prog: str, args: list[Val], ctx: Ctx, env: Env) -> list[Effect]:
    out: list[Effect] = []
    def add(op: str, vals: list[Val], recursive: bool = False) -> None:
        for v in vals:
            if v.text and v.text != "-":
                path, where = classify(v, ctx, env, follow=op != "delete")
                if op == "write" and path in env.temp:
                    where = "temp"  # cp x /tmp writes /tmp/x
                out.append(Effect(op, path, where, recursive))

    if prog == "tar" and args and re.fullmatch(r"[A-Za-z]+", args[0].text):  # tar xzf: the old bundled form
        args = [Val("-" + args[0].text), *args[1:]]
    o = parse(args, SPECS.get(prog, Spec()))
    ops = o.operands
    if prog in ("rm", "unlink", "srm", "rimraf", "del", "del-cli"):
        add("delete", ops, prog in ("rimraf", "del", "del-cli") or o.has("-r", "-R", "--recursive"))
    elif prog == "shred":
        add("write", ops)
    elif prog == "find":
        found, _, deletes = find_parts(args)
        if deletes:
            add("delete", found, True)
    elif prog in ("cp", "mv", "install", "ln"):
        target = o.value("-t", "--target-directory")
        if prog == "install" and o.has("-d", "--directory"):
            add("write", ops)
        elif prog == "ln" and len(ops) == 1 and not target:
            add("write", [Val(posixpath.basename(ops[0].text.rstrip("/")) or ".")])
        else:
            add("write", target if target else ops[-1:] if len(ops) >= 2 else [])
            into = target[0] if target else ops[-1] if len(ops) > 2 or (ops and ops[-1].text.endswith("/")) else None
            if into is not None and prog != "ln":  # cp x.pth site-packages/: what lands there, by name
                add("write", [Val(f"{into.text.rstrip('/')}/{posixpath.basename(v.text.rstrip('/'))}", into.unknown_at,
                                  into.glob_at) for v in (ops if target else ops[:-1])])
            if prog == "mv":
                add("delete", ops if target else ops[:-1], True)
    elif prog in ("tee", "touch", "mkdir", "truncate"):
        add("write", ops)
    elif prog in _AWK and any(v.text == "inplace" for v in o.value("-i", "--include")):
        add("write", ops[1:])
    elif prog in ("sed", "perl") and o.has("-i", "--in-place"):
        scripted = o.value("-e", "--expression", "-f", "--file", "-E")
        add("write", ops if scripted else ops[1:])
    elif prog == "dd":
        add("write", [sliced(v, 3) for v in ops if v.text.startswith("of=")])
    elif prog in ("chmod", "chown", "chgrp"):
        mode_in_flags = prog == "chmod" and any(f[1:] not in _CHMOD_FLAGS for f in o.flags if len(f) == 2)
        skip = 0 if mode_in_flags or o.value("--reference") else 1
        add("chmod", ops[skip:], o.has("-R", "--recursive"))
    else:
        out += _download_and_archive_effects(prog, o, ctx, env)
        other = writers.spec(prog)
        for op, val in writers.writes(prog, o if other is None else parse(args, other), args, env.home):
            add(op, [val], op == "delete" or (op == "chmod" and o.has("-R", "--recursive")))
    if prog == "rsync" and o.has("--remove-source-files"):  # a move: the sources go
        add("delete", ops[:-1], True)
    if prog == "tar" and o.has("--remove-files") and o.has("-c", "--create", "-r", "--append", "-u", "--update"):
        add("delete", ops, True)
    return out


def _download_and_archive_effects(prog: str, o: Opts, ctx: Ctx, env: Env) -> list[Effect]:
    vals: list[Val] = []
    ops = o.operands
    if prog == "curl":
        outdir = o.value("--output-dir")
        for v in o.value("-o", "--output"):
            vals.append(Val(posixpath.join(outdir[0].text, v.text)) if outdir else v)
        if o.has("-O", "--remote-name", "--remote-name-all"):
            base = outdir[0].text + "/" if outdir else ""
            vals += [Val(base + (posixpath.basename(u.text.split("?")[0]) or "index.html")) for u in ops]
    elif prog == "wget":
        vals += o.value("-O", "--output-document", "-o", "--output-file", "-a", "--append-output")
        prefix = o.value("-P", "--directory-prefix")
        if prefix:
            vals += [child(p) for p in prefix]
        elif not o.value("-O", "--output-document"):
            vals += [Val(posixpath.basename(u.text.split("?")[0]) or "index.html") for u in ops]
    elif prog == "tar":
        if o.has("-x", "--extract", "--get"):
            vals += [child(d) for d in o.value("-C", "--directory") or [Val(".")]]
        elif o.has("-c", "--create", "-r", "--append", "-u", "--update", "-A"):
            vals += o.value("-f", "--file")
    elif prog == "unzip":
        vals += [child(d) for d in o.value("-d") or [Val(".")]]
    elif prog == "rsync" and len(ops) >= 2 and not re.match(r"[^/]*:", ops[-1].text):
        vals.append(ops[-1])
    elif prog == "git" and ops:
        sub = ops[0].text
        rest = parse(ops[1:], SPECS.get(f"git {sub}", Spec())).operands
        if (sub == "clone" and len(rest) >= 2) or (sub == "worktree" and len(rest) >= 2 and rest[0].text == "add"):
            vals.append(rest[1])
    return [Effect("write", *classify(v, ctx, env)) for v in vals if v.text and v.text != "-"]


def _find_filters(args: list[Val]) -> bool:
    """Whether find's expression selects some files only: -type, -prune'd paths and depth limits do not."""
    words = [a.text for a in args]
    for n, word in enumerate(words):
        if n and words[n - 1] in ("-not", "!"):
            continue  # find . -not -path './.git/*' -delete: everything but those
        if word in FIND_TESTS and word not in _NOT_FILTERS:
            pruned = word in ("-path", "-ipath", "-wholename", "-name") and words[n + 2:n + 3] == ["-prune"] \
                and "-o" in words[n + 3:n + 4]
            if not pruned:
                return True
    return False


def find_parts(args: list[Val]) -> tuple[list[Val], list[list[Val]], bool]:
    """What find finds ({} under each start path, or the path itself when no test filters it), its -exec/-ok
    commands with {} replaced, and whether it has -delete."""
    i = 0
    paths: list[Val] = []
    while i < len(args) and not args[i].text.startswith(("-", "(", "!")):
        paths.append(args[i])
        i += 1
    filtered = _find_filters(args[i:])
    found = [child(p) if filtered else p for p in paths or [Val(".")]]
    commands: list[list[Val]] = []
    deletes, names = False, [args[k + 1].text for k in range(len(args) - 1) if args[k].text in ("-name", "-iname")]
    while i < len(args):
        text = args[i].text
        if text == "-delete":
            deletes = True
        elif text in ("-exec", "-execdir", "-ok", "-okdir"):
            j = i + 1
            while j < len(args) and args[j].text not in (";", "+"):
                j += 1
            for name in found:  # -name '*.key' -exec curl -F 'f=@{}': what {} stands for is named by the test
                if len(names) == 1 and not {"!", "-not"} & {a.text for a in args} and name.text.endswith("/{}"):
                    at = len(name.text) - 2 + min((names[0].find(c) for c in "*?[" if c in names[0]), default=-1)
                    name = Val(name.text[:-2] + names[0], name.unknown_at, at if at >= len(name.text) - 2 else None)
                commands.append([name if a.text == "{}" else Val(a.text.replace("{}", name.text), a.unknown_at,
                                                                    a.glob_at, a.subs, a.dl) for a in args[i + 1:j]])
            i = j
        i += 1
    return found, commands, deletes
