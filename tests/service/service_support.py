"""Shared by the service tests: a fake systemctl/launchctl that records its calls, and a CLI runner."""

from __future__ import annotations

import os
import stat
from contextlib import redirect_stderr, redirect_stdout
from io import StringIO
from pathlib import Path

from dun.cli.main import main


def invoke(args: list[str]) -> tuple[int, str, str]:
    """`dun ARGS` in-process through the CLI's one error handler: (exit code, stdout, stderr)."""
    out, err = StringIO(), StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(args)
    return code, out.getvalue(), err.getvalue()


def fake_tools(directory: Path, version: int = 252, show: str = "") -> Path:
    """`systemctl` and `launchctl` scripts that append their arguments to calls.log; returns the log path."""
    directory.mkdir(parents=True, exist_ok=True)
    log = directory / "calls.log"
    for tool in ("systemctl", "launchctl"):
        script = directory / tool
        script.write_text(
            "#!/bin/sh\n"
            f'echo "{tool} $*" >> "{log}"\n'
            f'case "$1" in --version) echo "systemd {version} (test)";; esac\n'
            f'case "$*" in *" show "*) printf "%s" "{show}";; esac\n')
        script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return log


def calls(log: Path) -> list[str]:
    lines = log.read_text().splitlines() if log.exists() else []
    return [line for line in lines if "--version" not in line]


def with_bus(runtime: Path) -> dict[str, str]:
    """Environment of a session with a reachable user manager (a `bus` socket path in XDG_RUNTIME_DIR)."""
    runtime.mkdir(parents=True, exist_ok=True)
    (runtime / "bus").touch()
    return {"XDG_RUNTIME_DIR": str(runtime)}


def path_with(directory: Path) -> str:
    return f"{directory}{os.pathsep}{os.environ['PATH']}"
