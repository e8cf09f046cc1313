"""Where dun's caches live, and what of the environment their keys hold: the one place dun's cache directory is
resolved (the sandbox relies on it), beside the cache module itself (dun/core/cache/).

Import-light on purpose (os, and sha256 without OpenSSL): `dun check`'s replay path (dun/engine/replay.py) needs
both before the rest of dun loads.
"""

from __future__ import annotations

import os

from dun.core.digest import sha256

# Environment variables that differ between shells and terminals but not in what a check sees; every other one
# (PATH, VIRTUAL_ENV, ...) is part of a cache key, since a command check runs in that environment.
VOLATILE_ENV = frozenset({
    "_", "PWD", "OLDPWD", "SHLVL", "COLUMNS", "LINES", "TERM_SESSION_ID", "WINDOWID", "SSH_AUTH_SOCK", "SSH_CLIENT",
    "SSH_CONNECTION", "SSH_TTY", "TMUX_PANE", "DISPLAY", "XAUTHORITY", "DBUS_SESSION_BUS_ADDRESS", "XDG_SESSION_ID",
    "PS1", "PROMPT_COMMAND", "HISTFILE", "DUN_NO_CACHE",
})


def stable_env() -> list[tuple[str, str]]:
    """The environment less VOLATILE_ENV, sorted: what a cache key holds of it."""
    return sorted((k, v) for k, v in os.environ.items() if k not in VOLATILE_ENV)


def cache_base_path() -> str:
    """`$XDG_CACHE_HOME/dun`, or `~/.cache/dun`."""
    return os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "dun")


def cache_dir_path(root: str) -> str:
    """The cache directory of the repository at `root`."""
    digest = sha256(root.encode("utf-8", "surrogateescape")).hexdigest()[:16]
    return os.path.join(cache_base_path(), digest)
