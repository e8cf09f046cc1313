"""Where a path lands: inside the repository, in its .git, in the home directory, a system directory, /tmp, a
device, or elsewhere outside. Symlinks are followed first: the ones made earlier in the same command line
(`ln -s ~ h && rm -rf h/`) and the ones on disk (realpath), so a link in the repository that points out of it does
not make an outside path look inside."""

from __future__ import annotations

import os
import posixpath
import re

from dun.guard.expand import REMOTE_HOME, Ctx, Env, Val
from dun.store import layout

SYSTEM_DIRS = frozenset({
    "/", "/bin", "/boot", "/dev", "/etc", "/home", "/lib", "/lib32", "/lib64", "/media", "/mnt", "/opt", "/proc",
    "/root", "/run", "/sbin", "/srv", "/sys", "/tmp", "/usr", "/usr/bin", "/usr/lib", "/usr/local", "/usr/share",
    "/var", "/var/lib", "/var/log", "/var/tmp", "/Applications", "/Library", "/System", "/Users", "/Volumes",
    "/private", "/private/etc", "/private/var", "/nix", "/snap",
})
SAFE_DEVICES = frozenset({"/dev/null", "/dev/zero", "/dev/stdout", "/dev/stderr", "/dev/stdin", "/dev/tty",
                          "/dev/random", "/dev/urandom", "/dev/full"})
SAFE_DEVICE_DIRS = ("/dev/fd/", "/dev/shm/", "/dev/pts/")
# What dun and the coding agents load from the repository: their settings, hooks and MCP servers
PROTECTED = (layout.DIR, ".claude/settings.json", ".claude/settings.local.json", ".claude/hooks", ".mcp.json",
             ".gemini/settings.json", ".codex/config.toml", ".cursor/mcp.json", ".vscode/mcp.json")
GIT_STATE = (".git/objects", ".git/refs", ".git/logs", ".git/HEAD", ".git/packed-refs")  # history, not caches
# What git runs or reads as configuration: a file planted here runs later, in git calls outside the session.
GIT_EXEC = (".git/hooks", ".git/config", ".git/info/attributes", ".git/modules", ".git/worktrees",
            ".git/config.worktree", ".git/objects/info/alternates")
# A path named as one of these keeps its category after symlinks: `rm -rf /bin` is a system directory even where
# /bin is a link to /usr/bin, and removing the link is as bad.
_NAMED = frozenset({"ancestor", "home", "system", "repo", "gitdir", "gitexec", "protected"})
_BARE_GLOB = re.compile(r"[*?.\[\]!{},]+")
_MAX_LINKS = 40


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
    """repo, gitdir, gitexec (its hooks and config), protected, inside, ancestor, home, system, temp, device, outside
    (or remote)."""
    if ctx.remote:
        if path == "/":
            return "ancestor"
        if under(path, "/tmp") or under(path, "/var/tmp"):
            return "system" if path in SYSTEM_DIRS else "temp"
        return "home" if path == REMOTE_HOME else "system" if path in SYSTEM_DIRS else "remote"
    root = env.root
    if path == root:
        return "repo"
    if under(path, root):
        rel = path[len(root):].lstrip("/")
        if any(under(rel, p) for p in GIT_EXEC):
            return "gitexec"
        if rel == ".git" or any(under(rel, p) for p in GIT_STATE):
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


def resolve(path: str, ctx: Ctx, follow_last: bool) -> str | None:
    """`path` with symlinks followed (the last component only when `follow_last`); None when a link made earlier in
    the line points somewhere unknown."""
    path = path.split("\0", 1)[0]  # an argument ends at a NUL byte
    for _ in range(_MAX_LINKS):
        before = path
        for link, target in ctx.links.items():
            if under(path, link) and (path != link or follow_last):
                if target is None:
                    return None
                path = target + path[len(link):]
                break
        head, tail = posixpath.split(path)
        path = posixpath.join(os.path.realpath(head), tail) if head else path
        if follow_last:
            path = os.path.realpath(path)
        if path == before:
            return path
    return path


def place(path: str, ctx: Ctx, env: Env, follow_last: bool) -> tuple[str, str]:
    """(the path where the effect really lands, its category)."""
    where = category(path, ctx, env)
    if ctx.remote:
        return path, where
    real = resolve(path, ctx, follow_last)
    if real is None:
        return path, "unknown"
    if real == path or where in _NAMED:
        return path, where
    return real, category(real, ctx, env)


def classify(val: Val, ctx: Ctx, env: Env, follow: bool = True) -> tuple[str, str]:
    """(path as shown, category) for a word used as a file name; unknown when its start cannot be known. `follow`:
    the operation follows a symlink in the last component (a write does, `rm` does not unless the name ends in /)."""
    text = val.text
    cuts = [c for c in (val.unknown_at, val.glob_at) if c is not None]
    if not cuts:
        path = normalize(text or ".", ctx.cwd)
        if path is None:
            return text, "unknown"
        return place(path, ctx, env, follow or text.endswith(("/", "/.")))
    cut = min(cuts)
    slash = text.rfind("/", 0, cut)
    if slash < 0 and cut == val.unknown_at:  # ${X:?}/...: set, it is the agent's; empty, nothing runs
        return text, "unset" if val.unknown_kind == "required" else "unknown"
    directory = text[:slash + 1]
    component = text[slash + 1:].split("/")[0]
    base = normalize(directory or ".", ctx.cwd)
    if base is None:
        return text, "unknown"
    real_base, where = place(base, ctx, env, True)
    if cut == val.glob_at and _BARE_GLOB.fullmatch(component) and component.strip("."):
        # rm -rf /* or ~/* or ./* at the root: all of that directory
        return posixpath.join(real_base, component), "contents" if where == "repo" else where
    path = posixpath.join(real_base, "{}")
    return path, category(path, ctx, env)
