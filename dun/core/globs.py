"""Gitignore-style globs (recursive `**`, `!` negation) through pathspec, with the shortcuts that make matching a
50,000-file listing cheap: a literal prefix found as one run of git's sorted index, a literal suffix found by
substring search, neither splitting the rest of the listing (`Listing`), and pathspec's regexes joined into one and
kept on disk, so that a run whose globs were all seen before never imports pathspec (about 10 ms)."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from functools import lru_cache
from typing import Any

_GLOB_CHARS = re.compile(r"[*?\[\\]")


class Listing:
    """A file listing kept as git printed it: the index's paths NUL-separated, then the untracked files. Splitting
    50,000 paths into strings costs more than matching them, so only what a glob's literal prefix (one contiguous
    run of the sorted index) or literal suffix (one substring search each) admits is split; `paths()` splits all.

    `text` is every tracked path followed by a NUL; `in_order` says it is sorted with no path twice (git sorts the
    index bytewise: str's order for ASCII; unmerged paths appear once per stage)."""

    def __init__(self, text: str, untracked: list[str], in_order: bool, source: bytes | None = None,
                 index: str | None = None) -> None:
        self.text = text
        self.untracked = untracked
        self.in_order = in_order
        self.index = index  # the key of the index file git read it from, when confirmed (dun/core/cache/matches.py)
        self._source = source  # the bytes git printed, for `key`
        self._key: bytes | None = None
        self._paths: list[str] | None = None
        self._dirs: dict[str, bool] = {}

    def key(self) -> bytes | None:
        """A digest of everything that decides what a glob matches here (the index as git printed it, the untracked
        files, the order), for remembering matches across runs (dun/core/cache/matches.py); None without the bytes
        git printed."""
        if self._key is None and self._source is not None:
            from dun.core.digest import blake2b

            digest = blake2b(self._source)
            digest.update(b"\0\0" + "\0".join(self.untracked).encode("utf-8", "surrogateescape"))
            digest.update(b"\0\1" if self.in_order else b"\0\2")
            self._key = bytes(digest.digest())
        return self._key

    def paths(self) -> list[str]:
        """Every path: tracked ones in the index's order (each once), then untracked ones."""
        if self._paths is None:
            tracked = self.text.split("\0")
            tracked.pop()  # after the last NUL
            if not self.in_order:
                tracked = list(dict.fromkeys(tracked))
            self._paths = tracked + self.untracked
        return self._paths

    def candidates(self, needs: tuple[tuple[str, str], ...]) -> list[str]:
        """A superset of the paths that can match globs with these needs (see `_candidates`), in listing order."""
        prefixes = {p for p, _ in needs}
        suffixes = tuple({s for _, s in needs})
        if not self.in_order or ("" in suffixes and "" in prefixes):
            return _candidates(self.paths(), needs)  # nothing cheap to go by
        tail = _candidates(self.untracked, needs) if self.untracked else []
        if "" not in prefixes:
            return _candidates(self._starting(prefixes), needs) + tail
        if any(self._names_directory(s) for s in suffixes):
            return _candidates(self.paths(), needs)  # `*.py` also matches what is under a directory `x.py/`
        return self._ending(suffixes) + tail

    def _names_directory(self, suffix: str) -> bool:
        """Whether some tracked path has a directory ending with `suffix` (one search of the text per suffix)."""
        if suffix not in self._dirs:
            self._dirs[suffix] = suffix + "/" in self.text
        return self._dirs[suffix]

    def _starting(self, prefixes: set[str]) -> list[str]:
        """Tracked paths with any of `prefixes`: in the sorted index each prefix is one contiguous run."""
        text = "\0" + self.text
        spans = []
        for prefix in prefixes:
            first = text.find("\0" + prefix)
            if first >= 0:
                last = text.rfind("\0" + prefix)
                spans.append((first + 1, text.index("\0", last + 1)))
        out: list[str] = []
        end = -1
        for lo, hi in sorted(spans):  # a prefix inside another's run (`a/` and `a/b/`) is not split twice
            lo = max(lo, end + 1)
            if lo < hi:
                out += text[lo:hi].split("\0")
                end = hi
        return out

    def _ending(self, suffixes: tuple[str, ...]) -> list[str]:
        """Tracked paths ending with any of `suffixes`: one search per occurrence, no split of the rest."""
        text = self.text
        found: list[tuple[int, str]] = []
        for suffix in suffixes:
            needle = suffix + "\0"
            find, rfind = text.find, text.rfind
            at = find(needle)
            while at >= 0:
                end = at + len(suffix)
                found.append((end, text[rfind("\0", 0, at) + 1:end]))
                at = find(needle, end + 1)
        if len(suffixes) > 1:
            found = sorted(dict(found).items())  # listing order, each path once
        return [path for _, path in found]


@lru_cache(maxsize=256)
def _spec(patterns: tuple[str, ...]) -> Any:
    import pathspec

    return pathspec.GitIgnoreSpec.from_lines(patterns)


def gitignore_spec(lines: Iterable[str]) -> Any:
    return _spec(tuple(lines))


def _necessary(pattern: str) -> tuple[str, str] | None:
    """(prefix, suffix) every path matching `pattern` must have; None when nothing cheap is implied."""
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


def _candidates(files: Sequence[str], needs: tuple[tuple[str, str], ...]) -> list[str]:
    """A superset of the files that can match (the regex decides): those with some need's prefix and some need's
    suffix, or with a directory named by a suffix (`*.ext` also matches a directory named so, and then every file
    beneath it)."""
    prefixes = tuple({p for p, _ in needs})
    suffixes = tuple({s for _, s in needs})
    pool = [f for f in files if f.startswith(prefixes)]
    named = [s + "/" for s in suffixes if s]
    haystack = "\0".join(pool) if named and pool else ""
    dirs = tuple(d for d in named if d in haystack)
    if dirs:
        return [f for f in pool if f.endswith(suffixes) or any(d in f for d in dirs)]
    return [f for f in pool if f.endswith(suffixes)]


def match_files(files: Sequence[str] | Listing, patterns: Sequence[str]) -> list[str]:
    """Files matching any pattern, in input order. A pattern without '/' matches at any depth, as in git."""
    if not patterns:
        return []
    key = tuple(patterns)
    needs = _prefilter(key)
    if isinstance(files, Listing):
        pool = files.candidates(needs) if needs is not None else files.paths()
    else:
        pool = _candidates(files, needs) if needs is not None else list(files)
    fast = _include_regex(key)
    if fast is not None:
        match = fast.match
        return [f for f in pool if match(f)]
    spec = _spec(key)
    return [f for f in pool if spec.match_file(f)]


_NAMED_GROUP = re.compile(r"\(\?P<[A-Za-z_]\w*>")


@lru_cache(maxsize=256)
def _include_regex(patterns: tuple[str, ...]) -> re.Pattern[str] | None:
    """With no `!` exclusions a path matches when any pattern does: pathspec's own regexes, joined into one
    alternation (their named groups made plain, since names may not repeat), decide with one match per path.
    The joined source is kept on disk (`_RegexStore`), so pathspec is imported only for globs never seen."""
    if any(p.startswith("!") for p in patterns):
        return None
    source = _STORE.get(patterns)
    if source is None:
        source = _join(patterns)
        _STORE.put(patterns, source)
    if not source:
        return None
    try:
        return re.compile(source[0], source[1])
    except re.error:
        return None


def _join(patterns: tuple[str, ...]) -> tuple[str, int] | tuple[()]:
    """(source, flags) of the joined regex, or () when pathspec must decide path by path."""
    compiled = [p for p in _spec(patterns).patterns if p.include is not None]
    if not compiled or any(not p.include or not isinstance(p.regex, re.Pattern) for p in compiled):
        return ()
    flags = {p.regex.flags for p in compiled}
    if len(flags) != 1:
        return ()
    sources = [_NAMED_GROUP.sub("(?:", p.regex.pattern) for p in compiled]
    return "|".join(f"(?:{src})" for src in sources), flags.pop()


class _RegexStore:
    """Joined regex sources by glob list, in the cache directory, keyed by dun's version and pathspec's installed
    files (an upgrade of either starts afresh): a memo of a pure function of its whole key, so only `DUN_NO_CACHE`
    turns it off. Read once per process."""

    def __init__(self) -> None:
        self._entries: dict[tuple[str, ...], object] | None = None
        self._file: Any = None

    def _path(self) -> str | None:
        import sys

        from dun import __version__
        from dun.core.cache import env_disabled, stamp
        from dun.core.cachedir import cache_base_path

        if env_disabled():
            return None
        # pathspec's own file, found as the import system would find a regular package (importlib.util costs 3 ms)
        for entry in sys.path:
            look = stamp(os.path.join(entry or ".", "pathspec", "__init__.py"))
            if look is not None:
                return os.path.join(cache_base_path(), f"globs-{__version__}-{look[1]}-{look[3]}.marshal")
        return None  # installed some other way (a zip): no store, pathspec decides

    def _load(self) -> dict[tuple[str, ...], object]:
        if self._entries is None:
            from dun.core.cache.file import CacheFile

            path = self._path()
            self._file = CacheFile(path, "globs") if path is not None else None
            loaded = self._file.load() if self._file is not None else None
            self._entries = loaded if isinstance(loaded, dict) else {}
        return self._entries

    def get(self, patterns: tuple[str, ...]) -> Any:
        found = self._load().get(patterns)
        # a stored source is (str, int) or (): anything else is a miss, decided afresh
        if found == () or (isinstance(found, tuple) and len(found) == 2 and isinstance(found[0], str)
                           and isinstance(found[1], int)):
            return found
        return None

    def put(self, patterns: tuple[str, ...], source: object) -> None:
        """Remember a new glob list's regex, written at once: new glob lists are rare (a manifest was edited)."""
        entries = self._load()
        if self._file is None or len(entries) >= 4096:  # bounded: globs written by hand are few
            return
        entries[patterns] = source
        self._file.store(entries)  # a read-only or full cache directory only costs pathspec's import next time


_STORE = _RegexStore()


@lru_cache(maxsize=1)
def matcher_version() -> str | None:
    """What decides how a glob list matches besides the listing: dun's version, pathspec's installed file (as
    `_RegexStore` keys them) and Python's; None where pathspec's file is not found (nothing is remembered then)."""
    import sys

    path = _STORE._path()
    return None if path is None else f"{os.path.basename(path)}\0{sys.version}"


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
