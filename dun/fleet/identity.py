"""Which loop this is, for a person reading a fleet: the host it runs on and the repository it works in (named by
its `origin` remote, as `owner/name`, so that twenty pods all checked out to /work/repo still differ)."""

from __future__ import annotations

import hashlib
import os
import re
import socket
from pathlib import Path

from dun.core.git import git

_REMOTE_NAME = re.compile(r"[:/]([^/:]+/[^/:]+?)(?:\.git)?/*$")


def host() -> str:
    """This machine's name (a pod's name on Kubernetes); DUN_HOST overrides it."""
    return os.environ.get("DUN_HOST") or socket.gethostname() or "?"


def repository(root: Path) -> str:
    """`owner/name` from the `origin` remote's URL, else the main work tree's directory name."""
    try:
        proc = git(root, "config", "--get", "remote.origin.url", check=False)
        url = proc.stdout.decode("utf-8", "replace").strip() if proc.returncode == 0 else ""
    except OSError:
        url = ""
    found = _REMOTE_NAME.search(url)
    if found:
        return found.group(1)
    try:
        from dun.fleet.worktrees import main_root

        return main_root(root).name
    except Exception:  # not a git repository, or git missing: the directory's own name
        return root.name


def loop_id(host_name: str, root: Path) -> str:
    """A new loop's id: its host and work tree, hashed (kept in the loop's `.dun/fleet.json` from then on, so a pod
    rescheduled onto another node stays the same loop)."""
    digest = hashlib.sha256(f"{host_name}\0{os.path.realpath(root)}".encode()).hexdigest()[:12]
    return f"{re.sub(r'[^A-Za-z0-9_.-]', '_', host_name)[:40]}-{digest}"
