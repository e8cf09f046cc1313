"""Gitignore-style globs (recursive `**`, `!` negation) through pathspec."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from functools import lru_cache
from typing import Any

_GLOB_CHARS = re.compile(r"[*?\[\\]")


@lru_cache(maxsize=256)
def _spec(patterns: tuple[str, ...]) -> Any:
    import pathspec

    return pathspec.GitIgnoreSpec.from_lines(patterns)


def gitignore_spec(lines: Iterable[str]) -> Any:
    return _spec(tuple(lines))


def _necessary(pattern: str) -> tuple[str, str] | None:
    """(prefix, suffix) every path matching `pattern` must have; None when nothing cheap is implied.

    pathspec tests each path against a regex; on 50,000 files a plain string test first saves most of that.
    """
    pat = pattern.strip()
    if not pat or pat.startswith("#") or "\\" in pat:
        return None
    anchored = "/" in pat.rstrip("/")
    pat = pat.lstrip("/")
    prefix = ""
    if anchored:
        head = _GLOB_CHARS.split(pat, maxsplit=1)[0]
        prefix = head[: head.rfind("/") + 1]
    last = pat.rsplit("/", 1)[-1]
    suffix = ""
    if last.startswith("*.") and not _GLOB_CHARS.search(last[1:]):
        suffix = last[1:]
    return prefix, suffix


@lru_cache(maxsize=256)
def _prefilter(patterns: tuple[str, ...]) -> tuple[tuple[str, str], ...] | None:
    needs = []
    for pattern in patterns:
        if pattern.startswith("!"):
            continue  # exclusions only remove paths
        need = _necessary(pattern)
        if need is None:
            return None
        needs.append(need)
    return tuple(needs)


def match_files(files: Sequence[str], patterns: Sequence[str]) -> list[str]:
    """Files matching any pattern, in input order. A pattern without '/' matches at any depth, as in git."""
    if not patterns:
        return []
    key = tuple(patterns)
    spec = _spec(key)
    needs = _prefilter(key)
    if needs is not None:
        # `*.ext` also matches a directory named so, and then every file beneath it
        files = [f for f in files if any(f.startswith(p) and (f.endswith(s) or s + "/" in f) for p, s in needs)]
    fast = _include_regex(key)
    if fast is not None:
        match = fast.match
        return [f for f in files if match(f)]
    return [f for f in files if spec.match_file(f)]


_NAMED_GROUP = re.compile(r"\(\?P<[A-Za-z_]\w*>")


@lru_cache(maxsize=256)
def _include_regex(patterns: tuple[str, ...]) -> re.Pattern[str] | None:
    """With no `!` exclusions a path matches when any pattern does: pathspec's own regexes, joined into one
    alternation (their named groups made plain, since names may not repeat), decide with one match per path."""
    compiled = [p for p in _spec(patterns).patterns if p.include is not None]
    if not compiled or any(not p.include or not isinstance(p.regex, re.Pattern) for p in compiled):
        return None
    sources = [_NAMED_GROUP.sub("(?:", p.regex.pattern) for p in compiled]
    flags = {p.regex.flags for p in compiled}
    if len(flags) != 1:
        return None
    try:
        return re.compile("|".join(f"(?:{src})" for src in sources), flags.pop())
    except re.error:
        return None


def pattern_error(pattern: str) -> str | None:
    """Why pathspec refuses a glob, or None when it is valid."""
    import pathspec

    try:
        pathspec.GitIgnoreSpec.from_lines([pattern])
    except Exception as exc:  # pathspec raises its own error types, varying by version
        return f"invalid glob {pattern!r}: {exc}"
    if pattern.strip() in ("!", ""):
        return f"invalid glob {pattern!r}: matches nothing"
    return None


def glob_errors(options: dict[str, Any], *keys: str) -> list[tuple[str, str]]:
    """Validation errors for the glob lists under `keys`, for check types' `validate` functions."""
    out = []
    for key in keys:
        for pattern in options.get(key) or []:
            problem = pattern_error(pattern)
            if problem:
                out.append((key, problem))
    return out


def is_literal(pattern: str) -> bool:
    return not any(ch in pattern for ch in "*?[!")
