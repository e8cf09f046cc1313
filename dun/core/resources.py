"""Where dun's shipped data lives: inside the wheel (`dun/_data/`) or, from a source checkout, the repo."""

from __future__ import annotations

import os
from pathlib import Path


def data_dir(name: str) -> Path:
    package = Path(__file__).resolve().parent.parent  # dun/
    packaged = package / "_data" / name
    if packaged.is_dir():
        return packaged
    return package.parent / name


def user_config_dir() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "dun"


def user_state_dir() -> Path:
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "dun"
