"""The matcher that interprets the guard's rules, the built-in rule set, and the user's `guard.allow`/`guard.deny`
patterns.

A rule is an id, a description and one or more `Match` descriptions (ruletypes.py); a rule fires on a simple command
when any of its matches holds, and a match holds when every condition it sets holds. Conditions speak about `Facts`:
the program, its subcommand (git push) and action (aws ec2 terminate-instances), flags, option values and operands,
the files it deletes/writes/chmods/mounts and where they are (`where` categories: repo, contents, gitdir, protected,
inside, ancestor, home, system, temp, device, outside, unknown), the SQL it sends, the signals the walker raised
(code it cannot see, every process killed, ...), and whether it runs code from the network. The rules themselves
are data in rules_local.py (this machine's files, disks and git), rules_shared.py (state shared with others),
rules_data.py (databases) and rules_cloud.py (cloud, hosted services and tools destroying what they manage).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fnmatch import fnmatchcase, translate
from functools import lru_cache

from dun.guard.effects import Facts
from dun.guard.prodtarget import PROD_RULES
from dun.guard.rules_local import LOCAL_RULES
from dun.guard.rules_localfx import LOCALFX_RULES
from dun.guard.rules_posture import POSTURE_RULES
from dun.guard.rules_remote import REMOTE_RULES
from dun.guard.rules_shared import SHARED_RULES
from dun.guard.ruletypes import Match, Rule

__all__ = ["BUILTIN_RULES", "FILE_TOOLS", "Match", "Pattern", "Rule", "RuleSet", "load_rules", "match"]

FILE_TOOLS = ("Write", "Edit", "MultiEdit", "NotebookEdit")
BUILTIN_RULES: tuple[Rule, ...] = LOCAL_RULES + SHARED_RULES + REMOTE_RULES + LOCALFX_RULES + POSTURE_RULES + PROD_RULES


_SQL_NOISE = re.compile(r"--[^\n]*|/\*.*?\*/|'(?:[^']|'')*'|\$\$.*?\$\$", re.S)


@lru_cache(maxsize=4096)
def _compiled(globs: tuple[str, ...]) -> tuple[frozenset[str], re.Pattern[str] | None]:
    """A tuple of globs as a set of plain names and one regex of the rest: the long program lists of the generic
    rules are looked up, not matched one glob at a time."""
    wild = [g for g in globs if any(c in g for c in "*?[")]
    exact = frozenset(g for g in globs if g not in wild)
    return exact, re.compile("|".join(f"(?:{translate(g)})" for g in wild)) if wild else None


def _any(globs: tuple[str, ...], values: list[str]) -> bool:
    exact, rx = _compiled(globs)
    return any(v in exact or (rx is not None and rx.match(v) is not None) for v in values)


# Flags with which a program only prints (help, its version, a listing) or rehearses (a dry run), whatever the rest
# of its command line says: `gem push --help`, `mix hex.publish --dry-run`. One class for every rule: a match made
# on the command's words alone does not fire with one of them; a match on what it does (the files it deletes or
# writes, the SQL it sends, code it runs) still does. Flags that other programs give a value count only as the last
# word: `psql -h HOST` is a host, `cargo yank --version 1.0.0` a version.
NOOP_FLAGS = frozenset({"--help", "-help", "--dry-run", "--dryrun", "--noop", "--what-if", "--whatif", "-WhatIf",
                        "--usage"})
_LAST_NOOP = (" -h", " --version", " --list", " -help")
_NOT_DRY = frozenset({"--dry-run=none", "--dry-run=false", "--dry-run=0", "--dry-run=no", "--dry-run=off"})
_WORD_SIGNALS = frozenset({"prod-target", "nonprod-target", "db-destroy"})  # raised by the command's own words


def rehearses(f: Facts) -> bool:
    """The command only prints or rehearses: a no-op flag of its own (not an operand after `--`)."""
    if any(v.lower() in _NOT_DRY for v in f.flags):
        return False
    return any(flag in NOOP_FLAGS for flag in f.flags) or f.unit.endswith(_LAST_NOOP) or (
        f.program == "aws" and f.operands[-1:] == ["help"] and not f.flags)  # aws s3 rb help: the CLI's own help


def _by_words(m: Match) -> bool:
    return not (m.effects or m.queries or m.exec_download or m.download_exec or
                not _WORD_SIGNALS.issuperset(m.signals))


def match(rule: Rule, facts: Facts) -> str | None:
    """The detail ("" or the path concerned) when the rule fires on these facts, else None."""
    noop = rehearses(facts)
    for m in rule.matches:
        if noop and _by_words(m):
            continue
        detail = _match_one(m, facts)
        if detail is not None:
            return detail
    return None


def _match_one(m: Match, f: Facts) -> str | None:
    if (m.programs and not _any(m.programs, [f.program])) or (m.programs_none and _any(m.programs_none, [f.program])):
        return None
    if (m.subcommands and not _any(m.subcommands, [f.sub])) or (m.subcommands_none and _any(m.subcommands_none,
                                                                                            [f.sub])):
        return None
    if m.actions and not _any(m.actions, f.operands[:1]):
        return None
    if (m.values_any and not _any(m.values_any, f.values)) or (m.values_none and _any(m.values_none, f.values)):
        return None
    hit = f.signals.intersection(m.signals)
    if (m.signals and not hit) or (m.signals_none and f.signals.intersection(m.signals_none)):
        return None
    if (m.flags_any and not _any(m.flags_any, f.flags)) or (m.flags_none and _any(m.flags_none, f.flags)):
        return None
    if (m.args_any and not _any(m.args_any, f.operands)) or (m.args_none and _any(m.args_none, f.operands)):
        return None
    if m.verbs or m.verbs_none:
        verbs = f.verbs
        if (m.verbs and not _any(m.verbs, verbs)) or (m.verbs_none and _any(m.verbs_none, verbs)):
            return None
    detail = next((f.notes[s] for s in sorted(hit) if s in f.notes), "")
    if m.queries:
        hits = [q for q in f.queries if any(re.search(r, _SQL_NOISE.sub(" ", q), re.I) for r in m.queries)]
        if not hits:
            return None
        detail = "query: " + " ".join(hits[0].split())[:120]
    if (m.exec_download and not f.exec_download) or (m.download_exec and not f.download_exec):
        return None
    if m.effects:
        for e in f.effects:
            if e.op in m.effects and (not m.where or e.where in m.where) and (
                    m.recursive is None or e.recursive == m.recursive) and (not m.paths or _any(m.paths, [e.path])):
                return e.path
        return None
    return detail


@dataclass(frozen=True)
class Pattern:
    """A guard.allow/guard.deny entry: `glob`, `re:regex`, or either scoped to a tool: `Write(/srv/www/*)`."""

    source: str
    tool: str | None  # None: Bash commands
    regex: re.Pattern[str] | None
    glob: str

    def matches(self, tool: str, subject: str) -> bool:
        if (self.tool or "Bash") != tool and not (self.tool == "Edit" and tool in FILE_TOOLS):
            return False
        return bool(self.regex.search(subject)) if self.regex is not None else fnmatchcase(subject, self.glob)


_SCOPED = re.compile(r"([A-Za-z]+)\((.*)\)", re.S)


def compile_pattern(text: str) -> Pattern:
    """Raises ValueError for an empty pattern or a bad regex."""
    tool, body = None, text.strip()
    if m := _SCOPED.fullmatch(body):
        tool, body = m.group(1), m.group(2).strip()
    if not body:
        raise ValueError(f"empty guard pattern {text!r}")
    if body.startswith("re:"):
        try:
            return Pattern(text, tool, re.compile(body[3:]), "")
        except re.error as exc:
            raise ValueError(f"bad regex in guard pattern {text!r}: {exc}") from None
    return Pattern(text, tool, None, body)


@dataclass(frozen=True)
class RuleSet:
    rules: tuple[Rule, ...]
    allow: tuple[Pattern, ...]
    deny: tuple[Pattern, ...]
    def for_program(self, program: str) -> tuple[Rule, ...]:
        """The rules (each with only its matches) that can fire on a command running `program`: most matches name
        their programs, so a decision looks at a few dozen matches, not every one."""
        index = _BUILTIN_INDEX if self.rules is BUILTIN_RULES else _Index(self.rules)
        return index.lookup(program)


class _Index:
    """The matches of a rule set by the program they name: exact names, globs, and matches naming none."""

    def __init__(self, rules: tuple[Rule, ...]) -> None:
        self.rules = rules
        self.exact: dict[str, list[tuple[int, int]]] = {}
        self.wild: list[tuple[str, int, int]] = []
        self.generic: list[tuple[int, int]] = []
        self.cache: dict[str, tuple[Rule, ...]] = {}
        for i, rule in enumerate(rules):
            for j, m in enumerate(rule.matches):
                if not m.programs:
                    self.generic.append((i, j))
                for glob in m.programs:
                    if any(c in glob for c in "*?["):
                        self.wild.append((glob, i, j))
                    else:
                        self.exact.setdefault(glob, []).append((i, j))

    def lookup(self, program: str) -> tuple[Rule, ...]:
        found = self.cache.get(program)
        if found is None:
            found = self.build(program)
            if len(self.cache) < 4096:  # the programs of one process's decisions; bounded all the same
                self.cache[program] = found
        return found

    def build(self, program: str) -> tuple[Rule, ...]:
        hits = sorted({*self.exact.get(program, ()), *self.generic,
                       *((i, j) for glob, i, j in self.wild if fnmatchcase(program, glob))})
        out: list[Rule] = []
        for i, j in hits:
            rule = self.rules[i]
            if out and out[-1].id == rule.id:
                out[-1] = Rule(rule.id, rule.description, (*out[-1].matches, rule.matches[j]))
            else:
                out.append(Rule(rule.id, rule.description, (rule.matches[j],)))
        return tuple(out)


_BUILTIN_INDEX = _Index(BUILTIN_RULES)


def load_rules(extra_allow: list[str], extra_deny: list[str]) -> RuleSet:
    """The built-in rules plus the config's patterns. Raises ValueError naming every bad pattern."""
    errors: list[str] = []
    compiled: list[list[Pattern]] = [[], []]
    for out, texts in zip(compiled, (extra_allow, extra_deny), strict=True):
        for text in texts:
            try:
                out.append(compile_pattern(text))
            except ValueError as exc:
                errors.append(str(exc))
    if errors:
        raise ValueError("; ".join(errors))
    return RuleSet(BUILTIN_RULES, tuple(compiled[0]), tuple(compiled[1]))
