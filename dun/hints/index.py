"""The co-change index: the graph (graph.py) learned from git history and from the loop's iteration logs, kept in
`.dun/cochange.idx` through the store and brought up to date on every use.

Up to date means: the commits since the last one indexed (`git log LAST..HEAD`), or, when that commit is no longer
in HEAD's history (a rebase, a reset, another branch), the whole index built again; then the iteration logs not
learned yet. An index file of another format or settings, or one that is damaged or hostile in any way, is a miss
and is built again: never an error. A `.dun/` that cannot be written (the agent's sandbox keeps it read-only) leaves
the index in memory for this command.
"""

from __future__ import annotations

import contextlib
import math
import re
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from typing import Any

from dun.config.sections import Hints
from dun.core.errors import DunError
from dun.core.git import head
from dun.hints.gitlog import Commit, is_ancestor, read_commits
from dun.hints.graph import _MAX_EXPONENT, CHECK_PREFIX, Graph
from dun.store.layout import DIR
from dun.store.records import COCHANGE_SCHEMA_VERSION, CochangeRecord
from dun.store.store import Store, read_json

FORMAT = COCHANGE_SCHEMA_VERSION
_SHA = re.compile(r"[0-9a-f]{40}([0-9a-f]{24})?")
MAX_LOG_PATHS = 200  # what one iteration log may add: conclude.py keeps no more
# dun's own files (the agent cannot change them) and names that would pass for a check are never nodes
_OURS = (f"{DIR}/", CHECK_PREFIX)


def settings_key(settings: Hints) -> tuple[int, int, int]:
    """What the index is built with: another value of any of them builds it again."""
    return settings.history, settings.max_commit_files, settings.half_life


@dataclass
class Index:
    graph: Graph
    head: str | None = None  # the last commit learned
    seen: set[str] = field(default_factory=set)  # iteration logs learned: `RUN:N`, and `archive:NAME` dirs
    changed: bool = False  # since it was read: write it back

    # -- learning ---------------------------------------------------------------------------------------------------
    def learn_commits(self, commits: list[Commit]) -> None:
        for commit in commits:
            for old, new in commit.renames:
                self.graph.rename(old, new)
            self.graph.add([f for f in commit.files if not f.startswith(_OURS)])
            for path in commit.deleted:
                self.graph.delete(path)
        self.changed = self.changed or bool(commits)

    def learn_log(self, log: dict[str, Any]) -> bool:
        """One finished iteration: the files it changed, linked to each other (unless its commits carry them, which
        git history gives) and to the checks it was for (those it made pass, and the one it claimed when the prompt
        offered it). False when the log holds nothing to learn."""
        progress = log.get("progress")
        if not isinstance(progress, dict):
            return False
        paths = progress.get("paths")
        if not isinstance(paths, list):
            return False
        files = [p for p in paths[:MAX_LOG_PATHS] if isinstance(p, str) and p and not p.startswith(_OURS)]
        if not files:
            return False
        checks = {c for c in progress.get("newly_passing") or [] if isinstance(c, str)}
        block = log.get("status_block")
        offered = (log.get("checks_before") or {}).get("ids") if isinstance(log.get("checks_before"), dict) else None
        if isinstance(block, dict) and isinstance(block.get("task_completed"), str) and isinstance(offered, list):
            claimed = block["task_completed"].split("@", 1)[0].strip()
            if claimed in offered:
                checks.add(claimed)
        self.graph.add(files, [CHECK_PREFIX + c for c in sorted(checks)], link_files=not progress.get("commits"))
        self.changed = True
        return True

    def learn_logs(self, store: Store) -> None:
        """The iteration logs of the current run and of the archived runs not learned yet."""
        state = store.peek_state()
        run = state.run_id if state else None
        for number, path in store.iteration_log_paths():
            key = f"{run}:{number}"
            if run is None or key in self.seen:
                continue
            log = read_json(path)
            if log is not None and log.get("ended_at"):  # an iteration still running is learned once it ended
                self.learn_log(log)
                self.seen.add(key)
                self.changed = True
        for archived in store.archived_runs():
            mark = f"archive:{archived.name}"
            if mark in self.seen:
                continue
            for number, path in store.iteration_log_paths(archived):
                log = read_json(path)
                if log is None:
                    continue
                key = f"{log.get('run_id')}:{number}"
                if key not in self.seen:
                    self.learn_log(log)
                    self.seen.add(key)
            self.seen.add(mark)
            self.changed = True

    # -- the file ---------------------------------------------------------------------------------------------------
    def payload(self, settings: Hints) -> CochangeRecord:
        g = self.graph
        return (FORMAT, settings_key(settings), self.head or "", g.seq, g.base, list(g.paths), list(g.count),
                [dict(row) for row in g.edges], sorted(g.dead), sorted(self.seen))


def from_payload(payload: Any, settings: Hints) -> Index:
    """The index a file holds; ValueError (or any other exception) when it is not one this dun wrote with these
    settings, in every part: ids in range, weights finite, no exponent that overflows."""
    fmt, key, last, seq, base, paths, count, edges, dead, seen = payload
    if fmt != FORMAT or tuple(key) != settings_key(settings):
        raise ValueError("another format or settings")
    if not (isinstance(last, str) and (last == "" or _SHA.fullmatch(last))):
        raise ValueError("head")
    if not (type(seq) is int and type(base) is int and 0 <= base <= seq):
        raise ValueError("sequence")
    n = len(paths)
    if not (type(paths) is list and type(count) is list and type(edges) is list and len(count) == n == len(edges)):
        raise ValueError("shape")
    graph = Graph(half_life=settings.half_life, max_files=settings.max_commit_files, seq=seq, base=base)
    if graph.rate * (seq - base) > _MAX_EXPONENT + 1:
        raise ValueError("exponent")
    # the checks run in C (set, min, max, fsum over each row), about three times faster than a loop over each weight;
    # fsum is finite only when every weight is
    if not _only(paths, str) or not _weights(count):
        raise ValueError("paths or counts")
    for row in edges:
        if type(row) is not dict:
            raise ValueError("edges")
        if row and (not _only(row, int) or min(row) < 0 or max(row) >= n or not _weights(row.values())):
            raise ValueError("edge")
    if type(dead) is not list or any(type(i) is not int or not 0 <= i < n for i in dead):
        raise ValueError("dead")
    if type(seen) is not list or any(type(s) is not str for s in seen):
        raise ValueError("seen")
    graph.paths, graph.count, graph.edges, graph.dead = paths, count, edges, set(dead)
    graph.ids = {p: i for i, p in enumerate(paths) if p}
    if len(graph.ids) != sum(1 for p in paths if p):
        raise ValueError("duplicate path")
    return Index(graph, last or None, set(seen))


def _only(values: Iterable[object], kind: type) -> bool:
    return set(map(type, values)) <= {kind}


def _weights(values: Collection[Any]) -> bool:
    """Floats only, none negative, all finite."""
    return not values or (_only(values, float) and min(values) >= 0 and math.isfinite(math.fsum(values)))


def load(store: Store, settings: Hints) -> Index | None:
    """The stored index, or None when there is none this dun can use."""
    found = store.read_cochange(lambda payload: from_payload(payload, settings))
    return found if isinstance(found, Index) else None


def update(store: Store, settings: Hints, rebuild: bool = False) -> Index:
    """The index of `store`'s repository (the session's store: a dry run's writes nothing) brought up to date with
    HEAD's history and the iteration logs, written back when it changed."""
    root = store.root
    index = None if rebuild else load(store, settings)
    now = head(root)
    if index is not None and index.head and index.head != now and (now is None or not is_ancestor(root, index.head)):
        index = None  # history was rewritten under the index: learn it again
    if index is None:
        index = Index(Graph(half_life=settings.half_life, max_files=settings.max_commit_files), changed=True)
    if now is not None and now != index.head:
        index.learn_commits(read_commits(root, index.head, settings.history))
        index.head = now
        index.changed = True
    index.learn_logs(store)
    if index.changed:
        # a read-only or full .dun/, a link where dun writes: the hints still hold for this command
        with contextlib.suppress(OSError, DunError):
            store.write_cochange(index.payload(settings))
        index.changed = False
    return index
