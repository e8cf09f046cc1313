"""The hooks that judge the agent's commits, skipped: `git commit --no-verify` (`-n`), `SKIP=...`, `HUSKY=0`,
`PRE_COMMIT_ALLOW_NO_CONFIG=1`, `LEFTHOOK=0` set for a git command, `core.hooksPath` pointed at nothing for one call
(`git -c core.hooksPath=/dev/null commit`) or for good, and the hooks uninstalled (`pre-commit uninstall`, a hook file
removed). The rules are data in rules_localfx.py; this module reads the variables set for a command."""

from __future__ import annotations

import re

from dun.guard.effects import Facts

# Variables that make a hook manager skip hooks: name -> values that skip (None: any non-empty value)
SKIP_VARS: dict[str, tuple[str, ...] | None] = {
    "SKIP": None, "HUSKY": ("0", "false"), "HUSKY_SKIP_HOOKS": None, "HUSKY_SKIP_INSTALL": None,
    "PRE_COMMIT_ALLOW_NO_CONFIG": None, "LEFTHOOK": ("0", "false"), "LEFTHOOK_EXCLUDE": None,
    "OVERCOMMIT_DISABLE": None, "GIT_HOOKS_DISABLED": None, "NO_VERIFY": None,
}
HOOKED = ("commit", "push", "merge", "am", "rebase", "pull", "cherry-pick", "revert")
# Where core.hooksPath can point so that no hook runs
EMPTY_HOOKS = ("/dev/null", "", "/tmp/*", "/var/tmp/*", "/nonexistent*", "/none", "false", "no", "0")


def mark_env(facts: Facts, assigned: dict[str, str | None]) -> None:
    """`SKIP=pytest git commit`, `export HUSKY=0; git push`: hooks skipped for a git command that runs them."""
    if facts.program != "git" or facts.sub not in HOOKED:
        return
    for name, value in assigned.items():
        if name in SKIP_VARS and value:
            wanted = SKIP_VARS[name]
            if wanted is None or value.lower() in wanted:
                facts.signals.add("hooks-skip")
                facts.notes["hooks-skip"] = f"why: {name}={value}"
                return


HOOK_FILE = re.compile(r"(?:^|/)(?:\.git/hooks|\.husky|\.githooks)/(?!_/)[^/]+$|(?:^|/)\.?lefthook\.ya?ml$")
_IDLE = re.compile(r"(?m)^\s*(?:#.*|exit\s+0|true|:|\.\s+\S*husky\.sh\S*|)\s*$")


def emptied(path: str, text: str | None) -> str | None:
    """A hook file rewritten to do nothing (emptied, or only `exit 0`): why, or None."""
    if text is None or not HOOK_FILE.search(path):
        return None
    return f"empties the hook {path.rsplit('/', 1)[-1]}" if all(_IDLE.fullmatch(x) for x in text.splitlines() or [""]) \
        else None
