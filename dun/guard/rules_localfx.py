"""Built-in rules about local effects that judge or feed the agent's work: the gates that judge it weakened in their
config files, the hooks that judge its commits skipped, package sources redirected or verification turned off, the
coding agents' own settings changed and nested agents started with their checks off, and Windows tools run from WSL.
Each denial says what to do instead. The signals come from gates.py, hookskip.py, supply.py, confedit.py, agents.py
and windows.py."""

from __future__ import annotations

from dun.guard.hookskip import EMPTY_HOOKS, HOOKED
from dun.guard.ruletypes import Match, Rule

_GIT = ("git",)
_HOOK_PATHS = ("*/.git/hooks/*", "*/.git/hooks", "*/.husky/*", "*/.husky", "*/.githooks/*", "*/.githooks",
               "*/lefthook.yml", "*/.lefthook.yml", "*/lefthook.yaml")

LOCALFX_RULES: tuple[Rule, ...] = (
    Rule("gate.weaken", "weakens a gate that judges the work; fix the code or the test instead, or ask the user to "
         "change the gate", (Match(signals=("gate-weaken",)),
                  Match(programs=_GIT, subcommands=("update-index",), args_any=("*test*", "*spec*"),
                        flags_any=("--skip-worktree", "--assume-unchanged")),
                  Match(programs=("pip", "pip3", "uv", "pipx"), subcommands=("uninstall", "remove"),
                        args_any=("dun",)),
                  Match(programs=("uv",), subcommands=("tool",), actions=("uninstall",), args_any=("dun",)))),
    Rule("hooks.skip", "skips or removes the hooks that check commits; commit with the hooks and fix what they "
         "find",
         (Match(programs=_GIT, subcommands=HOOKED, flags_any=("--no-verify", "--no-verif", "--no-veri")),
          Match(programs=_GIT, subcommands=("commit",), flags_any=("-n",)),
          Match(signals=("hooks-skip",)),
          Match(programs=_GIT, values_any=tuple(f"-c=core.hookspath={v}" for v in EMPTY_HOOKS) +
                tuple(f"config=core.hookspath={v}" for v in EMPTY_HOOKS)),
          Match(programs=("pre-commit", "husky", "lefthook", "overcommit"), subcommands=("uninstall", "--uninstall")),
          Match(effects=("delete",), paths=_HOOK_PATHS))),
    Rule("supply.source", "points package installs at unverified code; keep the project's sources, over https, "
         "and let the package manager write its lockfile",
         (Match(signals=("supply-source",)),
          Match(programs=_GIT, values_any=tuple(f"*=http.{scope}sslverify={v}" for scope in ("", "*.")
                                                for v in ("false", "0", "no", "off"))))),
    Rule("agent.bypass", "starts a coding agent with its permission checks, approvals or sandbox off, beyond this "
         "session's hooks; run it without that flag", (Match(signals=("agent-bypass",)),)),
    Rule("agent.settings", "changes a coding agent's or editor's own settings (MCP servers it starts, tools it may "
         "run, hooks, extensions), which outlive this session; ask the user to make that change",
         (Match(signals=("agent-settings",)),)),
    Rule("win.system", "runs a Windows tool from WSL that destroys or weakens the Windows side (disks, the registry, "
         "tasks, Defender, the firewall, users, logs, boot settings, WSL distributions) or makes code run there "
         "later; leave that to the user", (Match(signals=("win-destroy",)),)),
)
