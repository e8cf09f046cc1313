"""Strip the programs that only run another program (sudo, env, timeout, nohup, xargs, ...) to find the command that
does the work, and collect the command strings that wrappers hand to a shell (su -c, ssh host cmd, watch, flock -c)."""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field

from dun.guard.effects import program_name
from dun.guard.expand import Val
from dun.guard.options import Spec, parse
from dun.guard.programs import COMMAND_VARS, hidden_commands
from dun.guard.remote import cloud_remote
from dun.guard.wrappers import SYSTEMD_SCOPE, WRAPPERS


def _long(*names: str) -> frozenset[str]:
    return frozenset(names)


_RUNNERS = {"uv": "run", "poetry": "run", "pipenv": "run", "bundle": "exec", "pipx": "run", "pdm": "run",
            "hatch": "run", "rye": "run", "npm": "exec", "pnpm": "exec", "yarn": "exec", "conda": "run",
            "mamba": "run", "pixi": "run", "doppler": "run", "infisical": "run", "op": "run",
            "direnv": "exec", "aws-vault": "exec", "nix": "develop", "lerna": "exec",
            "nx": "exec"}  # `uv run cmd`; a bare `npx cmd` runs cmd
_ENV = Spec("uCS", _long("--unset", "--chdir", "--split-string"), stop=True)
_COMPOSE_RUN = Spec("evwupl", _long("--env", "--volume", "--workdir", "--user", "--publish", "--label", "--name",
                                      "--entrypoint", "--env-file"), stop=True)
_NODE_OPTIONS = Spec("Cw", _long("--filter", "--dir", "--prefix", "--workspace", "--cwd", "--reporter",
                                 "--loglevel"), stop=True)
_TIMEOUT = Spec("sk", _long("--signal", "--kill-after"), stop=True)
_XARGS = Spec("aEdILnPs", _long("--arg-file", "--delimiter", "--eof", "--replace", "--max-lines", "--max-args",
                                "--max-procs", "--max-chars", "--process-slot-var"), attached="iel", stop=True)
_SSH = Spec("BbcDEeFIiJLlmOopQRSWw", stop=True)
_FLOCK = Spec("wEc", _long("--timeout", "--conflict-exit-code", "--command"), stop=True)
_WATCH = Spec("n", _long("--interval"), attached="d", stop=True)
_SU = Spec("cgGsw", _long("--command", "--group", "--supp-group", "--shell", "--whitelist-environment"))
_EXEC = Spec("euw", _long("--env", "--user", "--workdir", "--env-file", "--detach-keys"), stop=True)
_KUBECTL = Spec("cnf", _long("--container", "--namespace", "--filename", "--context", "--pod-running-timeout"))
_SCRIPT = Spec("cETIBOm", _long("--command", "--echo", "--log-io", "--log-timing", "--timing", "--log-in",
                                "--log-out", "--logging-format"))
_NIX_SHELL = Spec("pIA", _long("--run", "--command", "--packages", "--attr", "--arg", "--argstr"))
_TMUX = Spec("sntcxyeFL", _long())
_PARALLEL = Spec("jSa", _long("--jobs", "--sshlogin", "--arg-file", "--delay", "--timeout", "--joblog"))
_PYTHON_M = re.compile(r"(python|pypy)[0-9.]*")
_PYTHON = Spec("cmWX", stop=True)
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
_DOTENV = re.compile(r"\s*(?:cat|grep|egrep|sed)\b[^|;&<>`$]*?\s['\"]?((?:[\w./-]*/)?\.env[\w.-]*)['\"]?\s*"
                     r"(?:\|\s*xargs\b[^|;&<>`$]*)?")


def _dotenv(val: Val) -> str | None:
    """The dotenv file whose lines a `$(...)` word gives env as assignments (`$(grep -v '^#' .env | xargs)`)."""
    m = _DOTENV.fullmatch(val.subs[0]) if len(val.subs) == 1 and val.text == f"$({val.subs[0]})" else None
    return m.group(1) if m else None


@dataclass
class Unwrapped:
    argv: list[Val]
    nested: list[tuple[str, bool]] = field(default_factory=list)  # (shell code, runs on another machine)
    remote: bool = False
    runners: list[str] = field(default_factory=list)  # bundle exec, direnv exec: their own files run too


def unwrap(argv: list[Val], stdin_paths: list[Val] | None, stdin_text: str | None = None) -> Unwrapped:
    u = Unwrapped(argv)
    for _ in range(32):
        if not u.argv:
            break
        prog, rest = program_name(u.argv[0]), u.argv[1:]
        new = _step(prog, rest, u, _names(stdin_paths, stdin_text))
        if new is None:
            break
        u.argv = new
    return u


def _names(paths: list[Val] | None, text: str | None) -> list[Val] | None:
    """What xargs reads: the names a stage prints, else the lines of known text."""
    if paths is not None:
        return paths
    return [Val(line) for line in re.split(r"[\n\0]", text) if line.strip()] if text is not None else None  # -0


def _step(prog: str, rest: list[Val], u: Unwrapped, stdin_paths: list[Val] | None) -> list[Val] | None:
    """The argv left after removing the wrapper `prog`, or None when prog is not a wrapper."""
    if prog in ("pnpm", "yarn") and rest and rest[0].text == "dlx":
        return _package_bin(parse(rest[1:], Spec("p", _long("--package"), stop=True)).operands)
    if prog in ("pnpm", "yarn", "npm") and rest and rest[0].text.startswith("-"):
        rest = parse(rest, _NODE_OPTIONS).operands  # pnpm --filter api -r exec ...: pnpm's options, then its command
    if prog in _RUNNERS:
        if not rest or rest[0].text != _RUNNERS[prog]:
            return None
        u.runners.append(prog)
        words = [v.text for v in rest]
        if "--" in words:  # op run -- cmd, aws-vault exec PROFILE -- cmd, nix develop -c cmd
            return rest[words.index("--") + 1:]
        if "-c" in words and prog == "nix":
            return rest[words.index("-c") + 1:]
        skip = 2 if prog in ("direnv", "aws-vault", "conda", "mamba") and len(rest) > 2 else 1
        return parse(rest[skip:], Spec(stop=True)).operands
    if _PYTHON_M.fullmatch(prog) and (module := parse(rest, _PYTHON).value("-m")):
        return [module[0], *parse(rest, _PYTHON).operands]  # python -m twine upload: twine runs
    if prog in ("gosu", "su-exec") and len(rest) > 1:
        return rest[1:]  # gosu USER CMD
    if prog == "systemd-run" and any(v.text == "--scope" for v in rest):  # runs here, in a scope: its command runs
        return parse(rest, SYSTEMD_SCOPE).operands
    if prog in WRAPPERS:
        o = parse(rest, WRAPPERS[prog])
        if prog in ("npx", "bunx"):
            return _package_bin(o.operands)
        if prog in ("chrt", "taskset") and o.operands and re.fullmatch(r"[0-9a-fA-Fx,-]+", o.operands[0].text):
            return o.operands[1:]  # chrt -f 10 CMD, taskset -c 0 CMD: the priority or CPU list comes first
        if prog in ("sudo", "doas") and o.has("-v", "-k", "-K", "-l"):
            return []
        if prog in ("sudo", "doas") and not o.operands and o.has("-s", "-i"):
            return [Val("sh")]  # sudo -s: a root shell reading its commands from stdin
        return o.operands
    if prog == "env":
        o = parse(rest, _ENV)
        split = o.value("-S", "--split-string")
        u.nested += [(" ".join(_plain(w) for w in _split(s.text)), u.remote) for s in split]
        ops = o.operands
        while ops and (_ASSIGNMENT.match(ops[0].text) or _dotenv(ops[0])):
            name, _, value = ops[0].text.partition("=")
            if name in COMMAND_VARS:
                u.nested.append((value, u.remote))  # env GIT_PAGER='...' git log
            if found := _dotenv(ops[0]):  # env $(grep -v '^#' .env | xargs) CMD: the file's lines, judged as sourced
                u.nested.append((f". {shlex.quote(found)}", u.remote))
            ops = ops[1:]
        return ops
    if prog == "timeout":
        return parse(rest, _TIMEOUT).operands[1:]
    if prog == "command":
        o = parse(rest, Spec(stop=True))
        return [] if o.has("-v", "-V") else o.operands
    if prog == "xargs":
        return _xargs(rest, stdin_paths)
    if prog in ("script", "tmux", "parallel", "chroot", "nix-shell", "sg"):
        return _code_wrappers(prog, rest, u, stdin_paths)
    if prog in ("flock", "watch", "su"):
        o = parse(rest, {"flock": _FLOCK, "watch": _WATCH, "su": _SU}[prog])
        code = o.value("-c", "--command")
        if prog == "flock" and not code:
            after = parse(o.operands[1:], Spec("c", _long("--command")))  # flock FILE -c 'cmd'
            code = after.value("-c", "--command")
            if not code:
                return o.operands[1:]
        if prog == "su" and not code:
            return [Val("sh")]  # su USER: a shell reading its commands from stdin
        u.nested += [(c.text, u.remote) for c in code]
        if prog == "watch":
            u.nested.append((" ".join(v.text for v in o.operands), u.remote))
        return []
    if (remote := cloud_remote(prog, rest)) is not None:  # heroku run, fly ssh console -C, gcloud compute ssh, ...
        u.nested += [(code, True) for code in remote]
        return []
    if prog == "autossh":  # autossh -M PORT [ssh options] host CMD: ssh, watched
        words = [v.text for v in rest]
        cut = words.index("-M") if "-M" in words else -1
        rest, prog = (rest[:cut] + rest[cut + 2:] if cut >= 0 else rest), "ssh"
    if prog == "ssh":
        u.nested += [(command, u.remote) for command in hidden_commands(prog, rest)]  # -o ProxyCommand=... runs here
        o = parse(rest, _SSH)
        if len(o.operands) > 1:
            u.nested.append((" ".join(v.text for v in o.operands[1:]), True))
        return []
    return _container(prog, rest, u)


def _code_wrappers(prog: str, rest: list[Val], u: Unwrapped, stdin_paths: list[Val] | None) -> list[Val] | None:
    """Programs that take the command as a string (script -c, tmux new 'cmd', nix-shell --run) or after a fixed
    argument (chroot DIR cmd, parallel cmd ::: args)."""
    words = [v.text for v in rest]
    if prog == "script":
        o = parse(rest, _SCRIPT)
        u.nested += [(c.text, u.remote) for c in o.value("-c", "--command")]
        return []
    if prog == "nix-shell":
        u.nested += [(c.text, u.remote) for c in parse(rest, _NIX_SHELL).value("--run", "--command")]
        return []
    if prog == "sg":
        u.nested += [(c.text, u.remote) for c in parse(rest, Spec("c")).value("-c")] + \
            [(" ".join(words[1:]), u.remote)] * (len(words) > 1 and "-c" not in words)
        return []
    if prog == "tmux":
        if words[:1] and words[0] in ("new-session", "new", "new-window", "neww", "split-window", "splitw",
                                      "respawn-pane", "send-keys", "send"):
            o = parse(rest[1:], _TMUX)
            if o.operands:
                u.nested.append((" ".join(v.text for v in o.operands if v.text not in ("Enter", "C-m")), u.remote))
            return []
        return None  # tmux kill-server, ls, attach: tmux itself
    if prog == "chroot":
        ops = parse(rest, Spec(long=_long("--userspec", "--groups"), stop=True)).operands
        return ops[1:]
    # parallel CMD ::: ARGS: the command once per argument ({} replaced, else appended)
    if ":::" not in words:
        return _xargs(rest, stdin_paths)
    cut = words.index(":::")
    command = parse(rest[:cut], _PARALLEL).operands
    args = rest[cut + 1:] or [Val("{}")]
    if len(command) == 1 and " " in command[0].text:  # parallel 'rm -rf {}' ::: a b
        u.nested += [(command[0].text.replace("{}", shlex.quote(a.text)), u.remote) for a in args]
        return []
    if any("{}" in c.text for c in command):
        u.nested += [(shlex.join([c.text.replace("{}", a.text) for c in command]), u.remote) for a in args]
        return []
    return command + args


def _container(prog: str, rest: list[Val], u: Unwrapped) -> list[Val] | None:
    words = [v.text for v in rest]
    if prog in ("docker", "podman", "nerdctl", "docker-compose") and words[:1] == ["exec"]:
        skip = 1
    elif prog in ("docker", "podman") and words[:2] == ["compose", "exec"]:
        skip = 2
    elif prog in ("kubectl", "oc") and words[:1] == ["exec"]:
        u.remote = True
        if "--" in words:
            return rest[words.index("--") + 1:]
        return parse(rest[1:], _KUBECTL).operands[1:]
    elif prog in ("kubectl", "oc") and words[:1] == ["run"] and "--" in words:  # kubectl run x --image=y -- CMD
        u.remote = True
        return rest[words.index("--") + 1:]
    elif (prog == "docker-compose" and words[:1] == ["run"]) or (prog in ("docker", "podman")
                                                                  and words[:2] == ["compose", "run"]):
        u.remote = True  # docker compose run SERVICE CMD: in the service's container
        return parse(rest[words.index("run") + 1:], _COMPOSE_RUN).operands[1:]
    elif prog == "deno" and words[:1] == ["run"]:  # deno run -A npm:rimraf x: the package's program
        ops = parse(rest[1:], Spec(stop=True)).operands
        return [Val(ops[0].text[4:].split("@")[0]), *ops[1:]] if ops and ops[0].text.startswith("npm:") else None
    else:
        return None
    u.remote = True
    return parse(rest[skip:], _EXEC).operands[1:]


# Packages whose command has another name (npx netlify-cli deploy runs `netlify deploy`).
_PACKAGE_BINS = {"@changesets/cli": "changeset", "netlify-cli": "netlify", "firebase-tools": "firebase",
                 "@vscode/vsce": "vsce", "vercel": "vercel", "@angular/cli": "ng", "@nestjs/cli": "nest",
                 "wrangler": "wrangler", "lerna": "lerna", "release-it": "release-it", "np": "np"}


def _package_bin(operands: list[Val]) -> list[Val]:
    """npx/bunx/pnpm dlx PACKAGE ARGS: the command the package installs (`--yes` and versions dropped)."""
    if not operands:
        return operands
    name = re.sub(r"(?<=.)@[^/@]*$", "", operands[0].text)
    command = _PACKAGE_BINS.get(name) or re.sub(r"-cli$", "", name.rsplit("/", 1)[-1])
    return [Val(command), *operands[1:]]


def _split(text: str) -> list[str]:
    """env -S's own splitting: words, with quotes, not shell syntax."""
    try:
        return shlex.split(text)
    except ValueError:
        return text.split()


def _plain(word: str) -> str:
    """A word env -S made, as a shell word: quoted only where the shell would read it otherwise (`print(2)`)."""
    return word if re.fullmatch(r"[\w@%+=:,./~${}-]+", word) else shlex.quote(word)


def _xargs(rest: list[Val], stdin_paths: list[Val] | None) -> list[Val]:
    o = parse(rest, _XARGS)
    cmd = o.operands or [Val("echo")]
    names = stdin_paths or [Val("{}")]
    replace = [v.text or "{}" for v in o.value("-I", "--replace")] + (["{}"] if o.has("-i") else [])
    if not replace:  # without -I, xargs splits what it reads at blanks
        return cmd + [w for v in names for w in ([Val(s) for s in _split(v.text)] if v.known and v.text.strip()
                                                 and v.glob_at is None else [v])]
    token = replace[0]
    return [names[0] if a.text == token else Val(a.text.replace(token, names[0].text)) if token in a.text else a
            for a in cmd]
