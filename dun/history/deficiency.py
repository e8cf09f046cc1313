"""The deficiency detector: patterns across iterations and runs that no single iteration shows, each a `Finding`
a person should look at (Prophet's idea: systemic problems become blocked review items, not log lines).

Patterns (thresholds are `review.*` config keys):
- claim_streak:     the same check failing N iterations in a row while the agent claims it done, with no
                    progress on it (dun judged each claim unverified)
- repeated_error:   the same error signature N times within H hours, across runs (limits and stops excluded)
- box_attempts:     a mission box claimed in N iterations without being ticked
- repeated_repair:  the same file restored (task ratchet) or reverted (checker tampering) in N iterations
- repeated_denial:  the same guard rule denying N times
- cost_outlier:     an iteration costing more than F times the median of the iterations before it (dun's
                    estimate for a call that reported no cost is left out)

Detection is a pure function of the history, so `dun history rebuild` finds the same items with the same ids.
"""

from __future__ import annotations

import bisect
import hashlib
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from dun.history.rows import LIMIT_KINDS
from dun.history.store import History

if TYPE_CHECKING:
    from dun.config.sections import Review



@dataclass
class Finding:
    pattern: str
    subject: str
    title: str
    evidence: list[dict[str, object]]  # {"run_id", "iteration"} (and "time" for guard decisions)
    first_ts: float | None  # when the threshold was reached: stable across re-detection
    last_ts: float | None
    detail: str = ""
    id: str = field(init=False)

    def __post_init__(self) -> None:
        self.id = hashlib.sha256(f"{self.pattern}\0{self.subject}".encode()).hexdigest()[:8]

    def to_dict(self) -> dict[str, object]:
        return {"id": self.id, "pattern": self.pattern, "subject": self.subject, "title": self.title,
                "detail": self.detail, "evidence": self.evidence, "first_ts": self.first_ts, "last_ts": self.last_ts}


def _ref(it: Mapping[str, object]) -> dict[str, object]:
    return {"run_id": it["run_id"], "iteration": it["iteration"]}


def _ts(it: dict[str, Any]) -> float | None:
    return it.get("started_ts") or it.get("ended_ts")


def _merge(into: dict[str, dict[tuple[str, int], dict[str, object]]], subject: str,
           its: list[dict[str, Any]]) -> None:
    """Add iterations to a subject's evidence, once each, in order."""
    into.setdefault(subject, {}).update({(x["run_id"], x["iteration"]): x for x in its})


def _runs(evidence: Sequence[Mapping[str, object]]) -> str:
    count = len({e["run_id"] for e in evidence})
    return f"{len(evidence)} iterations in {count} run{'s' if count != 1 else ''}"


def claim_streaks(its: list[dict[str, Any]], n: int, unverified: set[tuple[str, int]] | None = None,
                  ) -> list[Finding]:
    """`unverified`: the iterations whose claim dun judged unverified. A claim of a check that still fails after
    real progress on it (a box of it ticked, a test of it fixed) is honest work in progress and ends a streak."""
    streaks: dict[str, list[dict[str, object]]] = defaultdict(list)
    hits: dict[str, dict[tuple[str, int], dict[str, object]]] = {}
    fired: dict[str, float | None] = {}
    for it in its:
        if it["status_block"] is None:
            continue  # no answer at all (a crash, a limit): neither a claim nor a break in the streak
        failing = {c for c, f in it["_after"].items() if f}
        claimed = it["claimed_check"] if it["status"] == "COMPLETE" else None
        for check in list(streaks):
            if check != claimed:
                streaks.pop(check)
        judged = unverified is None or (it["run_id"], it["iteration"]) in unverified
        if claimed and claimed in failing and judged:
            streaks[claimed].append(it)
            if len(streaks[claimed]) >= n:
                fired.setdefault(claimed, _ts(it))
                _merge(hits, claimed, streaks[claimed])
        elif claimed:
            streaks.pop(claimed, None)
    return [Finding("claim_streak", check, f"check {check} still fails while the agent claims it done",
                    [_ref(x) for x in found.values()], fired[check], _ts(list(found.values())[-1]),
                    f"claimed COMPLETE {_runs(list(found.values()))} in a row; the check kept failing")
            for check, found in hits.items()]


def repeated_errors(its: list[dict[str, Any]], n: int, window_h: float) -> list[Finding]:
    by_sig: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for it in its:
        if it["error_signature"] and it["error_kind"] not in LIMIT_KINDS and not it["interrupted"]:
            by_sig[it["error_signature"]].append(it)
    out = []
    window_s = window_h * 3600
    for sig, group in by_sig.items():
        timed = sorted((x for x in group if _ts(x) is not None), key=lambda x: float(_ts(x) or 0))
        inside: dict[tuple[str, int], dict[str, object]] = {}
        first: float | None = None
        start = 0
        for i, it in enumerate(timed):
            while float(_ts(it) or 0) - float(_ts(timed[start]) or 0) > window_s:
                start += 1
            if i - start + 1 >= n:
                first = first if first is not None else _ts(it)
                inside.update({(x["run_id"], x["iteration"]): x for x in timed[start:i + 1]})
        if inside:
            found = list(inside.values())
            out.append(Finding("repeated_error", sig, f"the same error {len(found)} times within {window_h:g} h",
                               [_ref(x) for x in found], first, _ts(found[-1]), f"{sig} ({_runs(found)})"))
    return out


def _norm(text: object) -> str:
    return " ".join(str(text or "").lower().split())


def box_attempts(its: list[dict[str, Any]], boxes: list[str], n: int) -> list[Finding]:
    known = {_norm(b) for b in boxes if _norm(b)}
    for it in its:
        known |= {_norm(b) for b in it["boxes_ticked"]}
    attempts: dict[str, list[dict[str, object]]] = defaultdict(list)
    hits: dict[str, dict[tuple[str, int], dict[str, object]]] = {}
    fired: dict[str, float | None] = {}
    for it in its:
        claim = _norm(it["task_claimed"])
        if not claim or it["status_block"] is None:
            continue
        subject = claim.partition("@")[2].strip() if "@" in claim else next(
            (b for b in sorted(known) if b == claim or b in claim), "")
        if not subject:
            continue  # a check id or prose, not a box
        ticked = [_norm(b) for b in it["boxes_ticked"]]
        if any(b == subject or b in claim for b in ticked) or ("@" in claim and ticked):
            attempts.pop(subject, None)  # done: a later claim of it starts over
            continue
        attempts[subject].append(it)
        if len(attempts[subject]) >= n:
            fired.setdefault(subject, _ts(it))
            _merge(hits, subject, attempts[subject])
    return [Finding("box_attempts", box, f"box '{box}' attempted {len(found)} times without being done",
                    [_ref(x) for x in found.values()], fired[box], _ts(list(found.values())[-1]),
                    f"claimed in {_runs(list(found.values()))}; never ticked")
            for box, found in hits.items()]


def repeated_repairs(its: list[dict[str, Any]], n: int) -> list[Finding]:
    seen: dict[tuple[str, str], list[dict[str, object]]] = defaultdict(list)
    for it in its:
        for kind in ("restored", "reverted"):
            for path in it[kind]:
                seen[(kind, str(path))].append(it)
    out = []
    for (kind, path), found in seen.items():
        if len(found) >= n:
            what = "mission boxes restored in" if kind == "restored" else "checker file reverted:"
            out.append(Finding("repeated_repair", f"{kind}:{path}", f"{what} {path}, {len(found)} times",
                               [_ref(x) for x in found], _ts(found[n - 1]), _ts(found[-1]),
                               f"dun {kind} {path} in {_runs(found)}"))
    return out


def repeated_denials(denials: list[dict[str, object]], n: int) -> list[Finding]:
    by_rule: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for d in denials:
        by_rule[str(d.get("rule") or "?")].append(d)
    out = []
    for rule, found in by_rule.items():
        if len(found) >= n:
            what = found[-1].get("command") or found[-1].get("path") or found[-1].get("tool") or ""
            out.append(Finding("repeated_denial", rule, f"guard rule {rule} denied {len(found)} times",
                               [{"run_id": d["run_id"], "iteration": d["iteration"], "time": d["time"]} for d in found],
                               found[n - 1]["ts"], found[-1]["ts"], f"last: {str(what)[:120]}"))
    return out


def _median(ordered: list[float]) -> float:
    """statistics.median of an already sorted list."""
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2


def cost_outliers(its: list[dict[str, Any]], factor: float, min_samples: int) -> list[Finding]:
    prior: list[float] = []  # kept sorted: the median of a history of thousands is read, not re-sorted, per row
    by_run: dict[str, list[tuple[dict[str, object], float]]] = defaultdict(list)
    for it in its:
        cost = it["cost_usd"]
        if cost is None or it.get("cost_estimated"):
            continue  # dun's own charge for a call that reported nothing (a timeout) is not what it cost
        if len(prior) >= min_samples:
            median = _median(prior)
            if median > 0 and cost > factor * median:
                by_run[it["run_id"]].append((it, median))
        bisect.insort(prior, float(cost))
    return [Finding("cost_outlier", run_id, f"{len(found)} iteration(s) cost over {factor:g}x the median",
                    [_ref(x) for x, _ in found], _ts(found[0][0]), _ts(found[-1][0]),
                    "; ".join(f"iteration {x['iteration']}: ${x['cost_usd']:.4f} vs median ${m:.4f}"
                              for x, m in found[:5]))
            for run_id, found in by_run.items()]


def detect(history: History, thresholds: Review | None = None) -> list[Finding]:
    """Every pattern over the whole history, in a stable order; `thresholds` are the `review:` section (default:
    the schema's defaults)."""
    if thresholds is None:
        from dun.config.loader import defaults_only

        thresholds = defaults_only().settings.review
    t = thresholds
    its = history.iterations()
    checks: dict[tuple[str, int], dict[str, int]] = defaultdict(dict)
    for row in history.table("check_results"):
        checks[(row["run_id"], row["iteration"])][row["check_id"]] = row["failing_after"]
    for it in its:
        it["_after"] = checks[(it["run_id"], it["iteration"])]
    denials = history.query("SELECT * FROM guard_decisions WHERE decision = 'deny' ORDER BY ts, run_id, seq")
    unverified = {(d["run_id"], d["iteration"]) for d in history.table("discrepancies")
                  if d["kind"] == "unverified_completion"}
    found = [*claim_streaks(its, t.claim_streak, unverified),
             *repeated_errors(its, t.error_repeats, t.error_window_h),
             *box_attempts(its, history.boxes(), t.box_attempts),
             *repeated_repairs(its, t.repair_repeats),
             *repeated_denials(denials, t.denial_repeats),
             *cost_outliers(its, t.cost_factor, t.cost_min_samples)]
    return sorted(found, key=lambda f: (f.first_ts or 0, f.pattern, f.subject))
