"""Where `.dun/` and the files read before any record is are: import-light, so that reading a cached config (every
`dun check`) does not load the records and their writers (dun/store/store.py owns the rest)."""

from __future__ import annotations

from pathlib import Path

DIR = ".dun"


def config_path(root: Path) -> Path:
    """`.dun/config.yaml` of the repository at `root`."""
    return root / DIR / "config.yaml"


def plugins_dir(root: Path) -> Path:
    """`.dun/plugins/`: the repository's own manifests."""
    return root / DIR / "plugins"
