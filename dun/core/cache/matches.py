"""Glob matches of one file listing, remembered across runs: what a glob list matches in a listing is a function of
that listing's bytes, the glob list and the matcher (dun's and pathspec's versions, Python's) alone, so while the
listing is the same the paths are read back instead of matched again.

A memo is found by either of two keys. The listing's own BLAKE2b digest (`Listing.key`: the bytes `git ls-files`
printed, the untracked files, the order) needs the listing. The index's key (`index_key`) needs no git process at
all: git ends its index file with a checksum of everything before it, so the same checksum, with the same untracked
files and unmerged state from the run's `git status`, is the same listing. An index key is stored only when it is
confirmed: the index file looked the same (checksum, inode, size, mtime, ctime) just before `git ls-files` started
and after it ended (`Snapshot.files`), so the listing read is the index the key names. A run on an unchanged index
then starts no `git ls-files` (9 ms of git's CPU on a 50,000-file repository) and matches nothing (5-10 ms).

One memo per repository, for the latest listing only. `--no-cache` reads nothing back and stores what it found;
`DUN_NO_CACHE=1` neither reads nor stores (`matcher_version` is None then, as for the glob regexes). An index
without a checksum (`index.skipHash`), another index file (`GIT_INDEX_FILE`, `GIT_DIR`) or a `.git` that is not a
directory has no index key: the listing's digest still serves.
"""

from __future__ import annotations

import os
import stat
import threading

from dun.core.cache.file import CacheFile
from dun.core.cachedir import cache_dir_path
from dun.core.digest import blake2b

MAX_GLOB_LISTS = 256  # glob lists come from manifests and config: a few dozen; beyond this nothing more is kept
# git's variables that name another index or repository than `<root>/.git/index`
_ELSEWHERE = ("GIT_DIR", "GIT_INDEX_FILE", "GIT_WORK_TREE", "GIT_COMMON_DIR")


def index_identity(root: str | os.PathLike[str]) -> bytes | None:
    """The checksum git wrote at the end of `<root>/.git/index` followed by the file's stamp (inode, size, mtime,
    ctime); None when there is none to trust (see the module's docstring)."""
    if any(name in os.environ for name in _ELSEWHERE):
        return None
    gitdir = os.path.join(root, ".git")
    try:
        if not stat.S_ISDIR(os.lstat(gitdir).st_mode):
            return None
        fd = os.open(os.path.join(gitdir, "index"), os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size < 64:
            return None
        tail = os.pread(fd, 32, st.st_size - 32)  # SHA-1's 20 bytes, or SHA-256's 32
    except OSError:
        return None
    finally:
        os.close(fd)
    if len(tail) != 32 or tail[-20:] == bytes(20):  # index.skipHash writes no checksum
        return None
    return tail + f"\0{st.st_ino},{st.st_size},{st.st_mtime_ns},{st.st_ctime_ns}".encode()


def index_key(identity: bytes, untracked: list[str], unmerged: bool) -> str:
    """The memo key of the listing an index with this checksum gives, with these untracked files."""
    digest = blake2b(identity[:32])
    digest.update(b"\0\0" + "\0".join(untracked).encode("utf-8", "surrogateescape"))
    digest.update(b"\0\1" if unmerged else b"\0\2")
    return "index:" + digest.hexdigest()


class MatchMemo:
    """The matches of glob lists in one listing. Found at once when the stored memo is of the index `index`
    (`valid`); otherwise only once the listing was read (`attach`)."""

    def __init__(self, root: str, version: str, index: str | None, read: bool = True) -> None:
        self.version = version
        self.file = CacheFile(os.path.join(cache_dir_path(root), "matches.marshal"), "matches")
        self._lock = threading.Lock()
        self._loaded: tuple[str, str | None, dict[tuple[str, ...], str]] | None = None
        loaded = self.file.load() if read else None
        if (isinstance(loaded, tuple) and len(loaded) == 3 and isinstance(loaded[0], str)
                and isinstance(loaded[1], str | None) and isinstance(loaded[2], dict)):
            self._loaded = loaded
        self._listing: str | None = None  # the listing's key this memo is of, once known
        self._index: str | None = None  # the index key confirmed for it
        self._stored: dict[tuple[str, ...], str] = {}
        self._new: dict[tuple[str, ...], str] = {}
        self.valid = False
        if self._loaded is not None and index is not None and self._loaded[1] == self._versioned(index):
            self._listing, self._index, self._stored = self._loaded
            self.valid = True

    def _versioned(self, key: str) -> str:
        return f"{key}\0{self.version}"

    def attach(self, listing: str, index: str | None) -> None:
        """The listing was read: its key (`Listing.key`, hex) and the index key confirmed to name it, if any. What
        was stored for another listing is dropped."""
        listing, confirmed = self._versioned(listing), self._versioned(index) if index is not None else None
        with self._lock:
            if self.valid and self._listing == listing:
                self._index = self._index or confirmed
                return
            self._new = {}  # matched in another listing than this one (the index moved between two looks)
            self._stored = {}
            if self._loaded is not None and self._loaded[0] == listing:
                self._stored = self._loaded[2]
            self._listing, self._index = listing, confirmed
            self.valid = True

    def get(self, patterns: tuple[str, ...]) -> list[str] | None:
        """The paths the glob list matched in this listing, in listing order; None when not known."""
        with self._lock:
            joined = self._new.get(patterns, self._stored.get(patterns)) if self.valid else None
        if not isinstance(joined, str):  # not stored, or stored by a hand in another shape: matched afresh
            return None
        return joined.split("\0") if joined else []

    def put(self, patterns: tuple[str, ...], matched: list[str]) -> None:
        with self._lock:
            if self.valid and len(self._stored) + len(self._new) < MAX_GLOB_LISTS:
                self._new[patterns] = "\0".join(matched)

    def save(self) -> None:
        """Write what this run matched afresh, or an index key newly confirmed for the stored matches."""
        with self._lock:
            if self._listing is None:
                return
            if not self._new and self._loaded is not None and self._loaded[:2] == (self._listing, self._index):
                return
            entries = {**self._stored, **self._new}
            payload = (self._listing, self._index, entries)
            self._stored, self._new, self._loaded = entries, {}, payload
        self.file.store(payload)
