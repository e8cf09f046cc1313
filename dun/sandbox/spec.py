"""The bubblewrap command line for one agent run.

Inside the sandbox: the root filesystem is a read-only view of the host's; /dev and /proc are fresh; /tmp is a
private, empty tmpfs; writable are only the repository, its git directories (a worktree's or a submodule's live
outside it, and agents commit), the agents' state directories that exist under $HOME (~/.claude, ~/.codex, ...,
and the caches package managers need), and the extra paths the user configures (`sandbox.writable`). The agent gets
its own PID namespace, so it cannot signal processes outside. The network is shared unless switched off.
"""

from __future__ import annotations

import glob
import os
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from dun.core.gitsafe import neutral_env

# The agents' own state, relative to $HOME (globs allowed): what the agent CLIs write while they run, and the
# package-manager caches that `npm install`, `pip install` and `go build` write in the repository's work.
AGENT_STATE: tuple[str, ...] = (
    ".claude", ".claude.json", ".claude.json.backup", ".codex", ".gemini", ".config/opencode",
    ".local/share/opencode", ".local/state/opencode", ".aider*", ".pi", ".cache", ".npm",
)
PRIVATE_TMP = "/tmp"


@dataclass(frozen=True)
class SandboxSpec:
    repo: Path  # the repository: writable, with its git directories
    writable: tuple[Path, ...] = ()  # sandbox.writable: more writable paths (bound only where they exist)
    agent_state: tuple[str, ...] = AGENT_STATE  # paths under $HOME, globs allowed
    network: bool = True  # False: a network namespace of its own (loopback only)
    home: Path | None = None  # default: $HOME
    cwd: Path | None = None  # where the command starts; default: the repository
    bwrap: str = "bwrap"
    env: dict[str, str] = field(default_factory=dict)  # variables set inside (TMPDIR=/tmp is always set)


def git_dirs(repo: Path) -> list[Path]:
    """The repository's git directory and common directory (outside the work tree for worktrees and submodules)."""
    try:
        proc = subprocess.run(["git", "rev-parse", "--absolute-git-dir", "--git-common-dir"], cwd=repo,
                              capture_output=True, text=True, timeout=10, stdin=subprocess.DEVNULL, check=False,
                              env=neutral_env(str(repo)))
    except (OSError, subprocess.SubprocessError):
        return []
    if proc.returncode != 0:
        return []
    return [Path(os.path.realpath(repo / line)) for line in proc.stdout.splitlines() if line.strip()]


def writable_paths(spec: SandboxSpec) -> list[Path]:
    """The existing paths the sandbox binds writable, parents before children, without duplicates."""
    home = Path(os.path.realpath(spec.home or os.environ.get("HOME") or Path.home()))
    candidates = [Path(os.path.realpath(spec.repo)), *git_dirs(spec.repo)]
    for pattern in spec.agent_state:
        candidates += [Path(p) for p in sorted(glob.glob(str(home / pattern)))]
    candidates += [Path(os.path.expanduser(str(p))) for p in spec.writable]
    out: list[Path] = []
    for real in sorted({Path(os.path.realpath(p)) for p in candidates}, key=lambda p: (len(p.parts), str(p))):
        if real.exists() and real != Path("/") and not any(real.is_relative_to(p) for p in out):
            out.append(real)  # a path under one already bound is writable through it
    return out


def wrap(argv: list[str], spec: SandboxSpec) -> list[str]:
    """The command line that runs `argv` inside the sandbox."""
    if not argv:
        raise ValueError("no command to run in the sandbox")
    out = [spec.bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", PRIVATE_TMP,
           "--unshare-pid", "--die-with-parent"]
    if not spec.network:
        out.append("--unshare-net")
    home = Path(os.path.realpath(spec.home or os.environ.get("HOME") or Path.home()))
    if home.is_relative_to(PRIVATE_TMP) and home.is_dir():
        out += ["--ro-bind", str(home), str(home)]  # a $HOME under /tmp stays readable (its git identity, config)
    for path in writable_paths(spec):
        out += ["--bind", str(path), str(path)]
    for name, value in {"TMPDIR": PRIVATE_TMP, **spec.env}.items():
        out += ["--setenv", name, value]
    out += ["--chdir", os.path.realpath(spec.cwd or spec.repo), "--", *argv]
    return out
