"""A launchd agent (macOS) running `dun loop`: a plist, written with plistlib."""

from __future__ import annotations

import os
import plistlib
import re
import subprocess
from pathlib import Path

from dun.core.errors import UsageError
from dun.service.spec import ServiceSpec

# launchd has no environment files and no per-exit-code restart policy, so a small sh wrapper does both:
# it loads the env file ($0) and passes a stop signal on to dun, then maps dun's "do not restart" codes
# (0 complete, 1 stopped with work left, 2 usage or config error) to 0, which KeepAlive leaves alone.
WRAPPER = """\
if [ -r "$0" ]; then set -a; . "$0"; set +a; fi
pid= stop=
trap 'stop=1; [ -n "$pid" ] && kill -TERM "$pid" 2>/dev/null' TERM INT HUP
"$@" &
pid=$!
if [ -n "$stop" ]; then kill -TERM "$pid" 2>/dev/null; fi
wait "$pid"; rc=$?
while kill -0 "$pid" 2>/dev/null; do wait "$pid"; rc=$?; done
echo "dun service: dun loop exited $rc" >&2
case $rc in 0|1|2) exit 0;; esac
exit "$rc"
"""

_DAYS = {"sun": 0, "mon": 1, "tue": 2, "wed": 3, "thu": 4, "fri": 5, "sat": 6}
_CALENDAR = re.compile(r"^(?:(?P<day>[A-Za-z]{3})\s+)?(?:\*-\*-\*\s+)?(?P<hour>\d{1,2}):(?P<minute>\d{2})(?::00)?$")


def agent_dir() -> Path:
    return Path.home() / "Library" / "LaunchAgents"


def default_log(name: str) -> Path:
    return Path.home() / "Library" / "Logs" / "dun" / f"{name}.log"


def calendar_interval(spec: str) -> dict[str, int]:
    """The subset of systemd calendar expressions launchd can express: hourly, daily, weekly, `HH:MM`,
    `*-*-* HH:MM:00` and `Mon HH:MM`."""
    text = spec.strip()
    named = {"hourly": {"Minute": 0}, "daily": {"Hour": 0, "Minute": 0},
             "weekly": {"Weekday": 1, "Hour": 0, "Minute": 0}}
    if text.lower() in named:
        return named[text.lower()]
    match = _CALENDAR.match(text)
    if match is None:
        raise UsageError(f"launchd takes hourly, daily, weekly, HH:MM or 'Mon HH:MM' for --timer, not {spec!r}")
    hour, minute = int(match["hour"]), int(match["minute"])
    if hour > 23 or minute > 59:
        raise UsageError(f"invalid time in --timer {spec!r}")
    out = {"Hour": hour, "Minute": minute}
    if match["day"]:
        day = match["day"].lower()
        if day not in _DAYS:
            raise UsageError(f"unknown weekday in --timer {spec!r}")
        out = {"Weekday": _DAYS[day], **out}
    return out


def render_plist(spec: ServiceSpec) -> bytes:
    log = str(spec.log_file or default_log(spec.name))
    doc: dict[str, object] = {
        "Label": spec.name,
        "ProgramArguments": ["/bin/sh", "-c", WRAPPER, str(spec.env_file), *spec.argv],
        "WorkingDirectory": str(spec.root),
        "EnvironmentVariables": {"PATH": spec.path_env, "PYTHONUNBUFFERED": "1", "TERM": "dumb"},
        "StandardOutPath": log,
        "StandardErrorPath": log,
        "RunAtLoad": spec.timer is None,
        # restarted only after an unsuccessful exit (3, a signal), at most once a minute
        "KeepAlive": {"SuccessfulExit": False},
        "ThrottleInterval": 60,
        "ProcessType": "Background",
    }
    if spec.timer is not None:
        doc["StartCalendarInterval"] = calendar_interval(spec.timer)
    return plistlib.dumps(doc, sort_keys=False)


def files(spec: ServiceSpec) -> dict[Path, bytes]:
    return {agent_dir() / f"{spec.name}.plist": render_plist(spec)}


def domain() -> str:
    return f"gui/{os.getuid()}"


def enable_commands(plist: Path) -> list[list[str]]:
    return [["launchctl", "bootstrap", domain(), str(plist)]]


def disable_commands(name: str) -> list[list[str]]:
    return [["launchctl", "bootout", f"{domain()}/{name}"]]


def job_status(name: str) -> dict[str, str]:
    """`state` and `last exit code` from `launchctl print`."""
    proc = subprocess.run(["launchctl", "print", f"{domain()}/{name}"], capture_output=True, text=True, timeout=30,
                          check=False)
    if proc.returncode != 0:
        return {}
    out: dict[str, str] = {}
    for line in proc.stdout.splitlines():
        key, sep, value = line.strip().partition(" = ")
        if sep and key in ("state", "last exit code", "pid", "runs"):
            out.setdefault(key, value)
    return out
