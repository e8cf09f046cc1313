"""The posture's rule (posture.py raises its signal): a call that changes state somewhere other than this machine,
whose target is neither local nor made by the same command."""

from __future__ import annotations

from dun.guard.ruletypes import Match, Rule

POSTURE_RULES: tuple[Rule, ...] = (
    Rule("remote.posture", "changes state off this machine, on nothing this command made; dry-run or plan it, aim it "
         "at localhost or an emulator, or leave it to the operator",
         (Match(signals=("posture",)),)),
)
