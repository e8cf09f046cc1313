"""`dun sandbox`: run the agent (and, in a loop, the checks that judge it) under bubblewrap, where it can write the
repository's work tree, its commits, a private /tmp and its own state directories, and nothing else: the root
filesystem, the rest of $HOME and everything dun judges by (.git/config, hooks, info, .dun/, dun's caches) are
read-only.

spec.py builds the bwrap command line from a `SandboxSpec`; probe.py decides whether bubblewrap can run here
(`resolve_mode`); cli.py is the `dun sandbox -- CMD` entry point for agents started by a shell script.
"""

from __future__ import annotations

from dun.sandbox.cli import main
from dun.sandbox.probe import MODES, SandboxError, probe, resolve_mode
from dun.sandbox.spec import (
    AGENT_STATE,
    PACKAGE_CACHES,
    SandboxSpec,
    confiner,
    git_dirs,
    judge_paths,
    wrap,
    writable_paths,
)

__all__ = ["AGENT_STATE", "MODES", "PACKAGE_CACHES", "SandboxError", "SandboxSpec", "confiner", "git_dirs",
           "judge_paths", "main", "probe", "resolve_mode", "wrap", "writable_paths"]
