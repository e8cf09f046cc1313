"""Facts about programs no rule names, read from what their command line says: whether it aims at production
(`--stage production`, `eb deploy acme-prod`, `mina production deploy`). The generic rules (rules_generic.py) pair
these with the verbs the command uses."""

from __future__ import annotations

import functools
import re

from dun.guard import remotestate
from dun.guard.codeapi import DESTROY_CODE, PUBLISH_CODE
from dun.guard.effects import Facts, program_name
from dun.guard.expand import Val
from dun.guard.marks import code_kills_all, code_kills_by_name
from dun.guard.rules_generic import TEXT_AND_OWN
from dun.guard.secrets import code_exfiltration

# Production named as a word of an argument: `prod`, `acme-prod`, `inventories/production`, `values-prod.yaml`,
# `prod-eu`, `HEAD:production` (not `feature/production-logging`, a branch about production)
_PROD_END = re.compile(r"^(?:live|(?:.*[-_.])?(?:prod|production))(?:\.[A-Za-z0-9]{1,8})*$", re.I)
_PROD_START = re.compile(r"^(?:prod|production)[-_][A-Za-z0-9]{1,5}$", re.I)
_PROD_FLAGS = frozenset({"--prod", "--production", "--promote", "--live"})


_NONPROD = re.compile(r"^(?:.*[-_.])?(?:staging|stage|stg|dev|development|preview|test|testing|qa|sandbox)"
                      r"(?:[-_][A-Za-z0-9]{1,5})?(?:\.[A-Za-z0-9]{1,8})*$", re.I)


def nonprod_target(args: list[Val]) -> bool:
    """A deploy aimed at staging, a preview or a test environment by name (fly deploy -c fly.staging.toml,
    firebase deploy -P staging, wrangler deploy --env staging)."""
    for arg in args:
        text = arg.text.partition("=")[2] if arg.text.startswith("-") else arg.text
        if "://" not in text and any(_NONPROD.match(p) for p in re.split(r"[/:@=,]", text) if p):
            return True
    return False


def _prod_word(text: str) -> bool:
    return any(_PROD_END.match(part) or _PROD_START.match(part) for part in re.split(r"[/:@=,]", text))


def prod_target(args: list[Val]) -> str | None:
    """The word that names production among the arguments, or None."""
    for arg in args:
        text = arg.text
        if text.startswith("-"):
            flag, eq, value = text.partition("=")
            if flag in _PROD_FLAGS or (eq and _prod_word(value)):
                return text
        elif re.match(r"https?://(?:prod|production|live)\.", text) or ("://" not in text and _prod_word(text)):
            return text
    return None


# Tunnels that publish a port of this machine on the internet
_TUNNELS = frozenset({"ngrok", "cloudflared", "bore", "lt", "localtunnel", "zrok", "frpc", "chisel", "inlets",
                      "pagekite", "pagekite.py", "expose", "sish", "tunnelto", "pinggy", "tmole", "loophole",
                      "localxpose", "telebit", "devtunnel"})
# Ports whose service gives a way in or holds data: ssh, remote desktops, databases, the Docker and Kubernetes APIs
_SENSITIVE_PORTS = frozenset({"22", "2222", "3389", "5900", "5901", "3306", "5432", "6379", "27017", "9200", "2375",
                              "2376", "6443", "10250", "11211", "5984", "8086", "9042"})
_PORT = re.compile(r"(?:^|[:=])(\d{2,5})(?:/tcp)?$")
_SOCKET = re.compile(r"(?i)^(?:tcp[46]?|udp[46]?|openssl|sctp|ssl)(?:-listen|-connect)?:")
_SHELL_ADDR = re.compile(r"(?i)^(?:exec|system):")


def exposes(prog: str, args: list[Val]) -> str | None:
    """How this command opens the machine to the network: a remote port forward (ssh -R), a tunnel publishing a
    sensitive port or raw TCP (ngrok tcp 22, cloudflared --url ssh://..., bore local 22, tailscale funnel 22), or a
    shell on a socket (nc -e /bin/sh, socat TCP:... EXEC:sh); None when it does not."""
    words = [a.text for a in args]
    if prog in ("ssh", "autossh") and any(re.fullmatch(r"-[A-Za-z]*R.*", w) or w.lower().startswith(
            ("-oremoteforward", "remoteforward")) for w in words):
        return "a remote port forward (ssh -R) opens a way into this machine"
    if prog in _TUNNELS or (prog == "tailscale" and words[:1] in (["funnel"], ["serve"])):
        ports = {m.group(1) for w in words if (m := _PORT.search(w))}
        raw = any(w in ("tcp", "tls", "ssh") or w.startswith(("ssh://", "tcp://", "rdp://", "smb://")) for w in words)
        if raw or ports & _SENSITIVE_PORTS:
            return "a tunnel publishes a port of this machine on the internet"
    if prog in ("nc", "ncat", "netcat", "nc.traditional", "nc.openbsd") and any(
            w in ("-e", "-c", "--exec", "--sh-exec", "--lua-exec") or re.fullmatch(r"-[a-zA-Z]*e", w) for w in words):
        return "a shell served on a network socket"
    if prog == "socat" and any(_SOCKET.match(w) for w in words) and any(_SHELL_ADDR.match(w) for w in words):
        return "a shell served on a network socket"
    return None


# Words that start a command a wrapper the guard does not know may be running (`pkexec2 rm -rf /opt`)
_COMMAND_WORDS = frozenset({"rm", "shred", "dd", "mkfs", "git", "kubectl", "docker", "podman", "helm", "terraform",
                            "tofu", "pulumi", "sh", "bash", "zsh", "dash", "psql", "mysql", "redis-cli", "mongosh",
                            "mongo", "curl", "wget", "find", "chmod", "chown", "mv", "cp", "pkill", "killall", "kill",
                            "npm", "pnpm", "yarn", "npx", "aws", "gcloud", "az", "gh", "python", "python3", "node",
                            "perl", "ruby", "php", "make", "xargs", "tar", "rsync", "scp", "ssh", "truncate",
                            "crontab", "systemctl", "dropdb", "sqlite3", "wipefs", "fdisk", "parted", "sfdisk",
                            "shutdown", "reboot", "eval", "exec", "sudo", "env", "tee", "sed", "awk", "twine", "cargo",
                            "gem", "rclone", "nc", "socat", "unlink", "rimraf", "trash-put", "gio"})


@functools.cache
def _rule_programs() -> frozenset[str]:
    """The programs some built-in rule names (they judge their own operands): a memo of a constant, built once."""
    from dun.guard.rules import BUILTIN_RULES

    return frozenset(p for r in BUILTIN_RULES for m in r.matches for p in m.programs)


def _named_by_rules(prog: str) -> bool:
    return prog in _rule_programs()


def wrapped_command(prog: str, args: list[Val]) -> list[Val] | None:
    """The command an unknown program seems to run: what follows `--`, or a command word among its first operands
    (`host-run --user dev rm -rf /srv`); None for programs the rules know and for programs that take words as text."""
    if not prog or prog in _COMMAND_WORDS or _named_by_rules(prog) or prog in _TEXT_PROGRAMS or prog in TEXT_AND_OWN:
        return None
    words = [a.text for a in args]
    if "--" in words and words.index("--") + 1 < len(words):
        return args[words.index("--") + 1:]
    for i, word in enumerate(words[:4]):
        if word in _COMMAND_WORDS and i + 1 < len(words):
            return args[i:]
    return None


_TEXT_PROGRAMS = frozenset({"man", "which", "whatis", "info", "tldr", "type", "help", "whereis", "apropos", "complete",
                            "hash", "alias", "unalias", "command", "echo", "printf", "say", "logger", "notify-send",
                            "brew", "apt", "apt-get", "dnf", "yum", "pacman", "snap", "flatpak", "pip", "pip3",
                            "pipx", "uv", "conda", "mamba", "asdf", "mise", "nix-env", "port", "choco", "winget",
                            "scoop", "corepack", "volta", "nvm", "fnm", "pyenv", "rbenv", "update-alternatives",
                            "git-*", "hg", "svn", "bzr", "fossil", "jj", "sl", "dvc", "compdef", "bind", "read",
                            "grep", "rg", "ag", "ack", "fzf", "history", "fc", "mc", "gsutil", "hdfs", "hadoop"})


_DESTRUCTIVE = re.compile(r"(?i)(?:^|[\s/_.-])(?:clean(?:up)?|wipe|purge|prune|nuke|delete|remove|reset|destroy|rm"
                          r"|erase|reclaim|scrub|shred|obliterate|clear)(?:$|[\s/_.-])")
_CODE_RUNNERS = {"go": "run", "cargo": "run", "deno": "run", "bun": "run"}


def destructive_targets(prog: str, args: list[Val]) -> list[Val]:
    """A program the guard cannot read, named for destroying (`go run ./cmd/cleanup`, `python scripts/wipe.py`,
    `./bin/purge`), given directories: the directories (`--dir ~/projects`), which its name says it removes."""
    words = [a.text for a in args]
    if prog in _CODE_RUNNERS and words[:1] == [_CODE_RUNNERS[prog]]:
        named = " ".join(words[1:3])
    elif prog.startswith(("python", "node", "ruby", "perl", "php", "bash", "sh")) and words:
        named = words[0]
    elif prog.startswith(("./", "/")) or "/" in prog:
        named = prog
    else:
        return []
    if not _DESTRUCTIVE.search(named):
        return []
    out = []
    for a in args:
        text = a.text.partition("=")[2] if a.text.startswith("-") else a.text
        if text.startswith("/") and not text.startswith(("/tmp", "/dev/")):
            out.append(Val(text) if text != a.text else a)
    return out


def forwarded(argv: list[Val]) -> Facts | None:
    """ssh runs its command elsewhere and leaves no facts of its own: its -R, judged before it is unwrapped."""
    prog = program_name(argv[0]) if argv else ""
    if prog in ("ssh", "autossh") and (how := exposes(prog, argv[1:])):
        return Facts(unit=" ".join(a.text for a in argv), program=prog, signals={"expose"},
                     notes={"expose": f"why: {how}"})
    return None


def mark_env(facts: Facts, assigned: dict[str, str | None]) -> None:
    """Production named by a variable set for the command (STAGE=production sls deploy)."""
    for name, value in assigned.items():
        if value and _prod_word(value) and "prod-target" not in facts.signals:
            facts.signals.add("prod-target")
            facts.notes["prod-target"] = f"why: aims at production, {name}={value}"
    remotestate.mark_env(facts, assigned)  # PGHOST=db.prod.internal psql -c 'GRANT ...'


_DB_NOUNS = frozenset({"db", "database", "databases", "schema", "sql", "table", "tables", "collection", "keyspace"})
_DB_VERBS = frozenset({"drop", "reset", "wipe", "purge", "truncate", "flush", "fresh", "nuke", "erase", "destroy"})
_DB_WORD = re.compile(r"(?:db|database|schema|sql|ecto|tables?)[:._-]"
                      r"(?:drop|reset|wipe|purge|truncate|flush|fresh|nuke)(?:[:._-]\w+)?"
                      r"|(?:drop|reset|wipe|purge|truncate|flush)[:._-](?:db|database|schema|tables?)")


def destroys_database(facts: Facts) -> bool:
    """Any tool's command line that drops, resets or wipes a database by its words (wp db reset, dotnet ef database
    drop, cargo sqlx database drop, drush sql-drop): the database rules, which know test databases, then decide."""
    verbs = facts.verbs
    if any(re.search(r"(?:^|[:._-])tests?(?:$|[:._-])", v) for v in verbs):
        return False  # npm run db:reset:test: the test database, by name
    return bool(_DB_NOUNS.intersection(verbs) and _DB_VERBS.intersection(verbs)) or any(
        _DB_WORD.fullmatch(v) for v in verbs)


def mark(facts: Facts, args: list[Val]) -> None:
    """Raise the long tail's signals on these facts."""
    if destroys_database(facts) and not any(f.startswith("--dry-run") for f in facts.flags):
        facts.signals.add("db-destroy")
    if nonprod_target(args) and not prod_target(args):
        facts.signals.add("nonprod-target")
    if how := exposes(facts.program, args):
        facts.signals.add("expose")
        facts.notes["expose"] = f"why: {how}"
    if target := prod_target(args):
        facts.signals.add("prod-target")
        facts.notes.setdefault("prod-target", f"why: aims at production, {target}")


def code_signals(facts: Facts, text: str) -> None:
    """The signals interpreter code raises by what it calls: processes killed by name or all of them, an SDK that
    destroys remote state, a package released, a secret sent."""
    if code_kills_by_name(text):
        facts.signals.add("kill-by-name")
    if code_kills_all(text):
        facts.signals.add("kill-all")
    if (m := DESTROY_CODE.search(text)) is not None:
        facts.signals.add("code-destroys")
        facts.notes["code-destroys"] = f"why: interpreter code calls {m.group(0).rstrip('( ')}"
    if PUBLISH_CODE.search(text):
        facts.signals.add("publishes")
        facts.notes["publishes"] = "why: interpreter code that releases or registers a package"
    if code_exfiltration(text):
        facts.signals.add("exfiltrate")
        facts.notes["exfiltrate"] = "secret: a key file or the environment, sent by interpreter code"
