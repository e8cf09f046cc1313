"""How a loop confines what could carry the agent's hand: the agent itself, and the checks and `verify:` commands
that run the project's files after it (conftest.py, a Makefile, `.venv/bin/python`), in one sandbox; and what the
user is told when that protection is weaker than asked for.

Both drivers share it: `dun loop` wraps its agent here; `scripts/dun-loop.sh` wraps its own with `dun sandbox` and
its checks (run by `dun respond --decide`) are confined here alike.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dun.agents.base import Invocation
from dun.core.errors import ConfigError
from dun.engine.session import Session

if TYPE_CHECKING:
    from dun.config.sections import Settings
    from dun.sandbox import SandboxSpec

PREFLIGHT_TIMEOUT_S = 60.0


@dataclass(frozen=True)
class Protection:
    mode: str  # "bubblewrap" or "off": the agent's and the checks' sandbox in effect
    note: str  # the start line's account of it
    weaker: str | None  # why the protection is weaker than the config asked for (or than the default), else None


def resolve(settings: Settings) -> Protection:
    """The sandbox in effect for this run; a sandbox that was required and cannot run is a ConfigError (exit 2)."""
    from dun.sandbox import SandboxError, resolve_mode

    asked = settings.loop.sandbox
    try:
        mode, warning = resolve_mode(asked, network=settings.sandbox.network)
    except SandboxError as exc:
        raise ConfigError(str(exc)) from None
    if mode == "bubblewrap":
        return Protection(mode, "sandbox: bubblewrap: the agent, and the checks and verify: commands that judge it, "
                                "are confined (writable: the work tree, its commits, /tmp, the agent's state and "
                                "package caches; read-only: .git/config, hooks and info, .dun/, dun's caches)", None)
    weaker = ("loop.sandbox is off" if asked == "off" else (warning or "bubblewrap cannot run here"))
    weaker = f"{weaker.removeprefix('sandbox: ')}: the agent and the checks run unconfined; only the guard stands"
    return Protection(mode, f"sandbox: off ({weaker})", weaker)


def spec_for(session: Session, settings: Settings, **changes: Any) -> SandboxSpec:
    """The sandbox the config describes for this repository, with `changes` (SandboxSpec's fields)."""
    from dun.sandbox import SandboxSpec

    spec = SandboxSpec(repo=session.root, writable=tuple(Path(p) for p in settings.sandbox.writable),
                       network=settings.sandbox.network)
    return replace(spec, **changes)


def confine_checks(session: Session, settings: Settings, cache_dir: Path) -> None:
    """From now on, every command a check or a `verify:` line starts runs in the agent's sandbox (its reports
    directory, `.dun/cache/`, writable)."""
    from dun.sandbox import confiner
    from dun.sandbox.spec import make_package_caches

    cache_dir.mkdir(parents=True, exist_ok=True)
    if os.environ.get("HOME"):
        make_package_caches(Path(os.environ["HOME"]), os.environ)
    session.confine = confiner(spec_for(session, settings, judge_writable=(cache_dir,)))
    session.context().confine = session.confine


def confine_agent(session: Session, settings: Settings, inv: Invocation, state_dirs: tuple[str, ...],
                  own_dir: Path) -> Invocation:
    """The agent's invocation inside the sandbox: its state homes (default or named by its environment) and its
    own directory under `.dun/cache/` writable."""
    from dun.sandbox.spec import home_path, make_package_caches, wrap

    env = {**os.environ, **inv.env}
    home = env.get("HOME")
    if home:
        for name in state_dirs:  # a first run creates its state: it must exist to be bound writable
            home_path(name, Path(home), env).mkdir(parents=True, exist_ok=True)
        make_package_caches(Path(home), env)
    own_dir.mkdir(parents=True, exist_ok=True)
    spec = spec_for(session, settings, home=Path(home) if home else None, agent_env=env, judge_writable=(own_dir,))
    return Invocation(wrap(inv.argv, spec), inv.stdin_file, inv.env, inv.redact)


def preflight(inv: Invocation, version_flag: bool) -> None:
    """Before iteration 1: the agent's program can start inside the sandbox (`PROGRAM --version` for the CLIs dun
    knows, else that the sandbox finds the program). Raises ConfigError (exit 2) naming the path and the reason,
    so no iteration is spent on an agent that cannot run."""
    argv = inv.argv
    cut = argv.index("--") if "--" in argv else -1
    program = argv[cut + 1]
    # a configured command: its program is found, and every file its arguments name is visible
    paths = [a for a in argv[cut + 2:] if a.startswith("/") and len(a) < 4096 and os.path.exists(a)]
    probe = [program, "--version"] if version_flag else [
        "sh", "-c", 'command -v -- "$1" >/dev/null || { echo "$1: not found"; exit 1; }; shift\n'
        'for p; do [ -e "$p" ] || { echo "$p: not visible"; exit 1; }; done', "sh", program, *paths]
    line = [*argv[:cut + 1], *probe]
    try:
        proc = subprocess.run(line, capture_output=True, text=True, timeout=PREFLIGHT_TIMEOUT_S,
                              stdin=subprocess.DEVNULL, env={**os.environ, **inv.env}, errors="replace")
    except (OSError, subprocess.SubprocessError) as exc:
        raise ConfigError(f"agent preflight: {program} cannot be started in the sandbox: {exc}") from None
    if proc.returncode != 0:
        lines = [ln.strip() for ln in (proc.stderr + proc.stdout).splitlines() if ln.strip()]
        reason = lines[0] if lines else f"exit code {proc.returncode}"
        if not version_flag and not lines:
            reason = "not found on PATH inside the sandbox (an agent under /tmp is bound read-only; check the path)"
        raise ConfigError(f"agent preflight: {program} cannot run in the sandbox: {reason[:300]}")


def before_dun_git(root: Path, say: Callable[[str], None]) -> None:
    """What the sandbox cannot stop (a file made where none was) undone before dun's own git runs again."""
    from dun.core.gitsafe import remove_planted_commondir

    removed = remove_planted_commondir(str(root))
    if removed:
        say(f"removed {removed}: a main repository has none (it would send git to another config); not the agent's "
            "to make")
