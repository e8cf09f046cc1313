"""`dun guard`: a Claude Code PreToolUse hook that denies irreversible or out-of-bounds tool calls.

shell.py/lexer.py parse the command, walk.py follows it (cd, variables, sh -c, $(...), pipes), effects.py says what
each simple command does, rules.py holds the rules as data, engine.py decides, hook.py speaks the hook protocol.
"""

from __future__ import annotations

from dun.guard.engine import Verdict, decide
from dun.guard.hook import main, run_guard
from dun.guard.rules import BUILTIN_RULES, RuleSet, load_rules

__all__ = ["BUILTIN_RULES", "RuleSet", "Verdict", "decide", "load_rules", "main", "run_guard"]
