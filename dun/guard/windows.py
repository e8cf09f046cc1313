"""Windows tools run from WSL, read with their own syntax (placeholder filled below)."""

from __future__ import annotations

from dun.guard.effects import Facts


def mark(facts: Facts, words: list[str]) -> list[str]:
    return []
