"""Command corpora grouped by class, and the guard's denial rate per class.

A corpus file holds one Bash command per line; `⏎` stands for a newline (here-documents). A line `## NAME: text`
starts a class; other lines starting with `#` are comments. The dangerous and everyday corpora of the test suite use
this format, and so can a user who wants to measure the guard (with their `guard.allow`/`guard.deny`) on their own
commands: bench/guard_corpus.py prints the table.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from dun.guard.engine import Verdict, decide
from dun.guard.rules import RuleSet, load_rules

NEWLINE = "⏎"
ROOT = Path("/work/repo")  # the corpus convention: the hook runs in the repository root ...
HOME = "/home/dev"  # ... and HOME is this


@dataclass(frozen=True)
class CorpusClass:
    name: str
    description: str
    commands: tuple[str, ...]


@dataclass
class ClassRate:
    name: str
    total: int = 0
    denied: int = 0
    allowed: list[str] = field(default_factory=list)
    denials: list[tuple[str, str]] = field(default_factory=list)  # (command, reason)

    @property
    def rate(self) -> float:
        return self.denied / self.total if self.total else 0.0


def parse_corpus(text: str, source: str = "corpus") -> list[CorpusClass]:
    """Raises ValueError for a command before the first class header or a class without commands."""
    classes: list[tuple[str, str, list[str]]] = []
    for number, line in enumerate(text.splitlines(), 1):
        if line.startswith("## "):
            name, _, description = line[3:].partition(":")
            classes.append((name.strip(), description.strip(), []))
        elif line.startswith("#") or not line.strip():
            continue
        elif not classes:
            raise ValueError(f"{source}:{number}: a command before the first `## CLASS:` header")
        else:
            classes[-1][2].append(line.replace(NEWLINE, "\n"))
    empty = [name for name, _, commands in classes if not commands]
    if empty:
        raise ValueError(f"{source}: classes without commands: {', '.join(empty)}")
    return [CorpusClass(name, description, tuple(commands)) for name, description, commands in classes]


def read_corpus(path: Path) -> list[CorpusClass]:
    return parse_corpus(path.read_text(encoding="utf-8"), str(path))


@contextmanager
def corpus_environment(home: str = HOME) -> Iterator[None]:
    """Only HOME (fixed) and PATH in the environment while deciding, so the rates do not depend on the machine: the
    guard reads unknown variables ($DIR) from its environment."""
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update({"HOME": home, "PATH": saved.get("PATH", "/usr/bin:/bin")})
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


def decide_bash(command: str, rules: RuleSet | None = None, root: Path = ROOT) -> Verdict:
    event = {"hook_event_name": "PreToolUse", "tool_name": "Bash", "cwd": str(root),
             "tool_input": {"command": command, "description": "corpus"}}
    return decide(event, root, rules if rules is not None else load_rules([], []))


def measure(classes: list[CorpusClass], decider: Callable[[str], Verdict] = decide_bash) -> list[ClassRate]:
    rates = []
    for cls in classes:
        rate = ClassRate(cls.name)
        for command in cls.commands:
            verdict = decider(command)
            rate.total += 1
            if verdict.decision == "deny":
                rate.denied += 1
                rate.denials.append((command, verdict.reason or ""))
            else:
                rate.allowed.append(command)
        rates.append(rate)
    return rates


def total(rates: list[ClassRate]) -> ClassRate:
    out = ClassRate("total")
    for rate in rates:
        out.total += rate.total
        out.denied += rate.denied
        out.allowed += rate.allowed
        out.denials += rate.denials
    return out


def table(title: str, rates: list[ClassRate]) -> list[str]:
    rows = [*rates, total(rates)]
    width = max(len(r.name) for r in rows)
    lines = [f"{title}", f"  {'class'.ljust(width)}  denied   total    rate"]
    for r in rows:
        lines.append(f"  {r.name.ljust(width)}  {r.denied:6d}  {r.total:6d}  {r.rate:6.1%}")
    return lines
