"""File effects of the tools that write files without looking like it: sort -o, editors (ex, vim, ed), patch, cpio,
scp, ssh-keygen, global git and package-manager config, xxd -r, openssl/gpg outputs, archivers and compressors,
rename, sponge, rsync --delete, and ACL/attribute changes (setfacl, chattr)."""

from __future__ import annotations

import posixpath
import re

from dun.guard import removers
from dun.guard.expand import Val
from dun.guard.options import Opts, Spec, parse

_EDITORS = frozenset({"ex", "vi", "vim", "nvim", "view", "ed", "red"})
_COMPRESSORS = frozenset({"gzip", "gunzip", "bzip2", "bunzip2", "xz", "unxz", "lzma", "unlzma", "zstd", "unzstd",
                          "lz4", "compress", "uncompress"})
_SPECS: dict[str, Spec] = {
    "sort": Spec("oktST", frozenset({"--output", "--key", "--field-separator", "--temporary-directory",
                                     "--buffer-size", "--parallel", "--files0-from"})),
    "vim": Spec("cSTuUiwWs", frozenset({"--cmd"})),
    "ed": Spec("p", frozenset({"--prompt"})),
    "patch": Spec("dioprBDFgVYzx", frozenset({"--directory", "--input", "--output", "--strip", "--reject-file",
                                             "--prefix", "--suffix", "--backup-if-mismatch", "--fuzz", "--get"})),
    "cpio": Spec("DEFHIMORs", frozenset({"--directory", "--pattern-file", "--file", "--format", "--owner",
                                         "--rename-batch-file"})),
    "scp": Spec("cFiJloPS", frozenset()),
    "ssh-keygen": Spec("abCDEfFGIjJKmMnNOPrRsSt", frozenset()),
    "git config": Spec("f", frozenset({"--file", "--blob", "--type", "--default"})),
    "xxd": Spec("cgloqs", frozenset({"-cols", "-groupsize", "-len", "-seek", "-offset", "-name"})),
    "openssl": Spec(long=frozenset({"-out", "-keyout", "-in", "-inkey", "-subj", "-days", "-newkey", "-config",
                                    "-passin", "-passout", "-name", "-certfile", "-CA", "-CAkey", "-extfile"}),
                    words=True),
    "gpg": Spec("oruf", frozenset({"--output", "--recipient", "--local-user", "--homedir", "--default-key"})),
    "zip": Spec("bdnPtx", frozenset({"--temp-path", "--password"})),
    "setfacl": Spec("mxMX", frozenset({"--modify", "--remove", "--modify-file", "--remove-file", "--set",
                                       "--set-file"})),
    "rsync": Spec("eBfT", frozenset({"--rsh", "--filter", "--exclude", "--include", "--temp-dir", "--partial-dir",
                                     "--log-file", "--backup-dir", "--chmod", "--chown"})),
}
_SSH_KEYGEN_READS = ("-l", "-y", "-F", "-L", "-B", "-Q", "-e", "-H", "-E")
_GIT_CONFIG_READS = ("--get", "--get-all", "--get-regexp", "--get-urlmatch", "--list", "-l", "--show-origin",
                     "--show-scope", "--name-only", "--get-color", "--get-colorbool")
_GIT_CONFIG_WRITES = ("--unset", "--unset-all", "--add", "--replace-all", "--edit", "-e", "--remove-section",
                      "--rename-section")


def writes(prog: str, o: Opts, args: list[Val], home: str) -> list[tuple[str, Val]]:
    """(operation, path) pairs: write, delete or chmod."""
    ops = o.operands
    out: list[tuple[str, Val]] = []
    if prog == "sort":
        out += [("write", v) for v in o.value("-o", "--output")]
    elif prog in _EDITORS:
        files = [v for v in ops if not v.text.startswith("+")]
        out += [("write", v) for v in files]
    elif prog == "patch":
        out += [("write", v) for v in o.value("-o", "--output") or ops[:1]]
        out += [("write", Val(d.text.rstrip("/") + "/{}")) for d in o.value("-d", "--directory")]
    elif prog == "cpio":
        if o.has("-i", "--extract", "-p", "--pass-through"):
            dirs = o.value("-D", "--directory") + (ops[-1:] if o.has("-p", "--pass-through") else [])
            out += [("write", Val(d.text.rstrip("/") + "/{}")) for d in dirs or [Val(".")]]
    elif prog == "scp":
        if len(ops) >= 2 and not re.match(r"[^/]*:", ops[-1].text):
            out.append(("write", ops[-1]))
    elif prog == "ssh-keygen":
        out += _ssh_keygen(o, home)
    elif prog == "xxd" and o.has("-r", "-revert") and len(ops) >= 2:
        out.append(("write", ops[1]))
    elif prog == "openssl":
        out += [("write", v) for v in o.value("-out", "-keyout")]
    elif prog in ("gpg", "gpg2"):
        out += [("write", v) for v in o.value("-o", "--output")]
    elif prog == "zip" and ops:
        out.append(("write", ops[0]))
    elif prog in _COMPRESSORS and not o.has("-c", "--stdout", "--to-stdout", "-t", "--test", "-l", "--list"):
        out += [("write", v) for v in ops]
    elif prog in ("rename", "prename", "file-rename"):
        out += [("write", v) for v in ops[1:]]
    elif prog == "sponge":
        out += [("write", v) for v in ops]
    elif prog == "rsync" and any(f.startswith("--delete") for f in o.flags) and len(ops) >= 2 \
            and not re.match(r"[^/]*:", ops[-1].text):
        target = ops[-1].text.rstrip("/") or "/"
        out.append(("delete", Val(target.rstrip("/") + "/*", glob_at=len(target.rstrip("/")) + 1)))
    elif prog in ("setfacl", "chattr"):
        out += [("chmod", v) for v in ops[1:] if prog == "chattr"] + [("chmod", v) for v in ops if prog == "setfacl"]
    else:
        out += _config_writes(prog, args, home)
    return out + [("delete", v) for v in removers.removes(prog, args)]


def spec(prog: str) -> Spec | None:
    if prog in ("vi", "nvim", "view", "ex"):
        return _SPECS["vim"]
    if prog == "red":
        return _SPECS["ed"]
    if prog == "gpg2":
        return _SPECS["gpg"]
    return _SPECS.get(prog)


def _ssh_keygen(o: Opts, home: str) -> list[tuple[str, Val]]:
    if o.has(*_SSH_KEYGEN_READS):
        return []
    if o.has("-R"):  # removes a host from known_hosts
        return [("write", f) for f in o.value("-f")] or [("write", Val(posixpath.join(home, ".ssh/known_hosts")))]
    keys = o.value("-f")
    return [("write", k) for k in keys] + [("write", Val(k.text + ".pub")) for k in keys]


def _config_writes(prog: str, args: list[Val], home: str) -> list[tuple[str, Val]]:
    """git config --global/--system/--file, npm/pip/yarn config set: the user's or the machine's config."""
    words = [a.text for a in args]
    if prog == "git" and "config" in words:
        at = words.index("config")
        o = parse(args[at + 1:], _SPECS["git config"])
        if o.has(*_GIT_CONFIG_READS) or not (len(o.operands) >= 2 or o.has(*_GIT_CONFIG_WRITES)):
            return []
        if o.has("--global"):
            return [("write", Val(posixpath.join(home, ".gitconfig")))]
        if o.has("--system"):
            return [("write", Val("/etc/gitconfig"))]
        return [("write", f) for f in o.value("-f", "--file")]
    if prog in ("npm", "pnpm", "yarn", "pip", "pip3") and words[:1] == ["config"] and len(words) > 1 \
            and words[1] in ("set", "delete", "unset", "edit", "rm"):
        if any(w in ("--location=project", "--project", "--site") for w in words):
            return []
        name = {"pip": ".config/pip/pip.conf", "pip3": ".config/pip/pip.conf", "yarn": ".yarnrc"}.get(prog, ".npmrc")
        return [("write", Val(posixpath.join(home, name)))]
    return []
