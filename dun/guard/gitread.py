"""git's command line as git reads it: long options abbreviated to a unique prefix (`git reset --har`), config given
with `-c` or set earlier in the same command line with `git config`, and aliases defined either way then used.

The long options per subcommand are git 2.39's own list (`git <cmd> --git-completion-helper`) plus the options it
hides from completion (`--force` of clean, checkout and switch). A prefix of several options is ambiguous and git
refuses it; the guard reads it as every option it could be, which only errs towards denying a command git refuses.
"""

from __future__ import annotations

import re
import shlex

from dun.guard.expand import Val
from dun.guard.options import SPECS, Opts, parse

_LONG: dict[str, str] = {
    "push": "verbose quiet repo all mirror delete tags dry-run porcelain force force-with-lease force-if-includes "
            "recurse-submodules receive-pack exec set-upstream progress prune no-verify follow-tags signed atomic "
            "push-option ipv4 ipv6 verify",
    "send-pack": "verbose quiet receive-pack exec remote all dry-run mirror force signed push-option progress thin "
                 "atomic stateless-rpc stdin helper-status force-with-lease force-if-includes",
    "reset": "quiet no-refresh mixed soft hard merge keep recurse-submodules patch intent-to-add "
             "pathspec-from-file pathspec-file-nul refresh",
    "clean": "quiet dry-run interactive exclude force",
    "checkout": "guess overlay quiet recurse-submodules progress merge conflict detach track orphan "
                "ignore-other-worktrees ours theirs patch ignore-skip-worktree-bits pathspec-from-file "
                "pathspec-file-nul force",
    "switch": "create force-create guess discard-changes quiet recurse-submodules progress merge conflict detach "
              "track orphan ignore-other-worktrees force",
    "restore": "source staged worktree ignore-unmerged overlay quiet recurse-submodules progress merge conflict ours "
               "theirs patch ignore-skip-worktree-bits pathspec-from-file pathspec-file-nul",
    "rm": "dry-run quiet cached ignore-unmatch sparse pathspec-from-file pathspec-file-nul force recursive",
    "gc": "quiet prune cruft aggressive keep-largest-pack auto force",
    "prune": "dry-run verbose progress expire exclude-promisor-objects",
    "read-tree": "index-output empty verbose trivial aggressive reset prefix exclude-per-directory dry-run "
                 "no-sparse-checkout debug-unpack recurse-submodules quiet sparse-checkout",
    "checkout-index": "all ignore-skip-worktree-bits force quiet no-create index stdin temp prefix stage create",
    "reflog": "expire expire-unreachable all stale-fix rewrite updateref dry-run verbose single-worktree",
}
LONG_OPTIONS: dict[str, tuple[str, ...]] = {sub: tuple("--" + w for w in words.split())
                                            for sub, words in _LONG.items()}

_CONFIG_READS = frozenset({"--get", "--get-all", "--get-regexp", "--get-urlmatch", "--get-color", "--get-colorbool",
                           "-l", "--list", "--unset", "--unset-all", "--remove-section", "--rename-section", "-e",
                           "--edit", "--show-origin", "--show-scope", "--name-only"})
_CONFIG_VERBS = {"set": True, "get": False, "list": False, "unset": False, "edit": False, "rename-section": False,
                 "remove-section": False, "get-color": False}


def expand_flags(sub: str, flags: list[str]) -> list[str]:
    """The flags with abbreviated long options written out (`--har` -> `--hard`); unknown ones stay as written."""
    known = LONG_OPTIONS.get(sub)
    if not known:
        return flags
    out: list[str] = []
    for flag in flags:
        name, eq, value = flag.partition("=")
        if not name.startswith("--") or name in known or len(name) < 3:
            out.append(flag)
            continue
        negated = name.startswith("--no-") and "--" + name[5:] not in known
        stem = "--" + name[5:] if negated else name
        matches = [k for k in known if k.startswith(stem)]
        if not matches or negated:
            out.append(flag)
            continue
        out += [m + eq + value for m in matches]
    return out


def config_set(opts: Opts) -> tuple[str, str] | None:
    """(key in git's case-insensitive form, value) when `git config ...` (its options parsed) sets a key."""
    words = [v.text for v in opts.operands]
    flags = list(opts.flags)
    if words and words[0] in _CONFIG_VERBS:  # git 2.46's `git config set KEY VALUE`
        if not _CONFIG_VERBS[words[0]]:
            return None
        rest = parse(opts.operands[1:], SPECS["git config"])
        words, flags = [v.text for v in rest.operands], flags + rest.flags
    if any(f in _CONFIG_READS for f in flags) or len(words) < 2:
        return None
    return normal_key(words[0]), words[1]


def expand_values(sub: str, values: dict[str, list[Val]]) -> dict[str, list[Val]]:
    """Option values keyed by the option's full name (`--exp=now` -> `--expire`)."""
    out: dict[str, list[Val]] = {}
    for name, vals in values.items():
        for full in expand_flags(sub, [name]):
            out.setdefault(full, []).extend(vals)
    return out


# Editors and pagers git may run: `git config core.editor "code --wait"` names one, with plain arguments, and plants
# nothing that was not already on the machine.
_PLAIN_TOOLS = frozenset({"vim", "vi", "nvim", "nano", "emacs", "emacsclient", "code", "codium", "subl", "mate",
                          "gedit", "kate", "micro", "hx", "less", "more", "most", "cat", "delta", "bat",
                          "diff-so-fancy", "true", "diff-highlight", "tig", "idea", "zed"})
_PLAIN_KEYS = re.compile(r"core\.(editor|pager)|sequence\.editor|pager\..+")


def plain_tool(key: str, value: str) -> bool:
    """Whether an editor or pager setting names a known tool with plain arguments (no shell syntax)."""
    words = value.split()
    if key.startswith("pager.") and value.lower() in ("true", "false", "yes", "no", "on", "off", "1", "0"):
        return True  # pager.<cmd> also turns paging on or off
    return bool(_PLAIN_KEYS.fullmatch(key)) and bool(words) and bool(re.fullmatch(r"[\w./=: -]+", value)) and \
        words[0].rsplit("/", 1)[-1] in _PLAIN_TOOLS


def normal_key(key: str) -> str:
    """git compares section and variable names case-insensitively, the subsection (remote.NAME.push) exactly."""
    section, _, rest = key.partition(".")
    sub, dot, var = rest.rpartition(".")
    return f"{section.lower()}.{sub}.{var.lower()}" if dot else f"{section.lower()}.{rest.lower()}"


def alias_argv(sub: str, config: dict[str, str]) -> list[str] | None:
    """The words an alias defined in `config` (`alias.NAME`) stands for; None when `sub` is not such an alias or the
    alias is a shell command (`!...`, which the walker runs as shell code)."""
    body = config.get(f"alias.{sub.lower()}")
    if body is None or body.startswith("!"):
        return None
    try:
        return shlex.split(body)
    except ValueError:
        return body.split()


def with_alias(args: list[Val], top: Opts, words: list[str]) -> list[Val]:
    """git's argv (after the program name) with the alias at `top.end` replaced by `words`."""
    return [*args[:top.end], *(Val(w) for w in words), *args[top.end + 1:]]
