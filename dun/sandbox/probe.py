"""Whether bubblewrap can run here, and what `auto`, `bubblewrap` and `off` mean on this machine.

bubblewrap needs either privileges or unprivileged user namespaces; being installed is not enough (containers and
hardened kernels often forbid namespaces). So the probe really runs `bwrap ... true` with the sandbox's own
options, once per process and options.
"""

from __future__ import annotations

import functools
import shutil
import subprocess

MODES = ("auto", "bubblewrap", "off")
PROBE_TIMEOUT_S = 20.0


class SandboxError(Exception):
    """The sandbox was asked for (mode `bubblewrap`) and cannot run, or the mode is unknown. One line, for exit 2."""


@functools.cache
def probe(bwrap: str = "bwrap", network: bool = True) -> str | None:
    """None when bubblewrap runs here; otherwise why not, in one line."""
    path = shutil.which(bwrap)
    if path is None:
        return f"{bwrap} is not installed (the Debian/Ubuntu package is `bubblewrap`)"
    argv = [path, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", "--unshare-pid",
            "--die-with-parent", *([] if network else ["--unshare-net"]), "--", "true"]
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=PROBE_TIMEOUT_S,
                              stdin=subprocess.DEVNULL, check=False)
    except (OSError, subprocess.SubprocessError) as exc:
        return f"{bwrap} could not be started: {exc}"
    if proc.returncode != 0:
        lines = (proc.stderr or proc.stdout).strip().splitlines()
        detail = lines[0] if lines else f"exit code {proc.returncode}"
        return f"{bwrap} cannot create its namespaces here ({detail}); user namespaces may be disabled"
    return None


def resolve_mode(mode: str, bwrap: str = "bwrap", network: bool = True) -> tuple[str, str | None]:
    """(the mode in effect, "bubblewrap" or "off"; a warning for the user when `auto` falls back to "off").

    Raises SandboxError for mode `bubblewrap` when it cannot run, and for an unknown mode."""
    if mode not in MODES:
        raise SandboxError(f"sandbox: unknown mode {mode!r} (expected one of: {', '.join(MODES)})")
    if mode == "off":
        return "off", None
    problem = probe(bwrap, network)
    if problem is None:
        return "bubblewrap", None
    if mode == "bubblewrap":
        raise SandboxError(f"sandbox: bubblewrap was asked for but cannot run: {problem}")
    return "off", f"sandbox: {problem}; the agent runs without an OS sandbox (the guard still applies)"
