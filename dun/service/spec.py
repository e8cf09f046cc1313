"""What a service runs, where its files go, and the one name per repository that ties them together."""

from __future__ import annotations

import hashlib
import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

from dun.core.resources import user_config_dir

PLATFORMS = ("systemd", "launchd")


@dataclass(frozen=True)
class ServiceSpec:
    name: str  # unit name / launchd label: unique per repository
    root: Path
    argv: list[str]  # the command the supervisor runs: python -m dun loop ROOT ...
    env_file: Path  # read by the supervisor when it exists; its contents never enter the unit
    log_file: Path | None  # None: the journal (systemd)
    timer: str | None  # a systemd OnCalendar expression, or None to run continuously
    path_env: str = field(default_factory=lambda: os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin"))


def default_platform() -> str:
    return "launchd" if sys.platform == "darwin" else "systemd"


def service_name(root: Path) -> str:
    """`dun-loop-<dir>-<hash of the path>`: readable, and two checkouts named alike never collide."""
    slug = re.sub(r"[^a-z0-9]+", "-", root.name.lower()).strip("-")[:40] or "repo"
    digest = hashlib.sha256(str(root).encode("utf-8", "surrogateescape")).hexdigest()[:8]
    return f"dun-loop-{slug}-{digest}"


def default_env_file() -> Path:
    return user_config_dir() / "service.env"


def resolve_path(value: str, root: Path) -> Path:
    """`~` expands; a relative path is relative to the repository root."""
    path = Path(value).expanduser()
    return path if path.is_absolute() else (root / path)


def loop_argv(root: Path, loop_args: list[str]) -> list[str]:
    # the interpreter that runs this install: the service keeps using the same dun, venv included
    return [sys.executable, "-m", "dun", "loop", "-C", str(root), *loop_args]


def env_file_warning(path: Path) -> str | None:
    """A one-line warning when the file holding API keys is readable by other users."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return None
    if mode & 0o077:
        return f"{path} is readable by other users; `chmod 600 {path}` keeps its API keys private"
    return None
