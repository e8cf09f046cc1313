"""The bubblewrap command line for one agent run (and for the checks that judge it).

One line divides the machine. Writable inside: the repository's work tree, its git object store and refs (agents
commit), the agents' own state directories (~/.claude, ~/.codex, ..., or wherever their environment points them),
the package-manager caches ordinary work writes (~/.npm, ~/.cache/pip, ...; not all of ~/.cache), a private /tmp and
the paths the user adds (`sandbox.writable`). Read-only inside, whatever else is writable: everything dun reads to
judge the agent, that is `.git/config`, `.git/hooks`, `.git/info` (and a worktree's or submodule's own), `.dun/`,
dun's caches, plugins and ledgers. The git directories are mount points, so they cannot be renamed and replaced.
Every capability is dropped, so nothing inside can unmount or remount. The agent has its own PID namespace; the
network is shared unless switched off. Programs installed under /tmp (the agent CLI, its interpreter, tools on
PATH) stay visible read-only in the private /tmp.
"""

from __future__ import annotations

import contextlib
import functools
import glob
import os
import shutil
import subprocess
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from dun.core.cachedir import cache_base_path
from dun.core.gitsafe import neutral_env
from dun.core.redact import WITHHELD_ENV
from dun.core.resources import user_config_dir, user_state_dir
from dun.store import layout

# The agents' own state, relative to $HOME (globs allowed): what the agent CLIs write while they run.
AGENT_STATE: tuple[str, ...] = (
    ".claude", ".claude.json", ".claude.json.backup", ".codex", ".gemini", ".config/opencode",
    ".local/share/opencode", ".local/state/opencode", ".cache/opencode", ".aider*", ".pi",
)
# The package-manager caches `npm install`, `pip install`, `go build` and `cargo build` write in ordinary work,
# relative to $HOME; `.cache/...` ones follow XDG_CACHE_HOME. Not all of ~/.cache: dun's own caches live there.
PACKAGE_CACHES: tuple[str, ...] = (
    ".npm", ".cache/pip", ".cache/uv", ".cache/go-build", ".cache/pypoetry", ".cache/yarn", ".cache/pnpm",
    ".cache/node-gyp", ".cache/typescript", ".cache/deno", ".cargo/registry", ".cargo/git", "go/pkg/mod",
    ".local/share/pnpm", ".yarn/berry", ".bun/install/cache", ".m2/repository", ".gradle/caches",
)
# The program whose work writes each package cache: where it is installed, a missing cache is made before the
# sandbox starts, so that the first `go test` or `npm install` inside finds it writable.
CACHE_OWNERS: dict[str, str] = {
    ".npm": "npm", ".cache/pip": "pip", ".cache/uv": "uv", ".cache/go-build": "go", "go/pkg/mod": "go",
    ".cargo/registry": "cargo", ".cache/yarn": "yarn", ".cache/pnpm": "pnpm",
}
# Variables that point an agent CLI at a state directory of its own, or a package manager at its cache: bound
# writable like the default ones (not CARGO_HOME or GOPATH: they hold configuration and programs too).
STATE_ENV: tuple[str, ...] = ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "GEMINI_CLI_HOME", "PI_CODING_AGENT_DIR",
                              "OPENCODE_CONFIG_DIR", "AIDER_HOME", "GOCACHE", "GOMODCACHE", "PIP_CACHE_DIR",
                              "UV_CACHE_DIR", "npm_config_cache", "YARN_CACHE_FOLDER")
# Inside each git directory: what git runs programs from or takes as its configuration.
GIT_JUDGE = ("config", "config.worktree", "commondir", "hooks", "info")
PRIVATE_TMP = "/tmp"


@dataclass(frozen=True)
class SandboxSpec:
    repo: Path  # the repository: writable, with its git directories (their judge files read-only)
    writable: tuple[Path, ...] = ()  # sandbox.writable: more writable paths (bound only where they exist)
    agent_state: tuple[str, ...] = AGENT_STATE + PACKAGE_CACHES  # paths under $HOME, globs allowed
    network: bool = True  # False: a network namespace of its own (loopback only)
    home: Path | None = None  # default: $HOME
    cwd: Path | None = None  # where the command starts; default: the repository
    bwrap: str = "bwrap"
    env: dict[str, str] = field(default_factory=dict)  # variables set inside (TMPDIR=/tmp is always set)
    agent_env: Mapping[str, str] | None = None  # the command's environment: its PATH and state homes; default ours
    judge_writable: tuple[Path, ...] = ()  # under the judge's paths, still writable (a check's report directory)


def git_dirs(repo: Path) -> list[Path]:
    """The repository's git directory and common directory (outside the work tree for worktrees and submodules).
    Asked of git once per repository and process: a loop wraps a command every iteration, and where a
    repository's git directories are does not change while it runs."""
    found = _git_dirs(os.path.realpath(repo))
    if not found:  # not a repository (yet): asked again next time
        _git_dirs.cache_clear()
    return list(found)


@functools.lru_cache(maxsize=16)
def _git_dirs(repo: str) -> tuple[Path, ...]:
    try:
        proc = subprocess.run(["git", "rev-parse", "--absolute-git-dir", "--git-common-dir"], cwd=repo,
                              capture_output=True, text=True, timeout=10, stdin=subprocess.DEVNULL, check=False,
                              env=neutral_env(repo))
    except (OSError, subprocess.SubprocessError):
        return ()
    if proc.returncode != 0:
        return ()
    out: list[Path] = []
    for line in proc.stdout.splitlines():
        path = Path(os.path.realpath(os.path.join(repo, line))) if line.strip() else None
        if path is not None and path not in out:
            out.append(path)
    return tuple(out)


def _home(spec: SandboxSpec) -> Path:
    env = spec.agent_env if spec.agent_env is not None else os.environ
    return Path(os.path.realpath(spec.home or env.get("HOME") or Path.home()))


XDG_BASES = ((".cache/", "XDG_CACHE_HOME"), (".config/", "XDG_CONFIG_HOME"), (".local/share/", "XDG_DATA_HOME"),
             (".local/state/", "XDG_STATE_HOME"))


def home_path(name: str, home: Path, env: Mapping[str, str]) -> Path:
    """Where a path named relative to $HOME really is: `.cache/x` under XDG_CACHE_HOME when that is set (and the
    same for the other XDG base directories)."""
    for prefix, var in XDG_BASES:
        if name.startswith(prefix) and env.get(var):
            return Path(env[var]) / name[len(prefix):]
    return home / name


def make_package_caches(home: Path, env: Mapping[str, str]) -> None:
    """Make the package caches of the package managers installed here that are missing (CACHE_OWNERS)."""
    for name, program in CACHE_OWNERS.items():
        path = home_path(name, home, env)
        if not path.exists() and shutil.which(program, path=env.get("PATH", os.defpath)):
            with contextlib.suppress(OSError):
                path.mkdir(parents=True, exist_ok=True)


def _state_candidates(spec: SandboxSpec, home: Path) -> list[Path]:
    env = spec.agent_env if spec.agent_env is not None else os.environ
    out: list[Path] = []
    for pattern in spec.agent_state:
        out += [Path(p) for p in sorted(glob.glob(str(home_path(pattern, home, env))))]
    for var in STATE_ENV:
        if env.get(var):
            out.append(Path(os.path.expanduser(env[var])))
    return out


def writable_paths(spec: SandboxSpec) -> list[Path]:
    """The existing paths the sandbox binds writable, parents before children, without duplicates."""
    home = _home(spec)
    candidates = [Path(os.path.realpath(spec.repo)), *git_dirs(spec.repo), *_state_candidates(spec, home)]
    candidates += [Path(os.path.expanduser(str(p))) for p in spec.writable]
    out: list[str] = []
    for real in sorted({os.path.realpath(p) for p in candidates}, key=lambda p: (p.count("/"), p)):
        if real != "/" and os.path.exists(real) and not under(real, out):
            out.append(real)  # a path under one already bound is writable through it
    return [Path(p) for p in out]


def under(path: str, parents: list[str]) -> bool:
    """Whether `path` (real, absolute) is one of `parents` or below one."""
    return any(path == p or path.startswith(p.rstrip("/") + "/") for p in parents)


def judge_paths(spec: SandboxSpec, gits: list[Path] | None = None) -> list[Path]:
    """What dun reads to judge the agent, as it exists now: read-only inside the sandbox. The git directories'
    hooks and info directories and `.dun/` are made first when missing, so that they are protected too."""
    repo = Path(os.path.realpath(spec.repo))
    gits = git_dirs(spec.repo) if gits is None else gits
    for gitdir in gits:
        for name in ("hooks", "info"):
            _mkdir(gitdir / name)
    _mkdir(repo / layout.DIR)
    out = [gitdir / name for gitdir in gits for name in GIT_JUDGE]
    for gitdir in gits:  # submodules keep their git directories under modules/
        out += [Path(p) for name in GIT_JUDGE for p in glob.glob(str(gitdir / "modules" / "**" / name),
                                                                   recursive=True)]
    if (repo / ".git").is_file():  # a worktree's or submodule's link to its git directory
        out.append(repo / ".git")
    out += [repo / layout.DIR, Path(cache_base_path()), user_config_dir(), user_state_dir()]
    return [p for p in out if os.path.lexists(p)]


def _mkdir(path: Path) -> None:
    with contextlib.suppress(OSError):  # a read-only or odd git directory: what exists is still protected
        path.mkdir(exist_ok=True)


def tmp_programs(spec: SandboxSpec, argv: list[str]) -> list[Path]:
    """Under /tmp (private inside): the directories holding the command, its script interpreter, the files its
    arguments name (`python /tmp/x/agent.py`) and the PATH entries, by their first component below /tmp, so they
    stay visible read-only."""
    env = spec.agent_env if spec.agent_env is not None else os.environ
    path_var = env.get("PATH", os.defpath)
    places: list[str] = [p for p in path_var.split(os.pathsep) if p]
    places += [a for a in argv[1:] if a.startswith(PRIVATE_TMP + "/") and len(a) < 4096 and os.path.exists(a)]
    exe = shutil.which(argv[0], path=path_var)
    if exe:
        places += [exe, os.path.realpath(exe)]
        interpreter = _interpreter(os.path.realpath(exe), path_var)
        if interpreter:
            places += [interpreter, os.path.realpath(interpreter)]
    tops: list[Path] = []
    for place in places:
        real = Path(os.path.abspath(place))
        if real.is_relative_to(PRIVATE_TMP) and len(real.parts) > 2:
            top = Path(PRIVATE_TMP) / real.parts[2]
            if top.exists() and top not in tops:
                tops.append(top)
    return tops


def _interpreter(path: str, path_var: str) -> str | None:
    """The program a script's `#!` line names (`/usr/bin/env node` -> node on PATH)."""
    try:
        with open(path, "rb") as fh:
            first = fh.readline(256)
    except OSError:
        return None
    if not first.startswith(b"#!"):
        return None
    words = first[2:].decode("utf-8", "replace").split()
    if not words:
        return None
    if os.path.basename(words[0]) == "env":
        rest = [w for w in words[1:] if not w.startswith("-")]
        return shutil.which(rest[0], path=path_var) if rest else None
    return words[0]


def wrap(argv: list[str], spec: SandboxSpec) -> list[str]:
    """The command line that runs `argv` inside the sandbox."""
    if not argv:
        raise ValueError("no command to run in the sandbox")
    return [*prefix(spec, argv), "--chdir", os.path.realpath(spec.cwd or spec.repo), "--", *argv]


def confiner(spec: SandboxSpec) -> Callable[[list[str]], list[str]]:
    """Wraps command lines in the sandbox, the binds worked out once (a check run starts many commands); each
    command starts in the directory it is started from."""
    start = prefix(spec, ["sh"])
    return lambda argv: [*start, "--", *argv]


def prefix(spec: SandboxSpec, argv: list[str]) -> list[str]:
    """bwrap and its options, up to the command's working directory and the command itself."""
    out = [spec.bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", PRIVATE_TMP,
           "--unshare-pid", "--die-with-parent", "--cap-drop", "ALL"]
    if not spec.network:
        out.append("--unshare-net")
    home = _home(spec)
    readable = tmp_programs(spec, argv)
    if home.is_relative_to(PRIVATE_TMP) and home.is_dir():
        readable.append(home)  # a $HOME under /tmp stays readable (its git identity, config)
    for path in readable:
        out += ["--ro-bind", str(path), str(path)]
    gits = git_dirs(spec.repo)
    writable = writable_paths(spec)
    for path in writable:
        out += ["--bind", str(path), str(path)]
    for gitdir in gits:  # a mount point cannot be renamed: the agent cannot swap in a git directory of its own
        out += ["--bind", str(gitdir), str(gitdir)]
    reachable = [str(p) for p in (*writable, *readable)]
    for path in judge_paths(spec, gits):
        if under(os.path.realpath(path), reachable):
            out += ["--ro-bind", str(path), str(path)]
    for path in spec.judge_writable:
        if path.exists():
            out += ["--bind", str(path), str(path)]
    for name, value in {"TMPDIR": PRIVATE_TMP, **spec.env}.items():
        out += ["--setenv", name, value]
    for name in WITHHELD_ENV:  # the fleet store's credentials, whoever started the sandbox (the shell driver too)
        out += ["--unsetenv", name]
    return out
