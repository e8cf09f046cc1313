"""Console-script entry point. Kept import-light: `dun --version` answers before click is imported."""

from __future__ import annotations

import sys


def main() -> int:
    if sys.argv[1:] in (["--version"], ["-V"]):
        from dun import __version__

        sys.stdout.write(f"dun, version {__version__}\n")
        return 0
    from dun.cli.main import main as cli_main

    return cli_main()


def run() -> None:
    sys.exit(main())
