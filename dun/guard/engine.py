"""decide(): one PreToolUse event in, allow or deny out.

Bash commands are parsed and walked (`walk.py`); every simple command found, however nested, is checked against
the user's deny patterns, then (unless an allow pattern matches it) against the built-in rules. File tools (Write,
Edit, MultiEdit, NotebookEdit) are checked by where their path lands. A command that cannot be parsed, a missing
command, or an error inside the guard is a denial: the guard fails closed.
"""

from __future__ import annotations

import os
import posixpath
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from dun.guard import ciconfig, linestate, localfx
from dun.guard.effects import Effect, Facts
from dun.guard.expand import Ctx, Env, Val
from dun.guard.lexer import ShellError
from dun.guard.paths import classify, normalize
from dun.guard.rules import FILE_TOOLS, RuleSet, match
from dun.guard.testdb import TEST_SCOPED_RULES
from dun.guard.walk import Walker

MAX_REASON = 300
_PATH_KEYS = {"NotebookEdit": "notebook_path"}
_SCRIPT_SUFFIXES = (".sh", ".bash", ".zsh", ".ksh")
_SHELL_SHEBANG = re.compile(r"#!\s*\S*/(?:env\s+)?(?:sh|bash|zsh|dash|ksh|ash)\b")
_UNCERTAIN_RULES = frozenset({"fs.delete-unresolved", "exec.unknown-program", "exec.unseen-code"})
# A deploy or notify script may be written for a person to run; what it changes elsewhere is judged when it runs
_RUN_TIME_RULES = frozenset({"remote.posture"})


@dataclass(frozen=True)
class Verdict:
    decision: Literal["allow", "deny"]
    rule: str | None = None
    reason: str | None = None


ALLOW = Verdict("allow")


def deny(rule: str, reason: str) -> Verdict:
    line = " ".join(f"dun guard [{rule}]: {reason}".split())
    return Verdict("deny", rule, line if len(line) <= MAX_REASON else line[:MAX_REASON - 1] + "…")


def make_env(root: Path) -> Env:
    home = os.environ.get("HOME") or str(Path.home())
    temp = Env("", "").temp
    tmpdir = os.environ.get("TMPDIR")
    if tmpdir and tmpdir.startswith("/") and normalize(tmpdir, None) not in ("/", home):
        temp = (*temp, str(normalize(tmpdir, None)))
    return Env(str(normalize(str(root), None)), str(normalize(home, None)), dict(os.environ), temp)


def decide(event: Mapping[str, object], root: Path, rules: RuleSet) -> Verdict:
    tool = event.get("tool_name")
    tool_input = event.get("tool_input")
    cwd = event.get("cwd")
    cwd = cwd if isinstance(cwd, str) and cwd.startswith("/") else str(root)
    if tool == "Bash":
        command = tool_input.get("command") if isinstance(tool_input, dict) else None
        if not isinstance(command, str):
            return deny("shell.unparseable", "unparseable command: tool_input.command is missing or not a string")
        return decide_command(command, cwd, root, rules)
    if tool in FILE_TOOLS:
        key = _PATH_KEYS.get(str(tool), "file_path")
        path = tool_input.get(key) if isinstance(tool_input, dict) else None
        if not isinstance(path, str) or not path:
            return deny("tool.bad-input", f"{tool}: tool_input.{key} is missing or not a string")
        verdict = decide_path(str(tool), path, cwd, root, rules)
        real = str(normalize(path, cwd) or path)
        if verdict.decision == "allow" and isinstance(tool_input, dict) and (
                why := ciconfig.tool_edit(str(tool), real, tool_input)):  # a test step removed, || true added
            return check(str(tool), [Facts(unit=real, program=str(tool), signals={"ci-weaken"},
                                           notes={"ci-weaken": f"why: {why}"})], rules)
        if verdict.decision == "allow" and (weak := localfx.tool_facts(str(tool), real, tool_input)) is not None:
            return check(str(tool), [weak], rules)  # a threshold lowered, a registry replaced in a config file
        content = tool_input.get("content") if isinstance(tool_input, dict) else None
        if verdict.decision == "allow" and tool == "Write" and isinstance(content, str) and is_shell_script(path,
                                                                                                          content):
            return decide_script(content, path, cwd, root, rules)
        if verdict.decision == "allow" and tool == "Write" and isinstance(content, str) and path.endswith(
                linestate.EDITOR_CONFIGS):  # tasks run on folder open, a dev container's lifecycle commands
            verdict = decide_script("\n".join(linestate.editor_commands(content)), path, cwd, root, rules)
        added = tool_input.get("content") or tool_input.get("new_string") if isinstance(tool_input, dict) else None
        if verdict.decision == "allow" and linestate.runs_on_open(real, added if isinstance(added, str) else None):
            return check(str(tool), [Facts(unit=real, program=str(tool), signals={"plant-startup"})], rules)
        return verdict
    return ALLOW


def decide_command(command: str, cwd: str, root: Path, rules: RuleSet) -> Verdict:
    env = make_env(root)
    walker = Walker(env)
    try:
        walker.run(command, Ctx(normalize(cwd, None)))
    except ShellError as exc:
        return deny("shell.unparseable", f"unparseable command ({exc}); rewrite it in plain shell")
    except (RecursionError, ValueError, IndexError, KeyError, TypeError, AttributeError) as exc:
        return deny("shell.unparseable", f"unparseable command (guard error: {type(exc).__name__}: {exc})")
    return check("Bash", walker.facts, rules)


def decide_path(tool: str, path: str, cwd: str, root: Path, rules: RuleSet) -> Verdict:
    env = make_env(root)
    if path == "~" or path.startswith("~/"):
        path = env.home + path[1:]
    where_path, where = classify(Val(path), Ctx(normalize(cwd, None)), env)
    facts = Facts(unit=where_path, program=tool, effects=[Effect("write", where_path, where)])
    return check(tool, [facts], rules)


def is_shell_script(path: str, content: str) -> bool:
    first = content.split("\n", 1)[0]
    return path.endswith(_SCRIPT_SUFFIXES) or bool(_SHELL_SHEBANG.match(first))


def decide_script(content: str, path: str, cwd: str, root: Path, rules: RuleSet) -> Verdict:
    """A shell script written with the Write tool is held to the rules its commands would meet when run (the usual
    way round the guard is to write the command into a file and run the file). What the guard cannot resolve in a
    script (its parameters, `$(...)`) is not held against it, and a script the guard cannot parse may be written."""
    env = make_env(root)
    walker = Walker(env)
    here = posixpath.dirname(str(normalize(path, cwd) or cwd))
    try:
        walker.run(content, Ctx(here))
    except (ShellError, RecursionError, ValueError, IndexError, KeyError, TypeError, AttributeError):
        return ALLOW
    certain = RuleSet(tuple(r for r in rules.rules if r.id not in _UNCERTAIN_RULES | _RUN_TIME_RULES), rules.allow,
                      rules.deny)
    verdict = check("Bash", walker.facts, certain)
    if verdict.decision == "deny" and verdict.rule is not None:
        return deny(verdict.rule, f"writes a shell script ({path}) that would run: "
                    f"{(verdict.reason or '').split(': ', 1)[-1]}")
    return verdict


def check(tool: str, all_facts: list[Facts], rules: RuleSet) -> Verdict:
    for facts in all_facts:
        for pattern in rules.deny:
            if facts.unit and pattern.matches(tool, facts.unit):
                return deny("config.deny", f"matches guard.deny pattern {pattern.source!r}: {facts.unit}")
    for facts in all_facts:
        if any(p.matches(tool, facts.unit) for p in rules.allow):
            continue
        for rule in rules.for_program(facts.program):
            if (facts.lenient and rule.id in _UNCERTAIN_RULES) or (facts.test_db and rule.id in TEST_SCOPED_RULES) or \
                    rule.id in facts.free:
                continue
            detail = match(rule, facts)
            if detail is not None:
                shown = facts.unit
                if detail and detail not in facts.unit:
                    plain = detail.startswith(("query: ", "secret: ", "why: "))
                    shown += f" ({detail})" if plain else f" (path {detail})"
                return deny(rule.id, f"{rule.description}: {shown}")
    return ALLOW

