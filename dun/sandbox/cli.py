"""`dun sandbox [--loop] [--mode auto|bubblewrap|off] [--no-network] [--writable PATH]... [-C DIR] -- CMD
[ARGS...]`: run CMD in the sandbox, for agents that a shell script starts (the shell driver). The repository
(-C, or its other name --repo) defaults to the git top level of the current directory. `--loop` takes the mode,
network and writable paths from the repository's config as `dun loop` does, and wires the guard into a `claude`
command (scripts/dun-loop.sh uses it). Exit codes: CMD's own; 2 when the sandbox was required and cannot run; 127
when CMD cannot be started."""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import IO, NoReturn

from dun.core.gitsafe import neutral_env
from dun.core.kinds import ExitCode
from dun.sandbox.probe import MODES, SandboxError, resolve_mode
from dun.sandbox.spec import SandboxSpec, wrap

EXIT_NOT_FOUND = 127


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        """Bad usage is one line (SandboxError, exit 2), not argparse's usage block."""
        raise SandboxError(f"sandbox: {message} (dun sandbox [--loop] [--mode M] [--no-network] [--writable P]... "
                           "-- CMD [ARGS...])")


def _parser() -> argparse.ArgumentParser:
    p = _Parser(prog="dun sandbox", description="Run a command in dun's OS sandbox.")
    p.add_argument("--loop", action="store_true",
                   help="as dun loop runs its agent: mode, network and writable paths from the config; the guard")
    p.add_argument("--mode", choices=MODES, default=None)
    p.add_argument("--no-network", action="store_true", help="give the command no network (loopback only)")
    p.add_argument("--writable", action="append", default=[], metavar="PATH", help="another writable path")
    p.add_argument("-C", "--repo", dest="repo", type=Path,
                   help="the repository (default: the git top level of the cwd)")
    p.add_argument("command", nargs=argparse.REMAINDER)
    return p


def repository(start: Path) -> Path:
    try:
        proc = subprocess.run(["git", "rev-parse", "--show-toplevel"], cwd=start, capture_output=True, text=True,
                              timeout=10, stdin=subprocess.DEVNULL, check=False, env=neutral_env(str(start)))
    except (OSError, subprocess.SubprocessError):
        return start
    top = proc.stdout.strip()
    return Path(top) if proc.returncode == 0 and top else start


def command_line(argv: list[str], err: IO[str]) -> list[str]:
    """The command line to exec for `dun sandbox ARGV`. Raises SandboxError (and SystemExit for bad usage)."""
    args = _parser().parse_args(argv)
    command: list[str] = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        raise SandboxError("sandbox: no command given (dun sandbox [options] -- CMD [ARGS...])")
    cwd = Path.cwd()
    repo = args.repo or repository(cwd)
    mode, network, writable = args.mode or "auto", not args.no_network, [Path(p) for p in args.writable]
    own: tuple[Path, ...] = ()
    if args.loop:
        if command[:2] == ["dun", "sandbox"] or (Path(command[0]).name == "dun" and command[1:2] == ["sandbox"]):
            return command  # already wrapped by the user (the old advice): a sandbox does not nest in another
        mode, network, writable, command, own = _as_the_loop(repo, args.mode, command, writable)
    mode, warning = resolve_mode(mode, network=network)
    if warning:
        print(f"dun {warning}", file=err)
    if mode == "off":
        return command
    spec = SandboxSpec(repo=repo, writable=tuple(writable), network=network, cwd=cwd, judge_writable=own)
    return wrap(command, spec)


def _as_the_loop(repo: Path, mode: str | None, command: list[str],
                 writable: list[Path]) -> tuple[str, bool, list[Path], list[str], tuple[Path, ...]]:
    """What `dun loop` would use for this repository: (mode, network, writable paths, the command with the guard
    wired into claude, the agent's own directory under .dun/cache/)."""
    from dun.agents.base import AgentRequest, guard_command
    from dun.agents.claude import guard_settings
    from dun.engine.session import open_session

    session = open_session(repo)
    store, settings = session.store, session.settings
    name = Path(command[0]).name
    if name == "claude" and settings.guard.enabled and "--settings" not in command:
        req = AgentRequest("", store.cache_dir / "shell.prompt.md", settings.agent, None, repo, guard_command(),
                           store.cache_dir)
        hook = guard_settings(req)
        if hook is not None:
            command = [*command, "--settings", str(hook)]
    own = store.cache_dir / name
    own.mkdir(parents=True, exist_ok=True)
    return (mode or settings.loop.sandbox, settings.sandbox.network,
            [*writable, *(Path(p) for p in settings.sandbox.writable)], command, (own,))


def main(argv: list[str] | None = None, err: IO[str] | None = None) -> int:
    """Replace this process with the sandboxed command; return only on failure."""
    stderr = err if err is not None else sys.stderr
    try:
        line = command_line(list(sys.argv[1:] if argv is None else argv), stderr)
    except SandboxError as exc:
        print(f"dun {exc}", file=stderr)
        return ExitCode.USAGE
    wrapped = os.path.basename(line[0]) == "bwrap" and "--" in line
    program = line[line.index("--") + 1] if wrapped else line[0]
    if shutil.which(program) is None:  # bwrap would only say "execvp ...": the same one line as without it
        print(f"dun sandbox: cannot run {program}: not found", file=stderr)
        return EXIT_NOT_FOUND
    try:
        os.execvp(line[0], line)
    except OSError as exc:
        print(f"dun sandbox: cannot run {line[0]}: {exc.strerror or exc}", file=stderr)
    return EXIT_NOT_FOUND
