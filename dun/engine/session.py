"""Everything one command invocation needs: the repo, a fresh plugin manager, the config, the catalog."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

import pluggy

from dun.config.loader import Config
from dun.core.cache.session import Caches
from dun.core.git import Repo
from dun.engine import checkapi
from dun.engine.catalog import Catalog, load_catalog
from dun.engine.checkapi import CheckContext
from dun.engine.manager import make_manager, merged_mapping
from dun.engine.model import Report
from dun.store.layout import find_repo

if TYPE_CHECKING:
    from dun.config.sections import Settings
    from dun.core.snapshot import Early
    from dun.engine.launch import Launches
    from dun.engine.reuse import ResultCache
    from dun.store.store import Store


@dataclass
class Session:
    """Everything one command invocation needs: the repository, the plugin manager, the config."""

    repo: Repo
    pm: pluggy.PluginManager
    config: Config
    caches: Caches = field(default_factory=Caches)  # whether this run reads caches; what they consulted
    _catalog: Catalog | None = field(default=None, repr=False)
    _context: CheckContext | None = field(default=None, repr=False)
    # the loop's sandbox for the commands checks run (dun.sandbox.confiner); None: they run as dun does
    confine: Callable[[list[str]], list[str]] | None = field(default=None, repr=False)
    early: Early | None = field(default=None, repr=False)  # git's look started with dun, for the first context
    # `dun check`: the test runners started as dun started and what this run runs (dun/engine/launch.py)
    launches: Launches | None = field(default=None, repr=False)

    @property
    def root(self) -> Path:
        return self.repo.root

    @property
    def settings(self) -> Settings:
        """The config's sections, typed (built on first use: `dun check` reads only its own)."""
        return self.config.settings

    @cached_property
    def store(self) -> Store:
        """The repository's `.dun/`, one for the command (imported here: `dun check` needs no record)."""
        from dun.store.store import Store

        return Store(self.root, self.config.redactor)

    def context(self) -> CheckContext:
        """The one CheckContext of this invocation, shared by every check."""
        if self._context is None:
            self._context = CheckContext(self.root, self.repo.is_git, self.config, self.confine, self.early)
            self.early = None
            self._context.caches = self.caches
            self._context.launches = self.launches
        return self._context

    def catalog(self) -> Catalog:
        if self._catalog is None:
            self._catalog = load_catalog(self.root, self.pm, self.config, self.caches)
        return self._catalog

    def look(self) -> tuple[str | None, str | None]:
        """HEAD and the work tree's hash (`dun.core.git.worktree_tree`) as they are now, from the look at the tree
        that the next report shares: the loop's progress test and its checks see the same tree."""
        ctx = self.context()
        ctx.refresh()  # the tree may have changed since the last look (an agent ran)
        snapshot = checkapi.snapshot(ctx)
        if snapshot is None:
            return None, None
        return snapshot.head(), snapshot.tree()

    def report(self, only: Sequence[str] = (), skip: Sequence[str] = (), jobs: int | None = None,
               strict: bool = False, reuse: bool = True) -> Report:
        """Run the selected checks; every command that needs results comes here (`dun check`, `dun iterate`, the
        loop), so each reuses what the others found on the same inputs: a check whose inputs are unchanged since
        its last result is not run again (dun/engine/reuse.py), and what runs is stored for the next. Without
        `reuse` nothing is read or stored."""
        from dun.engine.runner import run_checks, split_patterns, validate_patterns

        start = time.monotonic()
        catalog = self.catalog()
        if self.launches is not None:
            self.launches.basis = self.caches.consulted.looks()  # what the config and the catalog were made from
            self.launches.triggers = {c.id: m.triggers for m in catalog.manifests for c in m.checks}
        only, skip = split_patterns(only), split_patterns(skip)
        validate_patterns(catalog, only, skip)
        ctx = self.context()
        if ctx.used:  # a second report in one process (the loop): the tree may have changed since
            ctx.refresh()
        ctx.used = True
        cache = self._result_cache(ctx) if reuse else None
        jobs = jobs or int(self.config.get("check.jobs"))
        if self.launches is not None:
            self.launches.jobs = jobs
        results = run_checks(catalog, ctx, jobs=jobs, only=only, skip=skip, reuse=cache, start_look=self._start_look)
        if self.launches is not None:
            self.launches.stop()  # a guess no check claimed (its result was reused, or it did not apply)
        report = Report(root=self.root, results=results, duration_s=time.monotonic() - start,
                        warn_is_actionable=strict or bool(self.config.get("check.warn_is_actionable")))
        if (only or skip) and not results:
            report.notes.append("no check matched --only/--skip")
        return report

    def _result_cache(self, ctx: CheckContext) -> ResultCache | None:
        from dun.engine.reuse import ResultCache

        snapshot = checkapi.snapshot(ctx)
        hashed_ns = time.time_ns()
        launches = self.launches
        launched = launches.tree if launches is not None else None
        if launches is not None and launched is not None and snapshot is not None:
            # hashed as dun started, from this same status, before any test runner started (dun/engine/launch.py)
            tree: str | None = launched[0]
            hashed_ns = launched[1]
            launches.tree = None  # a later report looks again
        else:
            tree = snapshot.fingerprint() if snapshot is not None else None
        view = snapshot.view() if snapshot is not None and tree else None
        looked = (view[2] if view is not None else 0, hashed_ns)
        if self.launches is not None:
            self.launches.tree_made = tree
        return ResultCache(self.root, tree, ctx, self.caches, looked) if tree else None

    def _start_look(self) -> Callable[[], str | None]:
        """A new look at the work tree, started now (a new `git status`); the callable gives its fingerprint."""
        from dun.core.snapshot import Snapshot

        return Snapshot(self.root).fingerprint


def open_session(path: Path | str | None = None, agents: bool = True, fresh: bool = False,
                 early: Early | None = None, launches: Launches | None = None) -> Session:
    """The repository at `path`, a plugin manager (with the agent adapters unless `agents` is False: `dun check`
    needs none) and the config, cached while its files are unchanged (dun/engine/configcache.py). With `fresh`
    (`--no-cache`; also `DUN_NO_CACHE=1`), no cache is read and what the run finds is stored. `early`: git's look
    at the current directory started as dun started (dun/entry.py), used when `path` is None; `launches`: the
    commands started with it (dun/engine/launch.py), kept when they are of this repository, else stopped."""
    from dun.engine.configcache import cached_config

    caches = Caches(fresh)
    found = early.peek() if early is not None and path is None else None  # `dun check` asked git as it started
    repo = Repo(found[0], True) if found is not None else find_repo(path)
    pm = make_manager(agents=agents, caches=caches)
    config = cached_config(repo.root, merged_mapping(pm, "dun_config_fields", "config section"), caches)
    if launches is not None and (found is None or str(found[0]) != launches.root):
        launches.stop()  # started for the repository dun guessed, not this one
        launches = None
    return Session(repo=repo, pm=pm, config=config, caches=caches, early=early if found is not None else None,
                   launches=launches)
