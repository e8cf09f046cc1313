"""Run checks: triggers, selection, dependencies, concurrency and per-check timeouts."""

from __future__ import annotations

import fnmatch
import queue
import threading
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from dun.core.errors import UsageError
from dun.engine.catalog import Catalog
from dun.engine.checkapi import CheckContext, CheckSpec
from dun.engine.model import ACTIONABLE_STATUSES, CheckResult, Outcome, Status

if TYPE_CHECKING:
    from dun.engine.reuse import ResultCache

# A check type that enforces its own timeout (command) gets this long to report it before the engine gives up.
TIMEOUT_GRACE_S = 5.0


def split_patterns(patterns: Sequence[str]) -> list[str]:
    """`--only a,b --only c` is three patterns."""
    return [p.strip() for value in patterns for p in value.split(",") if p.strip()]


def validate_patterns(catalog: Catalog, only: Sequence[str], skip: Sequence[str]) -> None:
    """A pattern that matches no check is a typo, not an empty selection: `--only gotest` must not pass."""
    from dun.config.schema import did_you_mean

    names = [n for c in catalog.checks for n in (c.id, c.plugin, f"{c.plugin}/{c.id}")]
    disabled = {m.id for m in catalog.disabled} | {c.id for m in catalog.disabled for c in m.checks}
    for flag, patterns in (("--only", only), ("--skip", skip)):
        for pattern in patterns:
            if any(fnmatch.fnmatchcase(n, pattern) for n in names):
                continue
            if pattern in disabled:
                raise UsageError(f"{flag} '{pattern}': its plugin is disabled (plugins.disabled)")
            hint = did_you_mean(pattern, sorted(set(names)))
            raise UsageError(f"{flag} '{pattern}' matches no check{hint}; `dun list` shows them")


def selected(check: CheckSpec, only: Sequence[str], skip: Sequence[str]) -> bool:
    names = (check.id, check.plugin, f"{check.plugin}/{check.id}")
    if only and not any(fnmatch.fnmatchcase(n, g) for g in only for n in names):
        return False
    return not any(fnmatch.fnmatchcase(n, g) for g in skip for n in names)


def trigger_miss(triggers: list[dict[str, str]], ctx: CheckContext) -> str | None:
    """None when the plugin applies; otherwise why not."""
    if not triggers:
        return None
    for trig in triggers:
        if "path-exists" in trig and (ctx.root / trig["path-exists"]).exists():
            return None
        if "glob-exists" in trig and ctx.match([trig["glob-exists"]]):
            return None
    wanted = ", ".join(f"{k} {v}" for t in triggers for k, v in t.items())
    return f"not applicable: no trigger matched ({wanted})"


def run_one(catalog: Catalog, check: CheckSpec, ctx: CheckContext) -> CheckResult:
    start = time.monotonic()
    try:
        try:
            outcome = catalog.types[check.type].run(check, ctx)
        except Exception:
            if ctx.caches is None or not ctx.caches.read:
                raise
            # a cache entry of a shape its reader did not expect (damaged, or from a hand) must not make the
            # result: the check runs once more reading no cache, as `--no-cache` would
            outcome = catalog.types[check.type].run(check, _fresh(ctx))
    except Exception as exc:  # a crashing check must never stop the run
        import traceback

        frames = traceback.format_exception(exc)[-3:]
        outcome = Outcome(Status.ERROR, f"check crashed: {type(exc).__name__}: {exc}".splitlines()[0],
                          detail="".join(frames).strip())
    return to_result(check, outcome, time.monotonic() - start)


def _stamped(catalog: Catalog, check: CheckSpec) -> bool:
    ctype = catalog.types.get(check.type)
    return ctype is not None and ctype.stamped is not None and ctype.stamped(check)


def _fresh(ctx: CheckContext) -> CheckContext:
    """`ctx` sharing its look at the tree, but reading no cache."""
    import copy

    from dun.core.cache.session import Caches

    fresh = copy.copy(ctx)
    fresh.caches = Caches(fresh=True)
    return fresh


def to_result(check: CheckSpec, outcome: Outcome, duration: float) -> CheckResult:
    return CheckResult(
        id=check.id, plugin=check.plugin, type=check.type, status=outcome.status, priority=check.priority,
        signal=outcome.signal, detail=outcome.detail, items=outcome.items,
        next=(outcome.next or check.next) if outcome.status in ACTIONABLE_STATUSES else None,
        duration_s=duration, description=check.description, lasting=outcome.lasting,
    )


def run_checks(catalog: Catalog, ctx: CheckContext, jobs: int = 8, only: Sequence[str] = (),
               skip: Sequence[str] = (), reuse: ResultCache | None = None,
               start_look: Callable[[], Callable[[], str | None]] | None = None) -> list[CheckResult]:
    """Run every selected check that applies (or reuse its unchanged result); returns results in the documented
    order. `start_look` starts a new look at the work tree (its fingerprint comes from the callable it returns):
    results are stored only when the tree did not move while the checks ran. The look starts as soon as every check
    that may read the tree other than through stamps (`CheckType.stamped`) has finished: git walks the tree while
    the stamped ones still run."""
    results: dict[str, CheckResult] = {}
    todo: dict[str, CheckSpec] = {}
    triggers: dict[str, tuple[str, list[dict[str, str]]]] = {}  # check id -> its manifest's id and triggers
    looks: dict[str, list[tuple[str, object]] | None] = {}
    trigger_looks: dict[str, list[tuple[str, object]]] = {}  # manifest id -> its path-exists triggers' looks
    chosen = [(manifest, [c for c in manifest.checks if selected(c, only, skip)]) for manifest in catalog.manifests]
    if reuse is not None:
        for manifest, checks in chosen:
            for check in checks:
                hit = reuse.get(check, catalog.types.get(check.type), manifest.triggers)
                if hit is not None:
                    results[check.id] = hit
                else:
                    ctx.prefetch()  # some check will run: list the index while the rest is decided
        every = {c.id: c for _, checks in chosen for c in checks}
        trig = {c.id: m.triggers for m, checks in chosen for c in checks}
        moved = {cid for cid, c in every.items() if cid not in results and c.after and reuse.moved(c, trig[cid])}
        for cid in together(every, {cid for cid in every if cid not in results}, moved):
            results.pop(cid, None)
    ran = {c.id for _, checks in chosen for c in checks if c.id not in results}
    for manifest, checks in chosen:
        if reuse is not None:
            checks = [c for c in checks if c.id not in results]
            # Stamped before the checks run: a change made while they run invalidates what they report. A check
            # after one that runs is stamped as it starts (`stamp_late`): what it reads is what that one wrote.
            looks.update({c.id: reuse.inputs(c, catalog.types.get(c.type), manifest.triggers) for c in checks
                          if not any(dep in ran for dep in c.after)})
            if checks:  # what a "not applicable" is kept with: looked at before the triggers are decided
                trigger_looks[manifest.id] = reuse.trigger_looks(manifest.triggers)
        for check in checks:
            todo[check.id] = check
            triggers[check.id] = (manifest.id, manifest.triggers)
    gates = _Gates(ctx, triggers)
    unstamped = {cid for cid, check in todo.items() if not _stamped(catalog, check)}
    early: list[Callable[[], str | None]] = []

    needed: list[bool] = []
    last: list[bool] = []  # the early look started once every check had finished: it is the look after them all

    def done(cid: str) -> None:
        if cid in unstamped:
            unstamped.discard(cid)
            if not gates.missed(cid):  # a check found not applicable read no more than its triggers did
                needed.append(True)
            if not unstamped and needed and reuse is not None and start_look is not None:
                early.append(start_look())
                last.append(all(c in results for c in todo))

    def stamp_late(cid: str) -> None:
        if reuse is not None and cid not in looks:
            check = todo[cid]
            looks[cid] = reuse.inputs(check, catalog.types.get(check.type), triggers[cid][1])

    _schedule(catalog, ctx, todo, results, max(1, jobs), gates, done, stamp_late)
    ctx.flush()
    if reuse is not None:
        for manifest in catalog.manifests:
            for check in manifest.checks:
                if check.id in looks and check.id in results:
                    reuse.put(check, manifest.triggers, looks[check.id], results[check.id],
                              inapplicable=trigger_looks.get(manifest.id) if gates.missed(check.id) else None)
        reuse.save(start_look, early[0] if early else None, after_all=bool(last and last[0]))
    order = {c.id: c.sort_key for c in catalog.checks}
    return sorted(results.values(), key=lambda r: order[r.id])


def together(checks: dict[str, CheckSpec], running: set[str], moved: set[str]) -> set[str]:
    """The checks that run: `running`, every check `after:` one that runs (it was judged reusable on what it read
    before that one writes), and every check a check of `moved` is `after:` (one that runs because an input it had
    stored changed: when that input is what the earlier check writes, a report or a generated file someone changed or
    removed, a fresh run would have that check write it again, so it cannot be reused), transitively."""
    dependents: dict[str, list[str]] = {cid: [] for cid in checks}
    for cid, check in checks.items():
        for dep in check.after:
            if dep in dependents:
                dependents[dep].append(cid)
    out = set(running)
    stack = list(running)
    while stack:
        cid = stack.pop()
        for other in [*dependents.get(cid, ()), *(checks[cid].after if cid in moved else ())]:
            if other in checks and other not in out:
                out.add(other)
                stack.append(other)
    return out


class _Gates:
    """Whether each manifest's triggers match, decided once, by the first of its checks to start: in the check's
    own thread, so checks that need no look at the tree (coverage data, cached reads) run while git still walks it."""

    def __init__(self, ctx: CheckContext, triggers: dict[str, tuple[str, list[dict[str, str]]]]) -> None:
        self.ctx = ctx
        self.triggers = triggers
        self._misses: dict[str, str | None] = {}
        # one lock per manifest: a glob trigger waiting for git holds up only its own manifest's checks
        self._locks = {manifest: threading.Lock() for manifest, _ in triggers.values()}

    def missed(self, check_id: str) -> bool:
        """Whether the check was found not applicable (decided already: it ran)."""
        manifest, _ = self.triggers.get(check_id, ("", []))
        return bool(self._misses.get(manifest))

    def settled_miss(self, check_id: str) -> str | None:
        """Why the check does not apply, when its triggers are all `path-exists` (decided at once, a stat each, no
        thread to start: most built-in plugins do not apply to a given repository); None when it applies or its
        triggers need a look at the tree (decided in the check's thread)."""
        _, triggers = self.triggers.get(check_id, ("", []))
        if not triggers or not all(set(t) == {"path-exists"} for t in triggers):
            return None
        return self.miss(check_id)

    def miss(self, check_id: str) -> str | None:
        manifest, triggers = self.triggers.get(check_id, ("", []))
        if not triggers:
            return None
        with self._locks[manifest]:
            if manifest not in self._misses:
                self._misses[manifest] = trigger_miss(triggers, self.ctx)
            return self._misses[manifest]


def _schedule(catalog: Catalog, ctx: CheckContext, todo: dict[str, CheckSpec],
              results: dict[str, CheckResult], jobs: int, gates: _Gates,
              on_done: Callable[[str], None] = lambda cid: None,
              on_start: Callable[[str], None] = lambda cid: None) -> None:
    """Start checks whose `after` dependencies are done, at most `jobs` at once, each with a deadline; `on_start`
    hears of each one about to start, `on_done` of each one finished."""
    done_q: queue.Queue[CheckResult] = queue.Queue()
    running: dict[str, float] = {}  # id -> deadline
    waiting = dict(todo)
    failures: list[Exception] = []

    def worker(check: CheckSpec) -> None:
        try:
            miss = gates.miss(check.id)
        except Exception as exc:  # git cannot list the tree (a corrupt index): the run fails as it would have
            failures.append(exc)
            done_q.put(to_result(check, Outcome(Status.ERROR, f"trigger failed: {exc}".splitlines()[0]), 0.0))
            return
        if miss:
            done_q.put(to_result(check, Outcome(Status.SKIP, miss), 0.0))
        else:
            done_q.put(run_one(catalog, check, ctx))

    while waiting or running:
        for cid, check in list(waiting.items()):
            if len(running) >= jobs:
                break
            if any(dep in waiting or dep in running for dep in check.after):
                continue
            del waiting[cid]
            on_start(cid)
            running[cid] = time.monotonic() + check.timeout + TIMEOUT_GRACE_S
            try:
                skipped = gates.settled_miss(cid)
            except Exception:  # a trigger that cannot be looked at: the check's thread reports it
                skipped = None
            if skipped:  # not applicable: its result needs no thread (starting 14 of them cost 2-3 ms a run)
                done_q.put(to_result(check, Outcome(Status.SKIP, skipped), 0.0))
                continue
            # Daemon threads: a check stuck past its deadline must not keep dun alive at exit.
            threading.Thread(target=worker, args=(check,), daemon=True, name=f"check:{cid}").start()
        if not running:
            break
        wait = max(0.0, min(running.values()) - time.monotonic())
        try:
            result = done_q.get(timeout=wait)
        except queue.Empty:
            now = time.monotonic()
            for cid, deadline in list(running.items()):
                if deadline <= now:
                    del running[cid]
                    check = todo[cid]
                    results[cid] = to_result(check, Outcome(Status.ERROR, f"timed out after {check.timeout:g}s"),
                                             check.timeout)
                    on_done(cid)
            continue
        if result.id in running:  # a late result after its deadline is dropped
            del running[result.id]
            results[result.id] = result
            on_done(result.id)
    if failures:
        raise failures[0]
