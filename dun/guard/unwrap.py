"""Strip the programs that only run another program (sudo, env, timeout, nohup, xargs, ...) to find the command that
does the work, and collect the command strings that wrappers hand to a shell (su -c, ssh host cmd, watch, flock -c)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from dun.guard.effects import program_name
from dun.guard.expand import Val
from dun.guard.options import Spec, parse


def _long(*names: str) -> frozenset[str]:
    return frozenset(names)


_WRAPPERS: dict[str, Spec] = {
    "sudo": Spec("ugpCDhrtTU", _long("--user", "--group", "--prompt", "--chdir", "--host", "--role", "--type",
                                      "--other-user", "--close-from", "--command-timeout"), stop=True),
    "doas": Spec("uC", stop=True),
    "nohup": Spec(stop=True), "setsid": Spec(stop=True), "unbuffer": Spec(stop=True), "builtin": Spec(stop=True),
    "busybox": Spec(stop=True), "chronic": Spec(stop=True), "torsocks": Spec(stop=True), "exec": Spec("a", stop=True),
    "caffeinate": Spec("tw", stop=True), "stdbuf": Spec("ioe", stop=True), "nice": Spec("n", stop=True),
    "ionice": Spec("cnp", stop=True), "time": Spec("fo", _long("--format", "--output"), stop=True),
    "taskset": Spec(stop=True), "strace": Spec("eoOpsSuUP", stop=True), "ltrace": Spec("eouns", stop=True),
    "npx": Spec("p", _long("--package"), stop=True),
}
_RUNNERS = {"uv": "run", "poetry": "run", "pipenv": "run"}  # `uv run cmd`; a bare `npx cmd` runs cmd too
_ENV = Spec("uCS", _long("--unset", "--chdir", "--split-string"), stop=True)
_TIMEOUT = Spec("sk", _long("--signal", "--kill-after"), stop=True)
_XARGS = Spec("aEdILnPs", _long("--arg-file", "--delimiter", "--eof", "--replace", "--max-lines", "--max-args",
                                "--max-procs", "--max-chars", "--process-slot-var"), attached="iel", stop=True)
_SSH = Spec("BbcDEeFIiJLlmOopQRSWw", stop=True)
_FLOCK = Spec("wEc", _long("--timeout", "--conflict-exit-code", "--command"), stop=True)
_WATCH = Spec("n", _long("--interval"), attached="d", stop=True)
_SU = Spec("cgGsw", _long("--command", "--group", "--supp-group", "--shell", "--whitelist-environment"))
_EXEC = Spec("euw", _long("--env", "--user", "--workdir", "--env-file", "--detach-keys"), stop=True)
_KUBECTL = Spec("cnf", _long("--container", "--namespace", "--filename", "--context", "--pod-running-timeout"))
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")


@dataclass
class Unwrapped:
    argv: list[Val]
    nested: list[tuple[str, bool]] = field(default_factory=list)  # (shell code, runs on another machine)
    remote: bool = False


def unwrap(argv: list[Val], stdin_paths: list[Val] | None) -> Unwrapped:
    u = Unwrapped(argv)
    for _ in range(32):
        if not u.argv:
            break
        prog, rest = program_name(u.argv[0]), u.argv[1:]
        new = _step(prog, rest, u, stdin_paths)
        if new is None:
            break
        u.argv = new
    return u


def _step(prog: str, rest: list[Val], u: Unwrapped, stdin_paths: list[Val] | None) -> list[Val] | None:
    """The argv left after removing the wrapper `prog`, or None when prog is not a wrapper."""
    if prog in _RUNNERS:
        return rest[1:] if rest and rest[0].text == _RUNNERS[prog] else None
    if prog in _WRAPPERS:
        o = parse(rest, _WRAPPERS[prog])
        return [] if prog in ("sudo", "doas") and o.has("-v", "-k", "-K", "-l") else o.operands
    if prog == "env":
        o = parse(rest, _ENV)
        u.nested += [(s.text, u.remote) for s in o.value("-S", "--split-string")]
        ops = o.operands
        while ops and _ASSIGNMENT.match(ops[0].text):
            ops = ops[1:]
        return ops
    if prog == "timeout":
        return parse(rest, _TIMEOUT).operands[1:]
    if prog == "command":
        o = parse(rest, Spec(stop=True))
        return [] if o.has("-v", "-V") else o.operands
    if prog == "xargs":
        return _xargs(rest, stdin_paths)
    if prog in ("flock", "watch", "su"):
        o = parse(rest, {"flock": _FLOCK, "watch": _WATCH, "su": _SU}[prog])
        code = o.value("-c", "--command")
        if prog == "flock" and not code:
            return o.operands[1:]
        u.nested += [(c.text, u.remote) for c in code]
        if prog == "watch":
            u.nested.append((" ".join(v.text for v in o.operands), u.remote))
        return []
    if prog == "ssh":
        o = parse(rest, _SSH)
        if len(o.operands) > 1:
            u.nested.append((" ".join(v.text for v in o.operands[1:]), True))
        return []
    return _container(prog, rest, u)


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
    else:
        return None
    u.remote = True
    return parse(rest[skip:], _EXEC).operands[1:]


def _xargs(rest: list[Val], stdin_paths: list[Val] | None) -> list[Val]:
    o = parse(rest, _XARGS)
    cmd = o.operands or [Val("echo")]
    names = stdin_paths or [Val("{}")]
    replace = [v.text or "{}" for v in o.value("-I", "--replace")] + (["{}"] if o.has("-i") else [])
    if not replace:
        return cmd + names
    token = replace[0]
    return [names[0] if a.text == token else Val(a.text.replace(token, names[0].text)) if token in a.text else a
            for a in cmd]
