"""Where a secret leaves the machine other than through the senders secrets.py knows one by one: the clipboard
(`xclip < ~/.ssh/id_rsa`, then pasted anywhere), file-transfer tools (`wormhole send`, `croc send`, `ipfs add`),
commands that store it as a hosted secret or variable (`gh secret set X < key`, `fly secrets set K="$(cat ...)"`,
`vercel env add`, `aws ssm put-parameter --value file://...`), any other program handed a key file together with a
network address, and a directory holding keys served to the network (`python3 -m http.server --directory ~`).

A key used as a key stays free: the values of options that name one (`-i KEY`, `--key-file`, `--kubeconfig`,
`--env-file`, `--defaults-file`) are not sends.
"""

from __future__ import annotations

import re

from dun.guard.effects import Facts
from dun.guard.expand import Ctx, Env, Val
from dun.guard.paths import category, classify
from dun.guard.secrets import INTERPRETERS, SENDERS, secret_path, text_secret, val_secret

CLIPBOARD = frozenset({"xclip", "xsel", "wl-copy", "pbcopy", "clip", "clip.exe", "termux-clipboard-set", "copyq",
                       "gpaste-client", "lemonade", "osc52", "osc", "clipcopy", "win32yank", "win32yank.exe"})
TRANSFER = frozenset({"wormhole", "magic-wormhole", "croc", "ffsend", "ipfs", "transfer", "pastebinit", "swaks",
                      "sendemail", "mpack", "s-nail", "neomutt", "kdeconnect-cli", "sendxmpp", "apprise", "ntfy",
                      "slack-cli", "telegram-send", "gist", "gist-paste", "paste", "sprunge", "termbin", "0x0",
                      "rpaste", "wgetpaste", "fpaste", "ix", "hut", "s5cmd", "b2", "azcopy", "gdrive",
                      "dropbox_uploader", "megaput", "mega-put", "onedrive", "rclone", "restic", "aws-vault"})
# Leading words that store what follows as a hosted secret, variable or setting
SECRET_VERBS = frozenset({"secret", "secrets", "variable", "variables", "var", "vars", "env", "envs", "config:set",
                          "config:add", "env:set", "env:import", "secrets:set", "secret:set", "put-parameter",
                          "create-secret", "put-secret-value", "update-secret", "kv", "set-env", "setenv"})
# ... and the action that stores it (not `vercel env pull`, `doppler secrets download`, `gh secret list`)
_STORE_VERBS = frozenset({"set", "add", "put", "import", "upload", "create", "update", "push", "write", "edit",
                          "save", "store", "new", "put-parameter", "create-secret", "put-secret-value",
                          "update-secret", "config:set", "config:add", "env:set", "env:import", "secrets:set",
                          "secret:set", "set-env", "setenv"})
# Options whose value is a key or credentials file used as one (ssh -i KEY, --kubeconfig FILE)
KEY_OPTIONS = frozenset({"-i", "--identity", "--identity-file", "--key", "--key-file", "--keyfile", "--private-key",
                         "--ssh-key", "--ssh-key-file", "--cert", "--cacert", "--kubeconfig", "--config", "-F",
                         "--defaults-file", "--defaults-extra-file", "--env-file", "--credentials",
                         "--credentials-file", "--keystore", "--ks", "--password-file", "--auth-file", "-e"})
# ... and any option named for a key, a certificate or credentials it uses (mysql --ssl-key=..., --client-cert)
_KEY_OPTION = re.compile(r"^--?[\w-]*(?:key|cert|identity|cred|kubeconfig|config|auth|pass|env-?file|ssl|tls|cafile"
                         r"|keystore)[\w-]*(?:=.*)?$", re.I)
# Programs that use a key they are given (ssh and its kin, configuration tools) or only look at it
USERS = frozenset({"ssh-add", "ssh-keygen", "ssh-copy-id", "sshfs", "mosh", "autossh", "ansible", "ansible-playbook",
                   "chmod", "chown", "ls", "stat", "file", "test", "[", "cat", "less", "more", "head", "tail", "grep",
                   "rg", "diff", "wc", "sha256sum", "sha1sum", "md5sum", "base64", "xxd", "od", "hexdump", "vim",
                   "vi", "nano", "code", "emacs", "bat", "realpath", "readlink", "touch", "mkdir", "rm", "shred",
                   "cp", "mv", "install", "tee", "source", ".", "dotenv", "env-cmd", "direnv", "export", "echo",
                   "printf", "openssl", "gpg", "age", "sops", "git-crypt", "keychain", "jq", "yq", "sed", "awk",
                   "sort", "tr", "cut", "tar", "zip", "gzip", "xargs", "find", "du", "tree", "nl", "strings"})
_NET = re.compile(r"^[a-z][a-z0-9+.-]*://|^[\w.-]+@[\w.-]+(?::|$)|^[\w-]+(?:\.[\w-]+)+:\d+$"
                  r"|^[\w-]+(?:\.[\w-]+)+:/?[\w~./-]*$")
_ENV_FILE = re.compile(r"\.env\b|a \.env file")


def _candidates(args: list[Val]) -> list[Val]:
    """The arguments that can name a file sent: not values of key options; `--x=PATH`, `file://PATH`, `@PATH` and
    `NAME=PATH` read as PATH."""
    out: list[Val] = []
    skip = False
    for a in args:
        text = a.text
        if skip:
            skip = False
            continue
        if text in KEY_OPTIONS or _KEY_OPTION.match(text):
            skip = "=" not in text
            continue
        if text.startswith("-") and "=" in text:
            flag, _, text = text.partition("=")
            if flag in KEY_OPTIONS:
                continue
        elif "=" in text and not text.startswith(("/", "~", ".")):
            text = text.partition("=")[2]
        text = re.sub(r"^(?:fileb?://|@)", "", text)
        out.append(Val(text) if text != a.text else a)
    return out


def _secret_in(args: list[Val], stdin_secret: str | None, ctx: Ctx, env: Env) -> str | None:
    if stdin_secret:
        return stdin_secret
    for v in _candidates(args):
        if name := val_secret(v, ctx, env):
            return name
    for a in args:
        for body in a.subs:
            if name := text_secret(body, ctx, env):
                return name
    return None


def sink_secret(facts: Facts, args: list[Val], stdin_secret: str | None, ctx: Ctx, env: Env) -> str | None:
    """The secret this command hands to the clipboard, a transfer tool, a hosted secret store, or to an unknown
    program together with a network address; None when it sends none."""
    prog = facts.program
    if prog in USERS or INTERPRETERS.fullmatch(prog) or any(a.text.startswith("--dry-run") for a in args):
        return None
    if prog in CLIPBOARD:
        name = _secret_in(args, stdin_secret, ctx, env)
        return f"{name}, put on the clipboard" if name else None
    verbs = set(facts.verbs)
    if prog in TRANSFER or (SECRET_VERBS & verbs and _STORE_VERBS & verbs):
        return _secret_in(args, stdin_secret, ctx, env)
    if prog in SENDERS or not any(_NET.match(a.text) for a in args):
        return None
    name = _secret_in(args, stdin_secret, ctx, env)  # an unknown program given a key and an address
    return name if name and not _ENV_FILE.search(name) else None


_SERVERS = {"serve": "", "http-server": "", "live-server": "", "httpd": "-h"}


def served_secret(prog: str, args: list[Val], ctx: Ctx, env: Env) -> str | None:
    """A directory holding keys served to the network: python3 -m http.server --directory ~, php -S 0:80 -t ~,
    npx serve ~, busybox httpd -h ~ (run from the home directory, the same)."""
    words = [a.text for a in args]
    if prog == "http.server":  # python3 -m http.server (the module runs as the program)
        given = [args[i + 1] for i, w in enumerate(words[:-1]) if w in ("-d", "--directory")]
        given += [Val(w.split("=", 1)[1]) for w in words if w.startswith("--directory=")]
        given += [a for a in args if not a.text.startswith("-") and not a.text.isdigit() and a not in given][:1]
    elif prog == "php" and "-S" in words:
        given = [args[i + 1] for i, w in enumerate(words[:-1]) if w == "-t"]
    elif prog in _SERVERS:
        flag = _SERVERS[prog]
        given = [args[i + 1] for i, w in enumerate(words[:-1]) if w == flag] if flag else [
            a for a in args if not a.text.startswith("-") and not a.text.isdigit()][:1]
    else:
        return None
    where = classify(given[0], ctx, env) if given else ((ctx.cwd, category(ctx.cwd, ctx, env)) if ctx.cwd else None)
    if where is None:
        return None
    if where[1] in ("home", "ancestor", "system") or secret_path(where[0], env):
        return f"{where[0]} served to the network"
    return None


