"""Console-script entry point. Kept import-light: `dun --version` answers before click is imported, and `dun check`
starts `git status` before it."""

from __future__ import annotations

import sys


def main() -> int:
    if sys.argv[1:] in (["--version"], ["-V"]):
        from dun import __version__

        sys.stdout.write(f"dun, version {__version__}\n")
        return 0
    if _checks_here(sys.argv[1:]):
        from dun.core.git import start_early

        start_early()
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


def run() -> None:
    sys.exit(main())
