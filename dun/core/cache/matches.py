"""Glob matches of one file listing, remembered across runs: what a glob list matched in a listing is a function of
that listing's bytes, the glob list and the matcher (dun's and pathspec's versions, Python's) alone, so while the
listing git prints is the same (`Listing.key`: its BLAKE2b digest), the paths are read back instead of matched again.

One entry per repository, for the latest listing only (a listing that changes starts afresh). Matching `**/*.py`
against a 50,000-file listing costs about 5 ms of CPU; digesting the listing 1.7 ms, reading the paths back a
fraction of one. `--no-cache` reads nothing back and stores what it found; `DUN_NO_CACHE=1` neither reads nor stores
(`matcher_version` is None then, as for the glob regexes).
"""

from __future__ import annotations

import os
import threading

from dun.core.cache.file import CacheFile
from dun.core.cachedir import cache_dir_path

MAX_GLOB_LISTS = 256  # glob lists come from manifests and config: a few dozen; beyond this nothing more is kept


class MatchMemo:
    """The matches of glob lists in the listing whose key (`Listing.key` plus `matcher_version`) is `key`."""

    def __init__(self, root: str, key: str, read: bool = True) -> None:
        self.key = key
        self.file = CacheFile(os.path.join(cache_dir_path(root), "matches.marshal"), "matches")
        self._stored: dict[tuple[str, ...], str] = {}
        self._new: dict[tuple[str, ...], str] = {}
        self._lock = threading.Lock()
        loaded = self.file.load() if read else None
        if isinstance(loaded, tuple) and len(loaded) == 2 and loaded[0] == key and isinstance(loaded[1], dict):
            self._stored = loaded[1]

    def get(self, patterns: tuple[str, ...]) -> list[str] | None:
        """The paths the glob list matched in this listing, in listing order; None when not known."""
        joined = self._stored.get(patterns)
        if not isinstance(joined, str):  # not stored, or stored by a hand in another shape: matched afresh
            return None
        return joined.split("\0") if joined else []

    def put(self, patterns: tuple[str, ...], matched: list[str]) -> None:
        with self._lock:
            if len(self._stored) + len(self._new) < MAX_GLOB_LISTS:
                self._new[patterns] = "\0".join(matched)

    def save(self) -> None:
        """Write what this run matched afresh (nothing when every glob list was read back)."""
        with self._lock:
            if not self._new:
                return
            self._stored = {**self._stored, **self._new}
            self._new = {}
            entries = self._stored
        self.file.store((self.key, entries))
