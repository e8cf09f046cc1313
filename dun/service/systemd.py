"""A systemd user unit (and optional timer) running `dun loop`, restarted according to dun's exit codes."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

from dun.core.errors import UsageError
from dun.service.spec import ServiceSpec

# `RestartSteps=`/`RestartMaxDelaySec=` (a growing back-off) exist from systemd 254 on; older versions warn
BACKOFF_VERSION = 254
_PLAIN = re.compile(r"^[A-Za-z0-9_@+=:,./-]+$")


def unit_dir() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "systemd" / "user"


def escape_specifiers(text: str) -> str:
    return text.replace("%", "%%")


def exec_quote(arg: str, program: bool = False) -> str:
    """One ExecStart= word: quoted when needed, `%` doubled (specifiers) and, in arguments only, `$` doubled
    (systemd substitutes variables in the arguments, never in the program path)."""
    if not _PLAIN.match(arg):
        arg = '"' + arg.replace("\\", "\\\\").replace('"', '\\"') + '"'
    arg = escape_specifiers(arg)
    return arg if program else arg.replace("$", "$$")


def env_assignment(key: str, value: str) -> str:
    return '"' + escape_specifiers(f"{key}={value}").replace("\\", "\\\\").replace('"', '\\"') + '"'


def systemd_version() -> int | None:
    exe = shutil.which("systemctl")
    if exe is None:
        return None
    try:
        out = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=10, check=False).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None
    match = re.match(r"systemd (\d+)", out)
    return int(match.group(1)) if match else None


def check_calendar(spec: str) -> None:
    """Reject a malformed OnCalendar= expression now rather than when the timer loads (when systemd can say)."""
    if not spec.strip() or "\n" in spec:
        raise UsageError(f"invalid --timer calendar expression: {spec!r}")
    exe = shutil.which("systemd-analyze")
    if exe is None:
        return
    proc = subprocess.run([exe, "calendar", spec], capture_output=True, text=True, timeout=30, check=False)
    if proc.returncode != 0:
        raise UsageError(f"invalid --timer calendar expression {spec!r} (see `man systemd.time`)")


def render_service(spec: ServiceSpec, version: int | None) -> str:
    lines = [
        "# Written by `dun service install`; `dun service uninstall` removes it.",
        "[Unit]",
        f"Description=dun loop in {escape_specifiers(str(spec.root))}",
        # a crash loop ends after 8 starts in 6 hours instead of burning the account's limits
        "StartLimitIntervalSec=6h",
        "StartLimitBurst=8",
        "",
        "[Service]",
        "Type=exec",
        f"WorkingDirectory={escape_specifiers(str(spec.root))}",
        # API keys live only in this file, loaded at start; '-': a missing file is not an error
        f"EnvironmentFile=-{escape_specifiers(str(spec.env_file))}",
        f"Environment={env_assignment('PATH', spec.path_env)} PYTHONUNBUFFERED=1 TERM=dumb",
        "ExecStart=" + " ".join(exec_quote(a, program=i == 0) for i, a in enumerate(spec.argv)),
        # 0 complete, 1 stopped with work left, 2 usage or config error: never restarted.
        # 3 (internal error), 130/143 (a signal dun caught) and deaths by signal: restarted after a pause.
        # A usage-limit wait happens inside dun loop and needs nothing here.
        "Restart=always",
        "RestartPreventExitStatus=0 1 2",
        "SuccessExitStatus=1 130 143",
        "RestartSec=1min",
    ]
    if version is not None and version >= BACKOFF_VERSION:
        lines += ["RestartSteps=6", "RestartMaxDelaySec=1h"]
    lines += [
        # SIGTERM to dun alone: it stops its agent's process group itself, within loop.kill_grace_s
        "KillMode=mixed",
        "TimeoutStopSec=2min",
    ]
    if spec.log_file is not None:
        target = escape_specifiers(str(spec.log_file))
        lines += [f"StandardOutput=append:{target}", f"StandardError=append:{target}"]
    else:
        lines += ["StandardOutput=journal", "StandardError=journal", f"SyslogIdentifier={spec.name}"]
    if spec.timer is None:
        lines += ["", "[Install]", "WantedBy=default.target"]
    return "\n".join(lines) + "\n"


def render_timer(spec: ServiceSpec) -> str:
    assert spec.timer is not None
    return "\n".join([
        "# Written by `dun service install --timer`; `dun service uninstall` removes it.",
        "[Unit]",
        f"Description=Start the dun loop in {escape_specifiers(str(spec.root))} ({escape_specifiers(spec.timer)})",
        "",
        "[Timer]",
        f"OnCalendar={escape_specifiers(spec.timer)}",
        # a start missed while the machine was off happens at the next boot; a loop still running is left alone
        "Persistent=true",
        f"Unit={spec.name}.service",
        "",
        "[Install]",
        "WantedBy=timers.target",
    ]) + "\n"


def files(spec: ServiceSpec, version: int | None) -> dict[Path, str]:
    out = {unit_dir() / f"{spec.name}.service": render_service(spec, version)}
    if spec.timer is not None:
        out[unit_dir() / f"{spec.name}.timer"] = render_timer(spec)
    return out


def main_unit(spec: ServiceSpec) -> str:
    return f"{spec.name}.timer" if spec.timer is not None else f"{spec.name}.service"


def can_manage() -> bool:
    """systemctl is there and a user manager answers on the session bus (not so in containers or over plain ssh)."""
    if shutil.which("systemctl") is None:
        return False
    if os.environ.get("DBUS_SESSION_BUS_ADDRESS"):
        return True
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    return Path(runtime, "bus").exists() if runtime else False


def reload_commands() -> list[list[str]]:
    return [["systemctl", "--user", "daemon-reload"]]


def enable_commands(spec: ServiceSpec) -> list[list[str]]:
    return [*reload_commands(), ["systemctl", "--user", "enable", "--now", main_unit(spec)]]


def disable_commands(units: list[str]) -> list[list[str]]:
    return [["systemctl", "--user", "disable", "--now", *units]]


def unit_status(name: str) -> dict[str, str]:
    """ActiveState, SubState, Result, ExecMainStatus and NRestarts of the service, as systemctl shows them."""
    props = "ActiveState,SubState,Result,ExecMainStatus,NRestarts"
    proc = subprocess.run(["systemctl", "--user", "show", f"{name}.service", f"--property={props}"],
                          capture_output=True, text=True, timeout=30, check=False)
    if proc.returncode != 0:
        return {}
    return dict(line.split("=", 1) for line in proc.stdout.splitlines() if "=" in line)
