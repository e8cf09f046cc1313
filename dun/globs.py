"""Gitignore-style globs (recursive `**`, `!` negation) through pathspec."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import lru_cache
from typing import Any


@lru_cache(maxsize=256)
def _spec(patterns: tuple[str, ...]) -> Any:
    import pathspec

    return pathspec.GitIgnoreSpec.from_lines(patterns)


def gitignore_spec(lines: Iterable[str]) -> Any:
    return _spec(tuple(lines))


def match_files(files: Sequence[str], patterns: Sequence[str]) -> list[str]:
    """Files matching any pattern, in input order. A pattern without '/' matches at any depth, as in git."""
    if not patterns:
        return []
    spec = _spec(tuple(patterns))
    return [f for f in files if spec.match_file(f)]


def is_literal(pattern: str) -> bool:
    return not any(ch in pattern for ch in "*?[!")
