"""The deficiency detector kept up to date: the same findings as `deficiency.detect` over the whole history, from
only the rows added since its last look.

A loop runs the detector after every iteration; a full read costs time and memory in proportion to the history
(about 100-400 ms and 3-4 MB at 1,000 iterations). `Detector` keeps what each pattern needs instead: the current
streak, each error signature's last window, the sorted costs (an exact median), the findings' evidence. It reads the
rows whose rowid is past the last one it read. Anything that is not an append (a row replaced, deleted or re-timed,
a run that sorts before one already read, a box text never seen before that may rename earlier claims, another
database) makes it start over with a full read: the `rewrites` table's token and counter (kept by triggers, see
`dun.history.schema`) say when the database changed other than by adding rows, whichever process wrote.

`tests/history/test_history_incremental.py` holds it to `deficiency.detect` on random histories.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, NamedTuple

from dun.history.deficiency import Finding, _median, _norm, _runs, repeated_denials
from dun.history.rows import LIMIT_KINDS
from dun.history.store import History

if TYPE_CHECKING:
    from dun.config.sections import Review

Key = tuple[str, int]


class Ev(NamedTuple):
    """An iteration as evidence: its key and its time (`_ts` of the full detector)."""
    run_id: str
    iteration: int
    ts: float | None

    @property
    def key(self) -> Key:
        return self.run_id, self.iteration


def _ev(it: dict[str, Any]) -> Ev:
    return Ev(it["run_id"], it["iteration"], it.get("started_ts") or it.get("ended_ts"))


def _refs(found: Iterable[Ev]) -> list[dict[str, object]]:
    return [{"run_id": e.run_id, "iteration": e.iteration} for e in found]


def _update(hits: dict[Key, Ev], fresh: Iterable[Ev]) -> None:
    hits.update((e.key, e) for e in fresh)


class _Runs:
    """A pattern over runs of iterations per subject (claim_streak, box_attempts): the open attempts of each
    subject, and everything of a subject once its threshold was reached."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.open: dict[str, list[Ev]] = {}
        self.hits: dict[str, dict[Key, Ev]] = {}
        self.fired: dict[str, float | None] = {}

    def extend(self, subject: str, ev: Ev) -> None:
        run = self.open.setdefault(subject, [])
        run.append(ev)
        if len(run) >= self.n:
            self.fired.setdefault(subject, ev.ts)
            hits = self.hits.setdefault(subject, {})
            _update(hits, run if len(run) == self.n else run[-1:])  # the rest went in at earlier steps


class _Errors:
    """Per error signature, its errors sorted by time and the sliding window over them: an error older than the
    last of its signature (runs sort by their start, errors by their own time) is put in place and the signature
    gone through again."""

    def __init__(self, n: int, window_h: float) -> None:
        self.n, self.window_s = n, window_h * 3600
        self.window_h = window_h
        self.timed: dict[str, list[Ev]] = {}
        self.start: dict[str, int] = {}
        self.first: dict[str, float | None] = {}
        self.inside: dict[str, dict[Key, Ev]] = {}

    def add(self, it: dict[str, Any]) -> None:
        sig = it["error_signature"]
        if not sig or it["error_kind"] in LIMIT_KINDS or it["interrupted"]:
            return
        ev = _ev(it)
        if ev.ts is None:
            return
        timed = self.timed.setdefault(sig, [])
        if not timed or float(ev.ts or 0) >= float(timed[-1].ts or 0):
            timed.append(ev)
            self._step(sig, len(timed) - 1)
            return
        bisect.insort_right(timed, ev, key=lambda e: float(e.ts or 0))  # after its equals: the sort is stable
        self.start[sig] = 0
        self.first.pop(sig, None)
        self.inside.pop(sig, None)
        for i in range(len(timed)):
            self._step(sig, i)

    def _step(self, sig: str, i: int) -> None:
        timed, start = self.timed[sig], self.start.get(sig, 0)
        while float(timed[i].ts or 0) - float(timed[start].ts or 0) > self.window_s:
            start += 1
        self.start[sig] = start
        if i - start + 1 >= self.n:
            self.first.setdefault(sig, timed[i].ts)
            _update(self.inside.setdefault(sig, {}), timed[start:i + 1])

    def findings(self) -> Iterator[Finding]:
        for sig, inside in self.inside.items():
            found = list(inside.values())
            yield Finding("repeated_error", sig, f"the same error {len(found)} times within {self.window_h:g} h",
                          _refs(found), self.first[sig], found[-1].ts, f"{sig} ({_runs(_refs(found))})")


class _Costs:
    def __init__(self, factor: float, min_samples: int) -> None:
        self.factor, self.min_samples = factor, min_samples
        self.prior: list[float] = []  # sorted: the median is read, not recomputed
        self.by_run: dict[str, list[tuple[Ev, float, float]]] = {}

    def add(self, it: dict[str, Any]) -> None:
        cost = it["cost_usd"]
        if cost is None or it.get("cost_estimated"):
            return
        if len(self.prior) >= self.min_samples:
            median = _median(self.prior)
            if median > 0 and cost > self.factor * median:
                self.by_run.setdefault(it["run_id"], []).append((_ev(it), cost, median))
        bisect.insort(self.prior, float(cost))

    def findings(self) -> Iterator[Finding]:
        for run_id, found in self.by_run.items():
            yield Finding("cost_outlier", run_id, f"{len(found)} iteration(s) cost over {self.factor:g}x the median",
                          _refs(e for e, _, _ in found), found[0][0].ts, found[-1][0].ts,
                          "; ".join(f"iteration {e.iteration}: ${c:.4f} vs median ${m:.4f}" for e, c, m in found[:5]))


def _denial_order(d: dict[str, Any]) -> tuple[bool, float, str, int]:
    """SQLite's `ORDER BY ts, run_id, seq` (NULL first)."""
    return d["ts"] is not None, d["ts"] or 0.0, d["run_id"], d["seq"]


@contextmanager
def _snapshot(history: History) -> Iterator[None]:
    """One read transaction: every table as of the same commit (a writer in another process may commit between)."""
    if history.conn.in_transaction:
        yield
        return
    history.conn.execute("BEGIN")
    try:
        yield
    finally:
        history.conn.execute("COMMIT")


class Detector:
    """Findings over one history database, as `deficiency.detect` would give them, read incrementally."""

    def __init__(self) -> None:
        self.source: tuple[object, ...] | None = None
        self.thresholds: Review | None = None
        self.full_reads = 0  # how often it started over (a loop of plain appends: once)

    def _start(self, t: Review, source: tuple[object, ...]) -> None:
        self.source, self.thresholds = source, t
        self.full_reads += 1
        self.rowid = {"iterations": 0, "check_results": 0, "discrepancies": 0, "guard_decisions": 0, "boxes": 0}
        self.last: tuple[float, str, int] | None = None  # the sort key of the last iteration read
        self.known: set[str] = set()
        self.ordered: list[str] = []
        self.claims, self.boxes = _Runs(t.claim_streak), _Runs(t.box_attempts)
        self.errors = _Errors(t.error_repeats, t.error_window_h)
        self.repairs: dict[tuple[str, str], list[Ev]] = {}
        self.costs = _Costs(t.cost_factor, t.cost_min_samples)
        self.denials: dict[Key, dict[str, Any]] = {}
        self.unplaced: set[Key] = set()
        self.denied: list[Finding] = []

    def findings(self, history: History, thresholds: Review | None = None) -> list[Finding]:
        """Every pattern over the whole history, in `detect`'s order."""
        if thresholds is None:
            from dun.config.loader import defaults_only

            thresholds = defaults_only().settings.review
        try:
            with _snapshot(history):
                token, count = history.conn.execute("SELECT token, n FROM rewrites").fetchone()
                source = (str(history.root), token, count)
                if source != self.source or thresholds != self.thresholds:
                    self._start(thresholds, source)
                if not self._read(history):
                    self._start(thresholds, source)
                    self._read(history)
        except BaseException:
            self.source = None  # a read cut short (a busy database, an interrupt) leaves no half-read state behind
            raise
        return self._assemble()

    def _new(self, history: History, table: str) -> list[dict[str, Any]]:
        found = history.query(f"SELECT rowid AS rowid, * FROM {table} WHERE rowid > ? ORDER BY rowid",
                              (self.rowid[table],))
        if found:
            self.rowid[table] = found[-1]["rowid"]
        return found

    def _read(self, history: History) -> bool:
        """Read what was added; False (nothing changed) when it is not a plain append."""
        its = history.iterations(after=self.rowid["iterations"])
        if its and self.last is not None and (its[0]["order_ts"], its[0]["run_id"], its[0]["iteration"]) <= self.last:
            return False  # a run that sorts before what was read, or an iteration read before
        known = self.known | {_norm(r["text"]) for r in history.query(
            "SELECT text FROM boxes WHERE rowid > ?", (self.rowid["boxes"],)) if _norm(r["text"])}
        known |= {_norm(b) for it in its for b in it["boxes_ticked"]}
        if known != self.known and self.last is not None:
            return False  # a new box text may be what earlier claims named
        if its:
            self.rowid["iterations"] = max(it["rowid"] for it in its)
            last = its[-1]
            self.last = (last["order_ts"], last["run_id"], last["iteration"])
        self.rowid["boxes"] = history.conn.execute("SELECT COALESCE(MAX(rowid), 0) FROM boxes").fetchone()[0]
        if known != self.known:
            self.known, self.ordered = known, sorted(known)
        after: dict[Key, dict[str, int]] = {}
        for row in self._new(history, "check_results"):
            after.setdefault((row["run_id"], row["iteration"]), {})[row["check_id"]] = row["failing_after"]
        unverified = {(d["run_id"], d["iteration"]) for d in self._new(history, "discrepancies")
                      if d["kind"] == "unverified_completion"}
        for it in its:
            key = (it["run_id"], it["iteration"])
            it["_after"] = after.get(key, {})
            self._add(it, key in unverified)
        self._guard(history)
        return True

    def _add(self, it: dict[str, Any], unverified: bool) -> None:
        ev = _ev(it)
        if it["status_block"] is not None:
            failing = {c for c, f in it["_after"].items() if f}
            claimed = it["claimed_check"] if it["status"] == "COMPLETE" else None
            for check in [c for c in self.claims.open if c != claimed]:
                self.claims.open.pop(check)
            if claimed and claimed in failing and unverified:
                self.claims.extend(claimed, ev)
            elif claimed:
                self.claims.open.pop(claimed, None)
        self._box(it, ev)
        for kind in ("restored", "reverted"):
            for path in it[kind]:
                self.repairs.setdefault((kind, str(path)), []).append(ev)
        self.costs.add(it)
        self.errors.add(it)

    def _box(self, it: dict[str, Any], ev: Ev) -> None:
        claim = _norm(it["task_claimed"])
        if not claim or it["status_block"] is None:
            return
        subject = claim.partition("@")[2].strip() if "@" in claim else next(
            (b for b in self.ordered if b == claim or b in claim), "")
        if not subject:
            return
        ticked = [_norm(b) for b in it["boxes_ticked"]]
        if any(b == subject or b in claim for b in ticked) or ("@" in claim and ticked):
            self.boxes.open.pop(subject, None)
            return
        self.boxes.extend(subject, ev)

    def _guard(self, history: History) -> None:
        """New guard decisions, and the iteration of a denial read before it was placed (placed once, never
        moved: `History.place_guard_decisions`)."""
        changed = False
        for row in self._new(history, "guard_decisions"):
            key = (row["run_id"], row["seq"])
            if row["decision"] == "deny":
                self.denials[key] = row
                changed = True
                if row["iteration"] is None:
                    self.unplaced.add(key)
        for key in list(self.unplaced):
            placed = history.conn.execute("SELECT iteration FROM guard_decisions WHERE run_id = ? AND seq = ?",
                                          key).fetchone()
            if placed is not None and placed[0] is not None:
                self.denials[key]["iteration"] = placed[0]
                self.unplaced.discard(key)
                changed = True
        if changed:
            self.refresh_denied()

    def refresh_denied(self) -> None:
        """The repeated-denial findings over every denial read."""
        assert self.thresholds is not None
        self.denied = repeated_denials(sorted(self.denials.values(), key=_denial_order), self.thresholds.denial_repeats)

    def _assemble(self) -> list[Finding]:
        assert self.thresholds is not None
        found = [*(Finding("claim_streak", check, f"check {check} still fails while the agent claims it done",
                           _refs(hits.values()), self.claims.fired[check], list(hits.values())[-1].ts,
                           f"claimed COMPLETE {_runs(_refs(hits.values()))} in a row; the check kept failing")
                   for check, hits in self.claims.hits.items()),
                 *self.errors.findings(),
                 *(Finding("box_attempts", box, f"box '{box}' attempted {len(hits)} times without being done",
                           _refs(hits.values()), self.boxes.fired[box], list(hits.values())[-1].ts,
                           f"claimed in {_runs(_refs(hits.values()))}; never ticked")
                   for box, hits in self.boxes.hits.items()),
                 *self._repairs(self.thresholds.repair_repeats),
                 *self.denied,
                 *self.costs.findings()]
        return sorted(found, key=lambda f: (f.first_ts or 0, f.pattern, f.subject))

    def _repairs(self, n: int) -> Iterator[Finding]:
        for (kind, path), found in self.repairs.items():
            if len(found) >= n:
                what = "mission boxes restored in" if kind == "restored" else "checker file reverted:"
                yield Finding("repeated_repair", f"{kind}:{path}", f"{what} {path}, {len(found)} times",
                              _refs(found), found[n - 1].ts, found[-1].ts,
                              f"dun {kind} {path} in {_runs(_refs(found))}")
