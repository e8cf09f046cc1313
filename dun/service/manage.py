"""install, uninstall, status: the files a platform needs, written atomically, and the supervisor told about them
only when it can be reached (otherwise the commands are printed for the user to run)."""

from __future__ import annotations

import plistlib
import shlex
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dun.core.atomic import write_text_atomic
from dun.core.errors import DunError
from dun.service import launchd, systemd
from dun.service.spec import ServiceSpec


@dataclass
class Plan:
    """What install or uninstall does: stop the job (a failure there only warns: it may not be loaded), write or
    remove the files, then tell the supervisor."""

    files: dict[Path, str] = field(default_factory=dict)
    remove: list[Path] = field(default_factory=list)
    stop: list[list[str]] = field(default_factory=list)
    commands: list[list[str]] = field(default_factory=list)


def install_plan(spec: ServiceSpec, platform: str, version: int | None = None) -> Plan:
    if platform == "launchd":
        written = {path: data.decode("utf-8") for path, data in launchd.files(spec).items()}
        (plist,) = written
        # launchd refuses to bootstrap a loaded job: a re-install unloads the old one first
        stop = launchd.disable_commands(spec.name) if plist.exists() else []
        return Plan(files=written, stop=stop, commands=launchd.enable_commands(plist))
    if spec.timer is not None:
        systemd.check_calendar(spec.timer)
    return Plan(files=systemd.files(spec, version), commands=systemd.enable_commands(spec))


def installed_files(name: str, platform: str) -> list[Path]:
    if platform == "launchd":
        candidates = [launchd.agent_dir() / f"{name}.plist"]
    else:
        candidates = [systemd.unit_dir() / f"{name}.timer", systemd.unit_dir() / f"{name}.service"]
    return [p for p in candidates if p.exists()]


def uninstall_plan(name: str, platform: str) -> Plan:
    present = installed_files(name, platform)
    if not present:
        return Plan()
    if platform == "launchd":
        return Plan(remove=present, stop=launchd.disable_commands(name))
    return Plan(remove=present, stop=systemd.disable_commands([p.name for p in present]),
                commands=systemd.reload_commands())


def can_manage(platform: str) -> bool:
    if platform == "launchd":
        return sys.platform == "darwin" and shutil.which("launchctl") is not None
    return systemd.can_manage()


def show(plan: Plan) -> str:
    """The dry run: every file with its path, then the commands."""
    parts = [f"# {path}\n{text}" for path, text in plan.files.items()]
    parts += [f"# remove {path}\n" for path in plan.remove]
    if plan.stop or plan.commands:
        parts.append("# then run:\n" + "".join(f"{shlex.join(c)}\n" for c in [*plan.stop, *plan.commands]))
    return "\n".join(parts)


def _run(argv: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False)


def apply(plan: Plan, manage: bool, say: Callable[[str], None]) -> None:
    """Run the plan; with `manage` off, do the file part and print the commands for the user to run."""
    if manage:
        _commands(plan.stop, say, strict=False)
    for path, text in plan.files.items():
        write_text_atomic(path, text)
        say(f"wrote {path}")
    for path in plan.remove:
        path.unlink(missing_ok=True)
        say(f"removed {path}")
    if manage:
        _commands(plan.commands, say, strict=True)
    elif plan.stop or plan.commands:
        say("not calling the supervisor (--no-enable, or no user session bus); run:")
        for argv in [*plan.stop, *plan.commands]:
            say(f"  {shlex.join(argv)}")


def _commands(commands: list[list[str]], say: Callable[[str], None], strict: bool) -> None:
    for argv in commands:
        proc = _run(argv)
        if proc.returncode == 0:
            say(f"ran {shlex.join(argv)}")
            continue
        detail = (proc.stderr or proc.stdout).strip().splitlines()
        message = f"`{shlex.join(argv)}` failed: {detail[0] if detail else f'exit {proc.returncode}'}"
        if strict:
            raise DunError(message)
        say(f"warning: {message}")


def logs_hint(name: str, platform: str) -> str:
    """Where the service's output goes, read back from its installed file."""
    if platform == "launchd":
        plist = launchd.agent_dir() / f"{name}.plist"
        try:
            return str(plistlib.loads(plist.read_bytes()).get("StandardOutPath", ""))
        except (OSError, plistlib.InvalidFileException):
            return ""
    unit = _unit_values(systemd.unit_dir() / f"{name}.service")
    target = unit.get("StandardOutput", "journal")
    return target.split(":", 1)[1].replace("%%", "%") if target.startswith("append:") else \
        f"journalctl --user -u {name}.service"


def _unit_values(path: Path) -> dict[str, str]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return {}
    return dict(line.split("=", 1) for line in text.splitlines() if "=" in line and not line.startswith("#"))


def status(name: str, platform: str, root: Path) -> dict[str, Any]:
    """The installed files, what the supervisor says (when reachable) and the loop's own state."""
    from dun.store.lock import lock_holder
    from dun.store.store import Store

    present = installed_files(name, platform)
    timer = _unit_values(systemd.unit_dir() / f"{name}.timer").get("OnCalendar") if platform == "systemd" else None
    supervisor: dict[str, str] | None = None
    if present and can_manage(platform):
        supervisor = launchd.job_status(name) if platform == "launchd" else systemd.unit_status(name)
    store = Store(root)
    state = store.peek_state()
    loop = None if state is None else {k: getattr(state, k) for k in ("run_id", "status", "stop_reason", "iteration",
                                                                      "cost_usd_total", "updated_at")}
    return {"name": name, "platform": platform, "root": str(root), "installed": bool(present),
            "files": [str(p) for p in present], "timer": timer, "logs": logs_hint(name, platform) if present else None,
            "supervisor": supervisor, "loop_pid": lock_holder(store), "loop": loop}
