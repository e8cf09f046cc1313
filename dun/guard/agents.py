"""The coding agents' own settings, changed from inside a session, and agents started with their checks off.

An MCP server added (`claude mcp add`, `codex mcp add`, `gemini mcp add`) is a program the agent starts in every
later session; tools allowed or hooks changed through an agent's CLI (`claude config set allowedTools`) outlive the
session; a nested agent started with its permission checks, approvals or sandbox turned off
(`claude --dangerously-skip-permissions`, `codex --dangerously-bypass-approvals-and-sandbox`, `gemini --yolo`) runs
beyond this session's hooks. The files these CLIs write in the repository (`.mcp.json`, `.claude/settings*.json`,
`.gemini/settings.json`, `.codex/config.toml`) are protected paths (paths.py). Judged by the words of the command.
"""

from __future__ import annotations

import re

from dun.guard.effects import Facts

AGENTS = frozenset({"claude", "claude-code", "gemini-cli", "codex", "gemini", "qwen", "aider", "opencode",
                    "cursor-agent", "amp", "goose", "crush",
                    "copilot", "droid", "auggie", "kiro-cli", "q", "cline", "pi"})
# Flags that turn an agent's permission prompts, approvals or sandbox off (any agent: each spells its own)
BYPASS_FLAGS = frozenset({"--dangerously-skip-permissions", "--allow-dangerously-skip-permissions",
                          "--dangerously-bypass-approvals-and-sandbox", "--yolo", "--dangerously-allow-all",
                          "--yes-always", "--trust-all-tools", "--allow-all-tools", "--always-approve",
                          "--skip-permissions-unsafe", "--auto-approve-all"})
SHORT_YOLO = frozenset({"gemini", "gemini-cli", "qwen"})  # `-y` is --yolo
OWN_FLAGS = {"cursor-agent": ("--force", "-f"), "opencode": ("--yes",), "goose": ("--no-confirm",)}
ALL_TOOLS = frozenset({"bash", "bash(*)", "bash(*:*)", "*", "shell", "shell(*)"})  # --allowedTools: every command
# option -> values that turn the checks off (--permission-mode bypassPermissions, -a never, -s danger-full-access)
BYPASS_VALUES = {"--permission-mode": ("bypasspermissions",), "--approval-mode": ("yolo",),
                 "--sandbox": ("danger-full-access", "false", "none"), "-s": ("danger-full-access",),
                 "--ask-for-approval": ("never",), "-a": ("never",),
                 "--config": ("sandbox_mode=\"danger-full-access\"", "sandbox_mode=danger-full-access",
                              "approval_policy=never", "approval_policy=\"never\""),
                 "-c": ("sandbox_mode=\"danger-full-access\"", "sandbox_mode=danger-full-access",
                        "approval_policy=never", "approval_policy=\"never\"")}
SETTINGS_WORDS = ("hooks", "permissions", "disableallhooks", "allowedtools", "defaultmode")
# Subcommands that change what the agent will run or may do from now on
SETTINGS_SUBS = {"mcp": frozenset({"add", "add-json", "add-from-claude-desktop", "remove", "import"}),
                 "config": frozenset({"set", "add", "remove"}),
                 "extensions": frozenset({"install", "link", "enable"}),
                 "plugin": frozenset({"install", "add", "enable", "marketplace"}),
                 "plugins": frozenset({"install", "add", "enable"})}


EDITORS = frozenset({"code", "code-insiders", "codium", "cursor", "windsurf", "positron"})


def mark(facts: Facts, words: list[str]) -> None:
    """Raise `agent-bypass` or `agent-settings` for a command that runs an agent CLI (words[0] is the program)."""
    if facts.program in EDITORS and "--install-extension" in words:  # code that runs inside the user's editor
        facts.signals.add("agent-settings")
        facts.notes["agent-settings"] = "why: installs an editor extension"
    if facts.program not in AGENTS:
        return
    args = words[1:]
    for i, word in enumerate(args):
        name, eq, value = word.partition("=")
        value = value if eq else (args[i + 1] if i + 1 < len(args) else "")
        low = value.lower().replace(" ", "")
        if word in BYPASS_FLAGS or (word == "-y" and facts.program in SHORT_YOLO) or \
                word in OWN_FLAGS.get(facts.program, ()) or (name in ("--allowedTools", "--allowed-tools") and any(
                    t.strip().lower() in ALL_TOOLS for t in value.split(","))) or \
                any(low == v or low.startswith(v) for v in BYPASS_VALUES.get(name, ())) or \
                (name == "--settings" and any(w in low for w in SETTINGS_WORDS)):
            facts.signals.add("agent-bypass")
            shown = word if eq or word in BYPASS_FLAGS or word == "-y" else f"{word} {value}"
            facts.notes["agent-bypass"] = f"why: {shown}"
            return
    ops = [w for w in args if not w.startswith("-")]
    if len(ops) >= 2 and ops[1] in SETTINGS_SUBS.get(ops[0], ()):
        facts.signals.add("agent-settings")
        facts.notes["agent-settings"] = f"why: {facts.program} {ops[0]} {ops[1]}"


# Config files of editors and agents that can turn an agent's approvals off (the agents' own settings in the
# repository are protected paths instead: paths.PROTECTED)
CONFIG_FILES = re.compile(r"(?:^|/)(?:\.vscode/settings\.json|[^/]*\.code-workspace|\.aider\.conf\.ya?ml"
                          r"|opencode\.jsonc?|\.opencode/[^/]+\.jsonc?|\.zed/settings\.json|\.cursor/[^/]+\.json|\.windsurf/[^/]+"
                          r"|\.continue/config\.[a-z]+|\.amp/settings\.json|\.qwen/settings\.json)$")
_APPROVE_ALL = re.compile(r"(?i)auto[-_]?approve[\"']?\s*[:=]\s*(?:true|\{|\[)|yes[-_]always\s*[:=]\s*true"
                          r"|[\"'](?:bash|edit|webfetch|\*)[\"']\s*:\s*[\"']allow[\"']|bypassPermissions|danger-full-access"
                          r"|dangerously|[\"']?approval(?:[-_]?policy|[-_]?mode)[\"']?\s*[:=]\s*[\"']?(?:never|yolo)")


def judge(path: str, added: str, removed: str) -> str | None:
    """Why an edit of an editor's or agent's config turns an agent's approvals off, or None."""
    if CONFIG_FILES.search(path) and (m := _APPROVE_ALL.search(added)) and not _APPROVE_ALL.search(removed):
        return f"turns a coding agent's approvals off ({m.group(0)})"
    return None
