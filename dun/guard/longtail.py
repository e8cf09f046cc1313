"""Facts about programs no rule names, read from what their command line says: whether it aims at production
(`--stage production`, `eb deploy acme-prod`, `mina production deploy`). The generic rules (rules_generic.py) pair
these with the verbs the command uses."""

from __future__ import annotations

import re

from dun.guard.effects import Facts
from dun.guard.expand import Val

_PROD = re.compile(r"(?:^|[-_/.:@])(?:prod|production|live)(?:$|[-_/.:])", re.I)
_PROD_FLAGS = frozenset({"--prod", "--production", "--promote", "--live"})


def prod_target(args: list[Val]) -> str | None:
    """The word that names production among the arguments, or None."""
    for arg in args:
        text = arg.text
        if text.startswith("-"):
            flag, eq, value = text.partition("=")
            if flag in _PROD_FLAGS or (eq and _PROD.search(value)):
                return text
        elif (_PROD.search(text) and "://" not in text[:12]) or re.match(r"https?://(?:prod|production|live)\.", text):
            return text
    return None


def mark(facts: Facts, args: list[Val]) -> None:
    """Raise the long tail's signals on these facts."""
    if target := prod_target(args):
        facts.signals.add("prod-target")
        facts.notes.setdefault("prod-target", target)
