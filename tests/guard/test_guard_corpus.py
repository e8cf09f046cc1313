"""The corpora: every dangerous command is denied, and at most 2% of everyday commands are (the exact numbers are
pinned so a change in either direction is noticed). Run with -s to see the rates and any false positives."""

from __future__ import annotations

import pytest
from guard_support import bash, corpus, fixed_home

DANGEROUS = corpus("dangerous.txt")
EVERYDAY = corpus("everyday.txt")
EXPECTED_FALSE_POSITIVES = 0  # the everyday commands the guard denies today; must stay <= 2%


@pytest.fixture(autouse=True)
def _home(monkeypatch: pytest.MonkeyPatch) -> None:
    fixed_home(monkeypatch)


def test_corpora_are_large_and_free_of_duplicates() -> None:
    assert len(DANGEROUS) >= 200
    assert len(EVERYDAY) >= 200
    assert len(set(DANGEROUS)) == len(DANGEROUS)
    assert len(set(EVERYDAY)) == len(EVERYDAY)
    assert not set(DANGEROUS) & set(EVERYDAY)


def test_every_dangerous_command_is_denied() -> None:
    missed = [c for c in DANGEROUS if bash(c).decision != "deny"]
    denied = len(DANGEROUS) - len(missed)
    print(f"\ndangerous: {denied}/{len(DANGEROUS)} denied ({denied / len(DANGEROUS):.1%})")
    for command in missed:
        print(f"MISSED: {command!r}")
    assert missed == []


def test_every_dangerous_denial_names_a_rule_and_gives_one_line() -> None:
    for command in DANGEROUS:
        verdict = bash(command)
        assert verdict.rule and verdict.rule != "shell.unparseable", command
        assert verdict.reason and "\n" not in verdict.reason and verdict.rule in verdict.reason, command


def test_everyday_commands_are_allowed() -> None:
    false_positives = [(c, v.reason) for c in EVERYDAY if (v := bash(c)).decision == "deny"]
    rate = len(false_positives) / len(EVERYDAY)
    print(f"\neveryday: {len(false_positives)}/{len(EVERYDAY)} denied ({rate:.1%}, limit 2%)")
    for command, reason in false_positives:
        print(f"FALSE POSITIVE: {command!r} -> {reason}")
    assert rate <= 0.02
    assert len(false_positives) == EXPECTED_FALSE_POSITIVES


def test_dangerous_commands_denied_from_a_subdirectory_too() -> None:
    """The repo root is the git top level, not the cwd: from src/, `rm -rf ..` deletes the repository."""
    assert bash("rm -rf ..", cwd="/work/repo/src").rule == "fs.delete-repo"
    assert bash("rm -rf ../..", cwd="/work/repo/src").rule == "fs.delete-system"
    assert bash("rm -rf ../build", cwd="/work/repo/src").decision == "allow"
