"""Where `.dun/` and the files read before any record is are: import-light, so that reading a cached config (every
`dun check`) does not load the records and their writers (dun/store/store.py owns the rest)."""

from __future__ import annotations

from pathlib import Path

from dun.core.git import Repo, find_root

DIR = ".dun"
# Paths under the repository root, as git and glob patterns spell them (POSIX, relative)
CONFIG = f"{DIR}/config.yaml"
PLUGINS = f"{DIR}/plugins"
TEMPLATES = f"{DIR}/templates"
CACHE = f"{DIR}/cache"  # reports and profiles the checks' commands write, agents' settings for a run
WORKTREES = f"{DIR}/worktrees"  # the default of fleet.worktrees_dir
GITIGNORE = f"{DIR}/.gitignore"  # written by dun itself: never the user's work to commit
PAPERS = f"{DIR}/papers.jsonl"  # the paper watch's papers (`dun papers`); the papers-unread check reads it


def find_repo(start: Path | str | None = None) -> Repo:
    """The repository of `start` (default: the current directory): its git top level; outside git, the nearest
    parent holding `.dun/`, else `start`."""
    return find_root(start, DIR)


def dun_dir(root: Path) -> Path:
    """`.dun/` of the repository at `root`."""
    return root / DIR


def config_path(root: Path) -> Path:
    """`.dun/config.yaml` of the repository at `root`."""
    return root / CONFIG


def plugins_dir(root: Path) -> Path:
    """`.dun/plugins/`: the repository's own manifests."""
    return root / PLUGINS
