"""The corpora, grouped by class (family): every dangerous command is denied, in every class, and at most 1% of
the everyday ones (issue 22's targets; the held-out sets in heldout/ are measured, not asserted). Run with -s to see
the rates per class, what was missed and what was denied wrongly; bench/guard_corpus.py prints the same table."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from guard_support import HERE, bash

from dun.guard.corpus import ClassRate, corpus_environment, measure, read_corpus, table, total

DANGEROUS = read_corpus(HERE / "dangerous.txt")
EVERYDAY = read_corpus(HERE / "everyday.txt")
MIN_DENIED, MIN_DENIED_PER_CLASS, MAX_EVERYDAY_DENIED = 1.0, 1.0, 0.01


@pytest.fixture(autouse=True)
def _fixed_environment() -> Iterator[None]:
    with corpus_environment():
        yield


def test_corpora_are_large_grouped_and_free_of_duplicates() -> None:
    dangerous = [c for cls in DANGEROUS for c in cls.commands]
    everyday = [c for cls in EVERYDAY for c in cls.commands]
    assert len(dangerous) >= 2000 and len(everyday) >= 1500
    assert len(DANGEROUS) >= 10 and len(EVERYDAY) >= 8
    assert len(set(dangerous)) == len(dangerous) and len(set(everyday)) == len(everyday)
    assert not set(dangerous) & set(everyday)
    assert all(cls.description for cls in DANGEROUS + EVERYDAY)


def test_dangerous_commands_are_denied_in_every_class() -> None:
    rates = measure(DANGEROUS)
    print("\n" + "\n".join(table("dangerous", rates)))
    for rate in rates:
        for command in rate.allowed:
            print(f"MISSED [{rate.name}]: {command!r}")
    assert total(rates).rate >= MIN_DENIED
    assert [r.name for r in rates if r.rate < MIN_DENIED_PER_CLASS] == []


def test_every_dangerous_denial_names_a_rule_and_gives_one_line() -> None:
    for command in (c for cls in DANGEROUS for c in cls.commands):
        verdict = bash(command)
        if verdict.decision == "deny":
            assert verdict.rule and verdict.rule != "shell.unparseable", command
            assert verdict.reason and "\n" not in verdict.reason and verdict.rule in verdict.reason, command


def test_everyday_commands_are_allowed() -> None:
    rates: list[ClassRate] = measure(EVERYDAY)
    print("\n" + "\n".join(table("everyday", rates)))
    for rate in rates:
        for command, reason in rate.denials:
            print(f"FALSE POSITIVE [{rate.name}]: {command!r} -> {reason}")
    assert total(rates).rate <= MAX_EVERYDAY_DENIED


def test_dangerous_commands_denied_from_a_subdirectory_too() -> None:
    """The repo root is the git top level, not the cwd: from src/, `rm -rf ..` deletes the repository."""
    assert bash("rm -rf ..", cwd="/work/repo/src").rule == "fs.delete-repo"
    assert bash("rm -rf ../..", cwd="/work/repo/src").rule == "fs.delete-system"
    assert bash("rm -rf ../build", cwd="/work/repo/src").decision == "allow"


def test_held_out_sets_come_in_pairs_and_parse() -> None:
    """bench/guard_corpus.py --heldout reads every pair; the sets are measured there, never asserted on."""
    dangerous = sorted((HERE / "heldout").glob("dangerous-*.txt"))
    assert len(dangerous) >= 3
    for path in dangerous:
        assert read_corpus(path) and read_corpus(path.with_name(path.name.replace("dangerous", "everyday")))
