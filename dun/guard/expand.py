"""Word expansion and path classification: what a word will be when the shell runs it, as far as can be known
without running anything, and where a path lands relative to the repository."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from dun.guard.lexer import ARITH, CMD, LIT, PROC, QUOTED, ShellError, Word, tokenize

REMOTE_HOME = "/~remote"  # the home directory on another machine (ssh, docker exec): never local
SYSTEM_DIRS = frozenset({
    "/", "/bin", "/boot", "/dev", "/etc", "/home", "/lib", "/lib32", "/lib64", "/media", "/mnt", "/opt", "/proc",
    "/root", "/run", "/sbin", "/srv", "/sys", "/tmp", "/usr", "/usr/bin", "/usr/lib", "/usr/local", "/usr/share",
    "/var", "/var/lib", "/var/log", "/var/tmp", "/Applications", "/Library", "/System", "/Users", "/Volumes",
    "/private", "/private/etc", "/private/var", "/nix", "/snap",
})
SAFE_DEVICES = frozenset({"/dev/null", "/dev/zero", "/dev/stdout", "/dev/stderr", "/dev/stdin", "/dev/tty",
                          "/dev/random", "/dev/urandom", "/dev/full"})
SAFE_DEVICE_DIRS = ("/dev/fd/", "/dev/shm/", "/dev/pts/")
PROTECTED = (".dun", ".claude/settings.json", ".claude/settings.local.json")
_TILDE = re.compile(r"([A-Za-z_][A-Za-z0-9_]*=)?~([A-Za-z0-9_.-]*)(?=/|$)")
_PARAM = re.compile(r"([A-Za-z_][A-Za-z0-9_]*|[0-9]+|[@*#?$!-])(?::?-(.*))?\Z", re.S)
FIND_TESTS = frozenset({  # find predicates that select some files (without one, find returns its start paths too)
    "-name", "-iname", "-path", "-ipath", "-wholename", "-iwholename", "-regex", "-iregex", "-type", "-xtype",
    "-newer", "-newermt", "-mtime", "-mmin", "-atime", "-amin", "-ctime", "-cmin", "-size", "-empty", "-user",
    "-group", "-nouser", "-nogroup", "-perm", "-links", "-lname", "-ilname", "-samefile", "-inum", "-used",
    "-readable", "-writable", "-executable", "-fstype", "-uid", "-gid", "-prune"})
_PARAM_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_BARE_GLOB = re.compile(r"[*?.\[\]!{},]+")


@dataclass(frozen=True)
class Env:
    """What stays fixed for one decision: the repository root, the home directory, the environment."""

    root: str
    home: str
    environ: Mapping[str, str] = field(default_factory=dict)
    temp: tuple[str, ...] = ("/tmp", "/var/tmp", "/private/tmp", "/private/var/tmp", "/dev/shm")


@dataclass
class Ctx:
    """What a shell carries from one command to the next: the working directory and variables."""

    cwd: str | None  # None: unknown (after `cd "$(something)"`)
    vars: dict[str, str | None] = field(default_factory=dict)  # None: assigned, value unknown
    remote: bool = False  # ssh host ..., docker exec ...: paths are on another machine
    depth: int = 0
    downloads: set[str] = field(default_factory=set)  # files written by curl/wget earlier in the line
    tainted: set[str] = field(default_factory=set)  # variables holding downloaded text: X=$(curl ...)

    def child(self, remote: bool = False, deeper: bool = True) -> Ctx:
        depth = self.depth + deeper
        if remote:
            return Ctx(None, {}, True, depth)
        return Ctx(self.cwd, dict(self.vars), self.remote, depth, self.downloads, set(self.tainted))


@dataclass
class Val:
    """An expanded word. Unknown expansions stay in `text` as written (`$X`, `$(cmd)`), so a nested `sh -c` string
    re-parses to the same thing."""

    text: str
    unknown_at: int | None = None  # where the first expansion with an unknown value starts
    glob_at: int | None = None  # where the first unquoted glob character is
    subs: list[str] = field(default_factory=list)  # bodies of $(...), `...`, <(...), >(...)
    dl: bool = False  # set by the walker: a substitution in this word runs a downloader
    split: bool = False  # an unquoted expansion gave text with blanks: the shell splits it into words

    @property
    def known(self) -> bool:
        return self.unknown_at is None

    def words(self) -> list[Val]:
        """The fields after word splitting (only a fully known value is split)."""
        if not self.split or not self.known:
            return [self]
        return [Val(text, dl=self.dl) for text in self.text.split()]


def lookup(name: str, ctx: Ctx, env: Env) -> str | None:
    if name in ctx.vars:
        return ctx.vars[name]
    if name == "HOME":
        return REMOTE_HOME if ctx.remote else env.home
    if name == "PWD":
        return ctx.cwd
    value = None if ctx.remote else env.environ.get(name)
    return value or None


def expand(word: Word, ctx: Ctx, env: Env) -> Val:
    out = Val("")
    buf: list[str] = []

    def unknown(text: str) -> None:
        if out.unknown_at is None:
            out.unknown_at = len("".join(buf))
        buf.append(text)

    for idx, part in enumerate(word.parts):
        text = part.text
        if part.kind == LIT:
            if idx == 0 and (m := _TILDE.match(text)):
                text = (m.group(1) or "") + _home_of(m.group(2), ctx, env) + text[m.end():]
            if out.glob_at is None and (g := re.search(r"[*?\[]", text)):
                out.glob_at = len("".join(buf)) + g.start()
            buf.append(text)
        elif part.kind == QUOTED:
            buf.append(text)
        elif part.kind == PROC:
            out.subs.append(text[1:])
            buf.append(f"{text[0]}({text[1:]})")
        elif part.kind == CMD:
            out.subs.append(text)
            special = _special_substitution(text, ctx, env)
            if special is None:
                unknown(f"$({text})")
            else:
                buf.append(special)
        elif part.kind == ARITH:
            unknown(f"$(({text}))")
        else:
            if (m := _PARAM_NAME.match(text)) and m.group(0) in ctx.tainted:
                out.dl = True
            value = _parameter(text, ctx, env)
            if value is None:
                unknown("${" + text + "}")
            else:
                out.split = out.split or (not part.quoted and any(c in value for c in " \t\n"))
                buf.append(value)
    out.text = "".join(buf)
    return out


def _home_of(user: str, ctx: Ctx, env: Env) -> str:
    if not user:
        return REMOTE_HOME if ctx.remote else env.home
    return "/root" if user == "root" else f"/home/{user}"


def _parameter(expr: str, ctx: Ctx, env: Env) -> str | None:
    m = _PARAM.match(expr)
    if m is None:
        return None
    value = lookup(m.group(1), ctx, env)
    if value is None and m.group(2) is not None and "$" not in m.group(2) and "`" not in m.group(2):
        return m.group(2)
    return value


def _literal_words(body: str) -> list[str]:
    """The words of a substitution that is one simple command without expansions; [] otherwise."""
    try:
        tokens = tokenize(body)
    except ShellError:
        return []
    words = [t.word.literal() if t.kind == "word" and t.word is not None else None for t in tokens]
    return [w for w in words if w is not None] if all(w is not None for w in words) else []


def _special_substitution(body: str, ctx: Ctx, env: Env) -> str | None:
    """The value of $(...) when it is known or stands for names in a known place: $(pwd), $(mktemp -d),
    $(which rm), $(git rev-parse --show-toplevel), $(find DIR ...), $(git ls-files)."""
    words = _literal_words(body)
    if (len(words) == 2 and words[0] in ("which", "realpath")) or words[:2] in (["command", "-v"], ["type", "-P"]):
        return words[-1]  # $(which rm) -rf /
    if words[:1] == ["mktemp"]:
        return "/tmp/tmp.guard"
    if words == ["pwd"]:
        return ctx.cwd
    if words == ["git", "rev-parse", "--show-toplevel"] and not ctx.remote:
        return env.root
    if words[:1] == ["find"]:  # names under find's first start path
        start = words[1] if len(words) > 1 and not words[1].startswith(("-", "(", "!")) else "."
        return start.rstrip("/") + "/{}" if FIND_TESTS.intersection(words) else start
    if words[:2] == ["git", "ls-files"] or words[:3] == ["git", "diff", "--name-only"]:
        return "./{}"
    return None


def under(path: str, directory: str) -> bool:
    return path == directory or path.startswith(directory.rstrip("/") + "/")


def normalize(path: str, cwd: str | None) -> str | None:
    if not path.startswith("/"):
        if cwd is None:
            return None
        path = posixpath.join(cwd, path)
    norm = posixpath.normpath(path)
    return "/" + norm.lstrip("/")


def category(path: str, ctx: Ctx, env: Env) -> str:
    """repo, gitdir, protected, inside, ancestor, home, system, temp, device, outside (or remote)."""
    if ctx.remote:
        if path == "/":
            return "ancestor"
        return "home" if path == REMOTE_HOME else "system" if path in SYSTEM_DIRS else "remote"
    root = env.root
    if path == root:
        return "repo"
    if under(path, root):
        rel = path[len(root):].lstrip("/")
        if rel == ".git":
            return "gitdir"
        return "protected" if any(under(rel, p) for p in PROTECTED) else "inside"
    if under(root, path):
        return "ancestor"
    if path == env.home:
        return "home"
    if path in SYSTEM_DIRS:
        return "system"
    if under(path, env.home):
        return "outside"
    if under(path, "/dev"):
        return "temp" if path in SAFE_DEVICES or path.startswith(SAFE_DEVICE_DIRS) else "device"
    if any(under(path, t) and path != t for t in env.temp):
        return "temp"
    return "outside"


def classify(val: Val, ctx: Ctx, env: Env) -> tuple[str, str]:
    """(path as shown, category) for a word used as a file name; unknown when its start cannot be known."""
    text = val.text
    cuts = [c for c in (val.unknown_at, val.glob_at) if c is not None]
    if not cuts:
        path = normalize(text or ".", ctx.cwd)
        return (text, "unknown") if path is None else (path, category(path, ctx, env))
    cut = min(cuts)
    slash = text.rfind("/", 0, cut)
    if slash < 0 and cut == val.unknown_at:
        return text, "unknown"
    directory = text[:slash + 1]
    component = text[slash + 1:].split("/")[0]
    base = normalize(directory or ".", ctx.cwd)
    if base is None:
        return text, "unknown"
    if cut == val.glob_at and _BARE_GLOB.fullmatch(component) and component.strip("."):
        where = category(base, ctx, env)  # rm -rf /* or ~/* or ./* at the root: all of that directory
        return posixpath.join(base, component), "contents" if where == "repo" else where
    path = posixpath.join(base, "{}")
    return path, category(path, ctx, env)
