"""Console-script entry point. Kept import-light: `dun --version` answers before click is imported, and `dun check`
starts `git status` before it."""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # not typing's: importing typing costs more than all of `dun --version`

if TYPE_CHECKING:
    from dun.core.spawn import Spawned


def main() -> int:
    if sys.argv[1:] in (["--version"], ["-V"]):
        from dun import __version__

        sys.stdout.write(f"dun, version {__version__}\n")
        return 0
    if _checks_here(sys.argv[1:]):
        started = _start_git()  # first of all: git walks the tree while the rest of dun loads
        if started is not None and "--output" not in sys.argv and "-o" not in sys.argv:
            from dun.engine.replay import replay

            code = replay(sys.argv[1:], *started)
            if code is not None:
                return code
        from dun.core.snapshot import start_early

        start_early(started)
    from dun.cli.main import main as cli_main

    return cli_main()


# `dun check` options that take a value: what follows them is not the PATH argument.
_VALUED = frozenset({"-f", "--format", "-j", "--jobs", "--only", "--skip", "--color", "-o", "--output"})


def _checks_here(args: list[str]) -> bool:
    """`dun check` on the current directory (no PATH argument): its `git status` can start before click loads."""
    if args[:1] != ["check"]:
        return False
    rest = iter(args[1:])
    for arg in rest:
        if arg in _VALUED:
            next(rest, None)
        elif not arg.startswith("-"):
            return False
    return True


def _start_git() -> tuple[Spawned, Spawned] | None:
    from dun.core.spawn import STATUS_ARGS, TOPLEVEL_ARGS, start_git

    try:
        return start_git(STATUS_ARGS), start_git(TOPLEVEL_ARGS)
    except OSError:
        return None  # no git: the run finds out itself


def run() -> None:
    sys.exit(main())
