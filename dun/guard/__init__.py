"""`dun guard`: a Claude Code PreToolUse hook that denies irreversible or out-of-bounds tool calls.

shell.py/lexer.py parse the command, walk.py follows it (cd, variables, sh -c, $(...), pipes), names.py and
shellstate.py keep what the line defines, subcommands.py/gitread.py read options as their programs do, effects.py
says what each simple command does, marks.py/secrets.py what flows between commands (PIDs, secrets), runs.py and
tasks.py the code it runs, rules.py holds the rules as data, engine.py decides, hook.py speaks the hook protocol.
"""

from __future__ import annotations

from dun.guard.engine import Verdict, decide
from dun.guard.hook import main, run_guard
from dun.guard.rules import BUILTIN_RULES, RuleSet, load_rules

__all__ = ["BUILTIN_RULES", "RuleSet", "Verdict", "decide", "load_rules", "main", "run_guard"]
