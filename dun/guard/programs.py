"""What particular programs do beyond plain file effects: signals to every process, containers that reach the host
(bind mounts of /, the home directory or a socket; --privileged), commands hidden in options (tar --to-command,
ssh -o ProxyCommand, git -c core.pager), and which generated commands are known environment setup."""

from __future__ import annotations

import posixpath
import re

from dun.guard.expand import Ctx, Env, Val, literal_words
from dun.guard.options import Spec, parse
from dun.guard.paths import classify

_RUN = Spec("acehlmpuvw", frozenset({
    "--volume", "--mount", "--env", "--name", "--network", "--net", "--workdir", "--user", "--entrypoint", "--publish",
    "--label", "--memory", "--cpus", "--platform", "--env-file", "--hostname", "--add-host", "--device", "--cap-add",
    "--cap-drop", "--pid", "--ipc", "--security-opt", "--tmpfs", "--volumes-from", "--restart", "--log-driver",
    "--shm-size", "--ulimit", "--gpus", "--runtime", "--cgroupns", "--userns", "--uts", "--pull", "--label-file",
    "--link", "--dns", "--expose", "--health-cmd", "--stop-signal", "--cidfile"}), stop=True)
_HOST_NAMESPACES = ("--pid=host", "--ipc=host", "--uts=host", "--userns=host", "--cgroupns=host")
_DANGEROUS_CAPS = re.compile(r"(?i)^(cap_)?(all|sys_admin|sys_module|sys_ptrace|dac_read_search|sys_rawio)$")
# Commands whose output is environment setup that shells `eval` or `source` every day.
ENV_GENERATORS = frozenset({
    "ssh-agent", "gpg-agent", "keychain", "dircolors", "opam", "direnv", "starship", "zoxide", "fnm", "mise", "rtx",
    "brew", "conda", "micromamba", "mamba", "pyenv", "rbenv", "nodenv", "goenv", "jenv", "plenv", "luarocks",
    "minikube", "docker-machine", "thefuck", "register-python-argcomplete", "atuin", "mcfly", "nvm", "asdf",
    "perl", "resize", "locale", "env", "printenv", "ssh-add"})
# Options whose value is a command the program runs through a shell: (program, option, prefix to strip).
COMMAND_OPTIONS: dict[str, tuple[tuple[str, str], ...]] = {
    "tar": (("--to-command", ""), ("--checkpoint-action", "exec="), ("--use-compress-program", ""), ("-I", ""),
            ("--info-script", ""), ("--new-volume-script", "")),
    "rsync": (("-e", ""), ("--rsh", ""), ("--rsync-path", "")),
    "zip": (("-TT", ""), ("--unzip-command", "")),
    "gdb": (("-ex", "!"), ("-ex", "shell "), ("--eval-command", "!"), ("-iex", "!")),
    "man": (("-P", ""), ("--pager", "")),
}
# Variables whose value a program runs as a command (git's pager and editor, ssh command, bash's startup file).
COMMAND_VARS = frozenset({"GIT_PAGER", "PAGER", "MANPAGER", "SYSTEMD_PAGER", "GIT_EDITOR", "EDITOR", "VISUAL",
                          "GIT_SEQUENCE_EDITOR", "GIT_SSH_COMMAND", "GIT_SSH", "GIT_EXTERNAL_DIFF", "GIT_ASKPASS",
                          "SSH_ASKPASS", "SUDO_ASKPASS", "GIT_PROXY_COMMAND", "LESSOPEN", "LESSCLOSE", "BROWSER",
                          "PROMPT_COMMAND", "BASH_ENV", "ENV"})
_VIM_LIKE = frozenset({"vim", "vi", "nvim", "ex", "view", "gvim"})
_SSH_LOCAL_COMMANDS = re.compile(r"(?i)^\s*(ProxyCommand|LocalCommand|KnownHostsCommand)\s*[= ]\s*(.+)$", re.S)
_GIT_COMMAND_KEYS = re.compile(r"(?i)^(core\.(sshcommand|pager|editor|fsmonitor|askpass)|sequence\.editor|"
                               r"diff\.external|diff\..+\.(textconv|command)|merge\..+\.driver|"
                               r"filter\..+\.(clean|smudge|process)|gpg\.program|gpg\..+\.program|pager\..+|"
                               r"credential\.helper|uploadpack\.packobjectshook|alias\..+)$")


def git_env_config(argv: list[Val], assignments: list[str]) -> list[Val]:
    """git's argv with the config its environment sets (GIT_CONFIG_COUNT/KEY_n/VALUE_n, GIT_CONFIG_PARAMETERS) given
    as `-c key=value`, as git reads it."""
    if not argv or posixpath.basename(argv[0].text) != "git" or not assignments:
        return argv
    env = dict(a.partition("=")[::2] for a in assignments)
    env = {k: v.strip("'\"") if not k.startswith("GIT_CONFIG_PARAMETERS") else v for k, v in env.items()}
    pairs = [f"{env[k]}={env.get('GIT_CONFIG_VALUE_' + k[15:], '')}" for k in env if k.startswith("GIT_CONFIG_KEY_")]
    pairs += [f"{k}={v}" for k, v in re.findall(r"'([^']+)'(?:='([^']*)')?", env.get("GIT_CONFIG_PARAMETERS", ""))]
    return [argv[0], *(w for p in pairs for w in (Val("-c"), Val(p))), *argv[1:]]


def kill_all(prog: str, args: list[Val]) -> bool:
    """kill -1, kill 1, killall -u USER, pkill -u USER or a pattern matching everything."""
    words = [a.text for a in args]
    if prog == "kill":
        if words[:1] in (["-l"], ["-L"]):
            return False
        if words[:1] in (["-s"], ["-n"], ["--signal"]):
            words = words[2:]
        elif words and words[0].startswith("-") and words[0] != "--" and len(words) > 1:
            words = words[1:]  # the signal: -9, -KILL
        if words[:1] == ["--"]:
            words = words[1:]
        return any(t in ("-1", "1") for t in words)
    if prog in ("pkill", "killall"):
        o = parse(args, Spec("uUgGPsStn", frozenset({"--user", "--uid", "--group", "--signal", "--parent"})))
        return bool(o.value("-u", "-U", "--user", "--uid")) or any(v.text in (".", ".*", "^", "") for v in o.operands)
    return False


def container(prog: str, args: list[Val], ctx: Ctx, env: Env) -> tuple[list[tuple[str, str]], bool]:
    """(host paths a `docker/podman run` binds writable, with their categories; whether it gets host privileges)."""
    if prog not in ("docker", "podman", "nerdctl") or not args:
        return [], False
    words = [a.text for a in args]
    at = next((i for i, w in enumerate(words) if w in ("run", "create")), None)
    if at is None or (at > 0 and words[0] not in ("container", "-H", "--host", "--context")):
        return [], False
    o = parse(args[at + 1:], _RUN)
    mounts: list[tuple[str, str]] = []
    for spec in o.value("-v", "--volume"):
        source, _, rest = spec.text.partition(":")
        if source.startswith(("/", "~", ".", "$")) and (":ro" not in ":" + rest.split(":", 1)[-1]
                                                         or source.endswith(".sock")):
            mounts.append(classify(Val(source, spec.unknown_at, None), ctx, env))
    for spec in o.value("--mount"):
        fields = dict(f.partition("=")[::2] for f in spec.text.split(","))
        source = fields.get("source") or fields.get("src") or ""
        if fields.get("type", "volume") == "bind" and source and "readonly" not in fields and "ro" not in fields:
            mounts.append(classify(Val(source), ctx, env))
    privileged = o.has("--privileged") or any(f in o.flags for f in _HOST_NAMESPACES) or any(
        v.text == "host" for v in o.value("--pid", "--ipc", "--userns")) or bool(o.value("--device")) or any(
        _DANGEROUS_CAPS.match(v.text) for v in o.value("--cap-add"))
    return mounts, privileged


def hidden_commands(prog: str, args: list[Val]) -> list[str]:
    """Shell commands given as option values: tar --to-command, rsync -e, ssh -o ProxyCommand, vim -c '!...'."""
    out: list[str] = []
    words = [a.text for a in args]
    for option, prefix in COMMAND_OPTIONS.get(prog, ()):
        for i, word in enumerate(words):
            value = words[i + 1] if word == option and i + 1 < len(words) else \
                word[len(option) + 1:] if word.startswith(option + "=") else None
            if value is not None and value.startswith(prefix):
                out.append(value[len(prefix):])
    if prog in ("ssh", "scp", "sftp"):
        for i, word in enumerate(words):
            value = words[i + 1] if word == "-o" and i + 1 < len(words) else word[2:] if word.startswith("-o") \
                else None
            m = _SSH_LOCAL_COMMANDS.match(value or "")
            if m:
                out.append(m.group(2))
    if prog == "git":  # git submodule foreach CMD, git rebase -x CMD, git bisect run CMD
        if "foreach" in words:
            out.append(" ".join(w for w in words[words.index("foreach") + 1:] if w not in ("--recursive", "-q")))
        if "rebase" in words:
            out += [words[i + 1] for i, w in enumerate(words[:-1]) if w in ("-x", "--exec")]
            out += [w[7:] for w in words if w.startswith("--exec=")]
        if words[-3:-1] == ["bisect", "run"] or (words[:2] == ["bisect", "run"]):
            out.append(" ".join(words[words.index("run") + 1:]))
    if prog in ("npm", "pnpm", "yarn", "bun") and words[:2] == ["pkg", "set"]:
        # npm pkg set scripts.test="...": a command npm runs later (npm test), as if it ran now
        out += [w.partition("=")[2] for w in words[2:] if re.match(r"scripts\.[^=]+=", w)]
    if prog == "npm" and words[:1] == ["set-script"] and len(words) >= 3:  # npm 7's set-script NAME CMD
        out.append(words[2])
    if prog == "husky" and words[:1] in (["add"], ["set"]) and len(words) >= 3:  # husky add .husky/pre-push CMD
        out.append(words[2])
    if prog in _VIM_LIKE:
        values = [words[i + 1] for i, w in enumerate(words[:-1]) if w in ("-c", "--cmd")]
        values += [w[1:] for w in words if w.startswith("+") and len(w) > 1]
        for value in values:
            m = re.match(r"\s*:?\s*(?:silent!?\s*)?!(.+)", value)
            if m:
                out.append(m.group(1))
    return out


def git_config_commands(prog: str, args: list[Val]) -> list[str]:
    """Commands in git config values, set for this call (-c key=value) or stored (git config key value)."""
    if prog != "git":
        return []
    words = [a.text for a in args]
    pairs = [words[i + 1].partition("=")[::2] for i, w in enumerate(words[:-1]) if w == "-c"]
    if "config" in words:
        rest = [w for w in words[words.index("config") + 1:] if not w.startswith("-")]
        if len(rest) >= 2:
            pairs.append((rest[0], rest[1]))
    out = []
    for key, value in pairs:
        if _GIT_COMMAND_KEYS.match(key) and value:
            if key.lower().startswith(("alias.", "credential.")):
                if value.startswith("!"):
                    out.append(value[1:])
            else:
                out.append(value)
    return out


def is_env_generator(body: str) -> bool:
    """`$(ssh-agent -s)`, `$(pyenv init -)`, `<(kubectl completion bash)`: output that is environment setup."""
    words = literal_words(body)
    if not words:
        return False
    name = posixpath.basename(words[0])
    return name in ENV_GENERATORS or any(w in ("completion", "completions", "shellenv", "shell-completion")
                                         for w in words[1:4])


DECODING = re.compile(r"\|\s*(?:base64|tr|rev|xxd|openssl|gunzip|zcat|base32|basenc)\b")


def unknown_program(head: Val) -> str:
    """"" when the program's name is known; "generated-program" when it is a command's output ($(...), a variable
    set from one, a find/xargs placeholder), unless that command is environment setup; "unknown-program" when it is
    an unresolved variable."""
    name = posixpath.basename(head.text)
    if name == "{}" or (head.glob_at is not None and "{}" not in head.text and any(c in name for c in "*?")) or any(
            DECODING.search(body) for body in head.subs):  # $(echo cm0g... | base64 -d) ARGS; ./*.sh found by find
        return "generated-program"
    if head.known or not any(mark in name for mark in ("$(", "${", "`", ")", "}")):
        return ""
    if head.unknown_kind == "cmd":
        return "" if head.subs and all(is_env_generator(body) for body in head.subs) else "generated-program"
    return "unknown-program"
