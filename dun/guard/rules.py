"""The guard's rules as data, the matcher that interprets them, and the user's `guard.allow`/`guard.deny` patterns.

A rule is an id, a description and one or more `Match` descriptions; a rule fires on a simple command when any of
its matches holds, and a match holds when every condition it sets holds. Conditions speak about `Facts`: the
program, its subcommand (git push), flags and operands, the files it deletes/writes/chmods and where they are
(`where` categories: repo, contents, gitdir, protected, inside, ancestor, home, system, temp, device, outside,
unknown), the SQL it sends, and whether it runs code from the network.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fnmatch import fnmatchcase

from dun.guard.effects import Facts

FILE_TOOLS = ("Write", "Edit", "MultiEdit", "NotebookEdit")


@dataclass(frozen=True)
class Match:
    programs: tuple[str, ...] = ()  # globs over the program's base name
    subcommands: tuple[str, ...] = ()  # globs over the first operand (git's subcommand)
    flags_any: tuple[str, ...] = ()  # globs: one of the flags (-f, --force, --prune=now) is given
    flags_none: tuple[str, ...] = ()  # globs: none of these flags is given
    args_any: tuple[str, ...] = ()  # globs: one of the operands after the subcommand matches
    args_none: tuple[str, ...] = ()  # globs: none of the operands after the subcommand matches
    effects: tuple[str, ...] = ()  # delete, write, chmod: the command has such an effect ...
    where: tuple[str, ...] = ()  # ... on a path in one of these categories
    recursive: bool | None = None  # ... which is (or is not) recursive
    queries: tuple[str, ...] = ()  # regexes (case-insensitive) over the SQL/queries it sends
    exec_download: bool = False  # it runs code fetched from the network
    download_exec: bool = False  # it runs a file downloaded earlier in the same command line


@dataclass(frozen=True)
class Rule:
    id: str
    description: str
    matches: tuple[Match, ...]


_DELETE = ("delete",)
_OUT = ("outside", "home", "ancestor", "system")
_GIT = ("git",)
_DISK_TOOLS = ("fdisk", "sfdisk", "cfdisk", "gdisk", "sgdisk", "parted")
_READ_ONLY_DISK_FLAGS = ("-l", "--list", "-p", "--print", "-d", "--dump", "-s", "--show-size", "-V", "--version",
                         "-h", "--help")

BUILTIN_RULES: tuple[Rule, ...] = (
    Rule("fs.delete-system", "deletes /, the home directory, a system directory or a parent of the repository",
         (Match(effects=_DELETE, where=("ancestor", "home", "system")),)),
    Rule("fs.delete-repo", "deletes the repository itself, all of its files, or its .git directory",
         (Match(effects=_DELETE, where=("repo", "contents", "gitdir")),)),
    Rule("fs.delete-outside", "deletes files outside the repository (only /tmp is free)",
         (Match(effects=_DELETE, where=("outside", "device")),)),
    Rule("fs.delete-unresolved", "recursive delete of a path that starts with a variable or command the guard cannot "
         "resolve (empty, it deletes from /)", (Match(effects=_DELETE, where=("unknown",), recursive=True),)),
    Rule("disk.format", "formats, partitions or wipes a disk",
         (Match(programs=("mkfs", "mkfs.*", "mke2fs", "mkswap", "mkdosfs", "mkntfs", "wipefs", "blkdiscard",
                          "pvremove", "vgremove", "lvremove")),
          Match(programs=_DISK_TOOLS, flags_none=_READ_ONLY_DISK_FLAGS, args_none=("print", "p")),
          Match(programs=("cryptsetup",), subcommands=("luksFormat", "erase", "luksErase")),
          Match(programs=("zpool", "zfs"), subcommands=("destroy", "labelclear")),
          Match(programs=("mdadm",), flags_any=("--zero-superblock",)))),
    Rule("disk.device-write", "writes to a disk device", (Match(effects=("write",), where=("device",)),)),
    Rule("perm.recursive-outside", "recursive chmod/chown of /, a system directory or a path outside the repository",
         (Match(effects=("chmod",), where=(*_OUT, "device", "unknown"), recursive=True),)),
    Rule("fs.write-outside", "writes outside the repository (only /tmp and /dev/null are free)",
         (Match(effects=("write", "chmod"), where=_OUT),)),
    Rule("guard.protected-path", "changes dun's or Claude Code's own configuration (.dun/, .claude/settings*.json)",
         (Match(effects=("write", "delete", "chmod"), where=("protected",)),)),
    Rule("git.push-force", "force-pushes (rewrites history on the remote)",
         (Match(programs=_GIT, subcommands=("push",), flags_any=(
             "-f", "--force", "--force-with-lease", "--force-with-lease=*", "--force-if-includes", "--mirror")),
          Match(programs=_GIT, subcommands=("push",), args_any=("+*",)))),
    Rule("git.push-delete", "deletes branches or tags on the remote",
         (Match(programs=_GIT, subcommands=("push",), flags_any=("-d", "--delete", "--prune")),
          Match(programs=_GIT, subcommands=("push",), args_any=(":*",)))),
    Rule("git.history-rewrite", "rewrites the repository's history (filter-branch, filter-repo, BFG)",
         (Match(programs=_GIT, subcommands=("filter-branch", "filter-repo")),
          Match(programs=("git-filter-repo", "git-filter-branch", "bfg")))),
    Rule("git.reset-hard", "git reset --hard discards uncommitted work (not checked against git status)",
         (Match(programs=_GIT, subcommands=("reset",), flags_any=("--hard",)),)),
    Rule("git.clean", "git clean -f deletes untracked files, which may be uncommitted work (-n and -X are allowed)",
         (Match(programs=_GIT, subcommands=("clean",), flags_any=("-f", "--force"),
                flags_none=("-n", "--dry-run", "-X")),)),
    Rule("git.discard-changes", "discards uncommitted changes to the whole tree (checkout/restore ., checkout -f, "
         "stash clear)",
         (Match(programs=_GIT, subcommands=("checkout", "restore"), args_any=(".", "./", ":/", "[*]", ":(top)"),
                flags_none=("--staged", "-S")),
          Match(programs=_GIT, subcommands=("checkout", "switch"), flags_any=("-f", "--force", "--discard-changes")),
          Match(programs=_GIT, subcommands=("stash",), args_any=("clear",)))),
    Rule("git.destroy-reflog", "expires the reflog or prunes unreachable objects now (destroys the way back)",
         (Match(programs=_GIT, subcommands=("reflog",), args_any=("expire", "delete")),
          Match(programs=_GIT, subcommands=("gc", "prune"), flags_any=("--prune=now", "--prune=all", "--expire=now")))),
    Rule("sql.drop", "sends SQL DROP or TRUNCATE", (Match(queries=(r"\bdrop\b", r"\btruncate\b")),)),
    Rule("db.drop", "drops, resets or flushes a database",
         (Match(programs=("dropdb",)), Match(programs=("mysqladmin",), subcommands=("drop",)),
          Match(queries=(r"\bflush(all|db)\b", r"\bdropDatabase\s*\(", r"\.drop\s*\(")),
          Match(programs=("rails", "rake"), subcommands=("db:drop*", "db:reset", "db:purge")),
          Match(programs=("python*",), subcommands=("manage.py", "*/manage.py"), args_any=("flush", "reset_db")),
          Match(programs=("manage.py", "django-admin"), subcommands=("flush", "reset_db")),
          Match(programs=("prisma",), subcommands=("migrate",), args_any=("reset",)),
          Match(programs=("prisma",), subcommands=("db",), flags_any=("--force-reset",)))),
    Rule("infra.destroy", "destroys infrastructure or cloud data (terraform destroy, s3 rm --recursive, "
         "kubectl delete namespace/--all)",
         (Match(programs=("terraform", "tofu", "terragrunt"), subcommands=("destroy",)),
          Match(programs=("terraform", "tofu", "terragrunt"), subcommands=("apply",), flags_any=("-destroy",)),
          Match(programs=("aws",), subcommands=("s3",), args_any=("rm", "rb"), flags_any=("--recursive", "--force")),
          Match(programs=("gsutil",), subcommands=("rm",), flags_any=("-r", "-R")),
          Match(programs=("kubectl", "oc"), subcommands=("delete",), args_any=("ns", "namespace", "namespaces",
                                                                               "ns/*", "namespace/*")),
          Match(programs=("kubectl", "oc"), subcommands=("delete",), flags_any=("--all", "-A", "--all-namespaces")))),
    Rule("net.pipe-to-shell",
         "runs code downloaded from the network (curl | sh, bash <(curl ...), sh -c \"$(curl ...)\")",
         (Match(exec_download=True),)),
    Rule("net.download-exec", "runs a file it has just downloaded (curl -o x.sh URL && sh x.sh)",
         (Match(download_exec=True),)),
    Rule("sys.power", "shuts down or reboots the machine",
         (Match(programs=("shutdown", "reboot", "halt", "poweroff")),
          Match(programs=("systemctl",), subcommands=("poweroff", "reboot", "halt", "kexec")),
          Match(programs=("init", "telinit"), subcommands=("0", "6")))),
)

_SQL_NOISE = re.compile(r"--[^\n]*|/\*.*?\*/|'(?:[^']|'')*'|\$\$.*?\$\$", re.S)


def _any(globs: tuple[str, ...], values: list[str]) -> bool:
    return any(fnmatchcase(v, g) for g in globs for v in values)


def match(rule: Rule, facts: Facts) -> str | None:
    """The detail ("" or the path concerned) when the rule fires on these facts, else None."""
    for m in rule.matches:
        detail = _match_one(m, facts)
        if detail is not None:
            return detail
    return None


def _match_one(m: Match, f: Facts) -> str | None:
    if m.programs and not _any(m.programs, [f.program]):
        return None
    if m.subcommands and not _any(m.subcommands, [f.sub]):
        return None
    if (m.flags_any and not _any(m.flags_any, f.flags)) or (m.flags_none and _any(m.flags_none, f.flags)):
        return None
    if (m.args_any and not _any(m.args_any, f.operands)) or (m.args_none and _any(m.args_none, f.operands)):
        return None
    detail = ""
    if m.queries:
        hits = [q for q in f.queries if any(re.search(r, _SQL_NOISE.sub(" ", q), re.I) for r in m.queries)]
        if not hits:
            return None
        detail = "query: " + " ".join(hits[0].split())[:120]
    if (m.exec_download and not f.exec_download) or (m.download_exec and not f.download_exec):
        return None
    if m.effects:
        for e in f.effects:
            if e.op in m.effects and (not m.where or e.where in m.where) and (
                    m.recursive is None or e.recursive == m.recursive):
                return e.path
        return None
    return detail


@dataclass(frozen=True)
class Pattern:
    """A guard.allow/guard.deny entry: `glob`, `re:regex`, or either scoped to a tool: `Write(/srv/www/*)`."""

    source: str
    tool: str | None  # None: Bash commands
    regex: re.Pattern[str] | None
    glob: str

    def matches(self, tool: str, subject: str) -> bool:
        if (self.tool or "Bash") != tool and not (self.tool == "Edit" and tool in FILE_TOOLS):
            return False
        return bool(self.regex.search(subject)) if self.regex is not None else fnmatchcase(subject, self.glob)


_SCOPED = re.compile(r"([A-Za-z]+)\((.*)\)", re.S)


def compile_pattern(text: str) -> Pattern:
    """Raises ValueError for an empty pattern or a bad regex."""
    tool, body = None, text.strip()
    if m := _SCOPED.fullmatch(body):
        tool, body = m.group(1), m.group(2).strip()
    if not body:
        raise ValueError(f"empty guard pattern {text!r}")
    if body.startswith("re:"):
        try:
            return Pattern(text, tool, re.compile(body[3:]), "")
        except re.error as exc:
            raise ValueError(f"bad regex in guard pattern {text!r}: {exc}") from None
    return Pattern(text, tool, None, body)


@dataclass(frozen=True)
class RuleSet:
    rules: tuple[Rule, ...]
    allow: tuple[Pattern, ...]
    deny: tuple[Pattern, ...]


def load_rules(extra_allow: list[str], extra_deny: list[str]) -> RuleSet:
    """The built-in rules plus the config's patterns. Raises ValueError naming every bad pattern."""
    errors: list[str] = []
    compiled: list[list[Pattern]] = [[], []]
    for out, texts in zip(compiled, (extra_allow, extra_deny), strict=True):
        for text in texts:
            try:
                out.append(compile_pattern(text))
            except ValueError as exc:
                errors.append(str(exc))
    if errors:
        raise ValueError("; ".join(errors))
    return RuleSet(BUILTIN_RULES, tuple(compiled[0]), tuple(compiled[1]))
