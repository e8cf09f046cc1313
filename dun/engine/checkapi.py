"""What a check type is, what it is given when it runs, and the facade it uses to see the repository."""

from __future__ import annotations

import os
import subprocess
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dun.config.schema import Field
from dun.core.cache.matches import MatchMemo
from dun.core.globs import Listing
from dun.engine.model import Outcome

if TYPE_CHECKING:
    from dun.config.loader import Config
    from dun.core.cache.session import Caches
    from dun.core.snapshot import Early, Snapshot
    from dun.engine.launch import Launches


@dataclass
class CheckSpec:
    """A validated check definition from a manifest."""

    id: str
    plugin: str
    type: str
    priority: int
    plugin_priority: int
    timeout: float
    description: str = ""
    next: str | None = None
    after: list[str] = field(default_factory=list)
    options: dict[str, Any] = field(default_factory=dict)  # the type's own fields
    source: str = ""  # file:line where it is defined
    raw: dict[str, object] = field(default_factory=dict)  # the definition as written
    inputs: dict[str, object] | None = None  # what it reads beyond the work tree (`inputs:`, dun/engine/inputs.py)
    ttl: float | None = None  # seconds a result may be reused, at most
    flaky: bool = False  # a failure is run again rather than reused

    @property
    def sort_key(self) -> tuple[int, int, str]:
        return (self.plugin_priority, self.priority, self.id)


ValidateFn = Callable[[dict[str, object]], list[tuple[str, str]]]
InputsFn = Callable[["CheckSpec", "CheckContext"], list[str] | None]


@dataclass(frozen=True)
class CheckType:
    """A kind of check. `run` must not raise for expected failures; the engine turns crashes into `error`.

    `validate` receives the type's own fields after schema validation and returns (key, message) pairs
    for rules a schema cannot express (e.g. one field required only when another has a given value).

    `inputs` names the files a result depends on that the work tree's fingerprint may not cover (ignored files,
    paths named directly, relative to the root or absolute): a cached result is reused only while they are
    unchanged; None from it means they cannot be known, and the result is not reused. A type that is `opaque`
    (`command`: it may read anything) is reused only when the check declares its inputs (`inputs:`). `stamped`
    says a check reads the work tree only through the run's look and `FileCache` (which notes each stamp).
    """

    name: str
    description: str
    fields: Mapping[str, Field]
    run: Callable[[CheckSpec, CheckContext], Outcome]
    validate: ValidateFn | None = None
    inputs: InputsFn | None = None
    opaque: bool = False
    # whether the check reads the work tree only through the run's look and the per-file caches' stamps
    # (`Caches.reads`): then its result needs no second `git status` before it is stored
    stamped: Callable[[CheckSpec], bool] | None = None


class CheckContext:
    """Shared, read-only view of the repository for one `dun check` run. Safe to use from many threads.

    What a plugin uses: `root`, `is_git`, `config`, `files()` and `match()`. How dun itself looks at git for them
    (one `git status`, the index's listing, the view per-file caches trust) is `snapshot`, `listing` and
    `git_view` in this module: internals that may change in any release."""

    def __init__(self, root: Path, is_git: bool, config: Config | None = None,
                 confine: Callable[[list[str]], list[str]] | None = None, early: Early | None = None) -> None:
        self.root = root
        self.is_git = is_git
        self.config = config  # the command's config: `config.settings` typed, a plugin's own sections in `values`
        # in a loop with a sandbox: wraps every command a check starts, so the project's own code (conftest.py,
        # a Makefile, .venv/bin/python) that the agent could have changed runs confined like the agent
        self.confine = confine
        self._files: Listing | list[str] | None = None
        self._snapshot: Snapshot | None = None
        self._early = early  # git's look started as dun started (dun/entry.py), taken by the first snapshot
        self._matches: dict[tuple[str, ...], list[str]] = {}
        self._memo: MatchMemo | bool | None = None  # the listing's remembered matches; False: none for it
        self.used = False  # set once a report was built from this context
        self.caches: Caches | None = None  # the session's (dun/core/cache/session.py); per-file caches use it
        self.launches: Launches | None = None  # `dun check`'s commands started early (dun/engine/launch.py)
        self._lock = threading.Lock()

    def files(self) -> list[str]:
        """Tracked plus untracked-but-not-ignored files, repo-relative with '/' separators (listed once)."""
        found = listing(self)
        return found.paths() if isinstance(found, Listing) else found

    def refresh(self) -> None:
        """Forget the file listing: the next look sees the tree as it is now (a loop's later iterations)."""
        with self._lock:
            self._files = None
            self._snapshot = None
            self._matches = {}
            self._memo = None
        self.used = False

    def flush(self) -> None:
        """Store what this run matched afresh, for the next run on the same listing."""
        with self._lock:
            memo = self._memo
        if isinstance(memo, MatchMemo):
            memo.save()

    def prefetch(self, listing: bool = True) -> None:
        """Start git in the background: it walks the tree while plugins and manifests load. Without `listing`,
        only `git status` (enough when every result may be reused); the index is listed once a check needs it."""
        look = snapshot(self)
        if look is None or not listing or look.listing_started():
            return
        if look.status_done():  # the glob matches of an index seen before need no listing: none is started
            memo = self._match_memo()
            if memo is not None and memo.valid:
                return
        look.start_listing()

    def match(self, patterns: Sequence[str], existing: bool = True) -> list[str]:
        """Files matching gitignore-style patterns (recursive `**`; a leading `!` excludes).

        The listing can name tracked files deleted from the work tree; `existing=False` skips the stat that drops
        them, for callers that stat or open each file anyway and skip missing ones themselves.
        """
        if not existing:
            return self._matched(tuple(patterns))
        key = tuple(patterns)
        with self._lock:
            cached = self._matches.get(key)
        if cached is None:
            matched = self._matched(key)
            look = snapshot(self)
            if look is not None:  # the listing may name tracked files deleted from the work tree: git knows them
                try:
                    deleted = look.deleted()
                except subprocess.CalledProcessError:
                    base = str(self.root)
                    matched = [p for p in matched if os.path.lexists(os.path.join(base, p))]
                else:
                    matched = [p for p in matched if p not in deleted] if deleted else matched
            with self._lock:
                cached = self._matches.setdefault(key, matched)
        return cached

    def _matched(self, patterns: tuple[str, ...]) -> list[str]:
        """`match_files` over the listing, read back from the last run that matched the same glob list in the same
        listing (dun/core/cache/matches.py) when there was one: found by the index file's checksum, no listing is
        read at all."""
        from dun.core.globs import match_files

        memo = self._match_memo()
        matched = memo.get(patterns) if memo is not None else None
        if matched is not None:
            return matched
        found = listing(self)
        if memo is None or not isinstance(found, Listing):
            return match_files(found, patterns)
        key = found.key()
        if key is None:
            return match_files(found, patterns)
        memo.attach(key.hex(), found.index)
        matched = memo.get(patterns)
        if matched is None:
            matched = match_files(found, patterns)
            memo.put(patterns, matched)
        return matched

    def _match_memo(self) -> MatchMemo | None:
        with self._lock:
            memo = self._memo
        if memo is None:
            from dun.core.globs import matcher_version

            look = snapshot(self)
            version = matcher_version() if look is not None else None
            memo = False
            if look is not None and version is not None:
                try:
                    index = look.index_key()
                except subprocess.CalledProcessError:
                    index = None
                memo = MatchMemo(str(self.root), version, index, read=self.caches is None or self.caches.read)
            with self._lock:
                if self._memo is None:
                    self._memo = memo
                memo = self._memo
        return memo if isinstance(memo, MatchMemo) else None


def snapshot(ctx: CheckContext) -> Snapshot | None:
    """The run's one look at the git work tree (`git ls-files` and `git status`), started on first use."""
    if not ctx.is_git:
        return None
    with ctx._lock:
        if ctx._snapshot is None:
            from dun.core.snapshot import Snapshot

            early, ctx._early = ctx._early, None
            trees = ctx.caches.trees if ctx.caches is not None else None  # the session's: what earlier looks found
            ctx._snapshot = (early.claim(ctx.root, trees) if early is not None else None) or \
                Snapshot(ctx.root, trees=trees)
        return ctx._snapshot


def listing(ctx: CheckContext) -> Listing | list[str]:
    """The files as git listed them (`dun.core.globs.Listing`: matched without splitting all of them), or the
    walked list outside git."""
    look = snapshot(ctx)
    with ctx._lock:
        if ctx._files is None:
            if look is not None:
                ctx._files = look.files()
            else:
                from dun.core.snapshot import list_files

                ctx._files = list_files(ctx.root, ctx.is_git)
        return ctx._files


def git_view(ctx: CheckContext) -> tuple[str, set[str], int] | None:
    """HEAD, the paths `git status` names and when it looked (`Snapshot.view`): per-file caches trust an entry read
    at HEAD from a file git still sees clean without a stat. None outside git or before a commit."""
    look = snapshot(ctx)
    return look.view() if look is not None else None
