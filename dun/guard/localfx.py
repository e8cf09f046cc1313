"""One entry for the walker into the rule classes about local effects: the agents' own settings (agents.py), hooks
skipped (hookskip.py), package sources and verification (supply.py), config files that hold gates or sources
(confedit.py), and Windows tools run from WSL (windows.py)."""

from __future__ import annotations

import re

from dun.guard import agents, confedit, hookskip, supply, windows
from dun.guard.context import Ctx
from dun.guard.effects import Facts
from dun.guard.expand import Val
from dun.guard.paths import normalize

__all__ = ["mark", "mark_env", "redirected", "shell_edit", "tool_facts"]


def mark(facts: Facts, argv: list[Val], given: list[Val] | None = None, ctx: Ctx | None = None) -> list[str]:
    """Raise this family's signals from a command's words (`given`: as written, with its wrappers); the shell text a
    Windows command comes to (judged by the walker as if run here)."""
    words = [v.text for v in argv]
    wrapped = [v.text for v in given or []][:max(0, len(given or []) - len(argv))]
    if assigned := dict(w.split("=", 1) for w in wrapped if re.match(r"[A-Za-z_]\w*=", w)):  # env HUSKY=0 git ...
        mark_env(facts, {k: v for k, v in assigned.items()})
    agents.mark(facts, words)
    supply.mark(facts, words, {})
    if ctx is not None and ctx.downloads and facts.program in supply.MANAGERS and facts.sub in supply.INSTALLS and (
            got := next((e.path for e in facts.effects if e.path in ctx.downloads), None) or next((
                w for w in words if normalize(w, ctx.cwd) in ctx.downloads), None)):
        facts.signals.add("supply-source")  # curl -o /tmp/pkg.tgz http://... && npm install -g /tmp/pkg.tgz
        facts.notes["supply-source"] = f"why: installs a package downloaded in the same line ({got})"
    if facts.program in ("npm", "pnpm") and words[1:3] == ["pkg", "set"]:  # npm pkg set jest.coverageThreshold...=0
        confedit.mark(facts, "package.json", "\n".join(w.replace("=", ": ", 1) for w in words[3:]), "")
    if facts.program in ("truncate", "cp", "install") and (why := next((hookskip.emptied(e.path, "") for e in
                                                                        facts.effects if e.op == "write"), None)) \
            and (facts.program != "cp" or "/dev/null" in words):
        facts.signals.add("hooks-skip")
        facts.notes["hooks-skip"] = f"why: {why}"
    if facts.program == "chmod" and any(re.search(r"-[rwx]*x|^0?[0-6][0-7]{2}$", w) for w in words[1:2]) and any(
            hookskip.HOOK_FILE.search(e.path) for e in facts.effects if e.op == "chmod"):  # chmod -x .husky/pre-commit
        facts.signals.add("hooks-skip")
        facts.notes["hooks-skip"] = "why: makes a hook not executable"
    if facts.program == "git" and facts.sub in ("rm", "mv") and "--cached" not in facts.flags and any(
            hookskip.HOOK_FILE.search(o) for o in facts.operands[:-1 if facts.sub == "mv" else None]) and not (
            facts.sub == "mv" and hookskip.HOOK_FILE.search(facts.operands[-1])):  # a hook renamed is still a hook
        facts.signals.add("hooks-skip")
        facts.notes["hooks-skip"] = f"why: git {facts.sub} of a hook"
    if (facts.program == "ansible-vault" and facts.sub == "decrypt" and not any(
            w.startswith("--output") for w in words)) or (facts.program == "sops" and {"-d", "--decrypt"} & set(words)
                                                          and {"-i", "--in-place"} & set(words)):
        facts.signals.add("exfiltrate")  # ansible-vault decrypt group_vars/prod/vault.yml && git commit -a
        facts.notes["exfiltrate"] = "secret: a vault decrypted in place in the repository (view or edit it instead)"
    return windows.mark(facts, words, ctx.written if ctx is not None else None)


def mark_env(facts: Facts, assigned: dict[str, str | None]) -> None:
    """Variables set for the command (`SKIP=mypy git commit`, `GOSUMDB=off go get`)."""
    hookskip.mark_env(facts, assigned)
    if assigned and facts.program in supply.MANAGERS and "supply-source" not in facts.signals:
        supply.mark(facts, [facts.program], assigned)


def shell_edit(facts: Facts, prog: str, args: list[Val], stdin: str | None) -> None:
    confedit.shell_edit(facts, prog, args, stdin)


def redirected(path: str, text: str | None, append: bool, unit: str) -> Facts | None:
    """A file written by a redirection or tee (`printf ... >> pyproject.toml`, `echo > .husky/pre-commit`)."""
    why = None if append else hookskip.emptied(path, text)
    hit = ("hooks-skip", why) if why else confedit.rewritten(path, text, append)
    return Facts(unit=unit, signals={hit[0]}, notes={hit[0]: f"why: {hit[1]}"}) if hit else None


def tool_facts(tool: str, path: str, tool_input: object) -> Facts | None:
    """A Write/Edit of a file that holds a gate or package sources, when it weakens or redirects it."""
    if not isinstance(tool_input, dict):
        return None
    content = tool_input.get("content")
    why = hookskip.emptied(path, content) if tool == "Write" and isinstance(content, str) else None
    hit = ("hooks-skip", why) if why else confedit.tool_edit(tool, path, tool_input)
    return Facts(unit=path, program=tool, signals={hit[0]}, notes={hit[0]: f"why: {hit[1]}"}) if hit else None
