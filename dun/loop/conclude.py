"""Judging one iteration after its agent answered: the error, the checks again, git, trust verification, the
handoff, the policy's decision and the completed log record."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from dun.agents.base import AgentAdapter
from dun.agents.limits import AgentError
from dun.agents.prices import has_tokens
from dun.answer.handoff import build_handoff
from dun.answer.transcript import ParseResult
from dun.core.errors import ConfigError
from dun.core.git import changed_paths, diff_stat, recent_commits
from dun.core.kinds import ErrorKind
from dun.core.timefmt import now_iso
from dun.engine.model import MORE_PREFIX, Item, Report
from dun.engine.session import Session
from dun.hints.index import MAX_LOG_PATHS
from dun.loop.policy import Decision, IterationOutcome, after_iteration, call_cap, reserve
from dun.loop.review import review
from dun.store.records import IterationLog
from dun.store.state import LoopState, Start

if TYPE_CHECKING:
    from dun.config.sections import Settings

MAX_ITEMS = 500  # the items of one check remembered at an iteration's start (progress on it)


def item_key(item: Item) -> str:
    """An item as progress sees it: its file and text, not its line (a ticked box shifts no other box, an edit
    above a test moves its line without touching it)."""
    return f"{item.file or ''}: {item.text}"


def progressed_checks(start: Start, after: Report, newly_passing: list[str]) -> frozenset[str]:
    """The checks with real progress this iteration: newly passing, or an item of theirs gone (a box ticked, a test
    fixed), whatever else they still list."""
    now = {r.id: {item_key(i) for i in r.items} for r in after.actionable()}
    moved = set(newly_passing)
    for check_id, keys in start.items.items():
        gone = set(keys) - now.get(check_id, set())
        if check_id in now and any(not key.split(": ", 1)[-1].startswith(MORE_PREFIX) for key in gone):
            moved.add(check_id)
    return frozenset(moved)


@dataclass
class AgentFacts:
    """How the agent call ended, as the driver saw it."""

    exit_code: int | None
    timed_out: bool = False
    start_error: str | None = None  # the command could not start
    interrupted: bool = False  # we stopped it (signal, `dun stop --now`): not the agent's failure
    duration_s: float | None = None


def agent_error(adapter: AgentAdapter, settings: Settings, parsed: ParseResult, facts: AgentFacts,
                stdout_tail: str, stderr_tail: str) -> AgentError | None:
    if facts.interrupted:
        return None
    if facts.start_error:
        return AgentError(ErrorKind.OTHER, facts.start_error, None)
    if facts.timed_out:
        return AgentError(ErrorKind.OTHER, f"timed out after {settings.loop.iteration_timeout_s:g}s", None)
    return adapter.classify(parsed.agent, facts.exit_code, stdout_tail, stderr_tail)


def known_cost(value: float | None) -> float | None:
    """A reported cost that is not a finite, non-negative number is unknown, never a refund or a disabled cap."""
    if value is None or isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) and value >= 0 else None


def check_pricing(adapter: AgentAdapter, settings: Settings) -> None:
    """With a budget, an agent whose usage dun cannot price is a config error before the run, not a silent $0."""
    if settings.loop.max_budget_usd > 0:
        why = adapter.pricing(settings.agent)
        if why:
            raise ConfigError(why)


def judge(session: Session, settings: Settings, state: LoopState, adapter: AgentAdapter, n: int,
          parsed: ParseResult, start: Start, log: IterationLog, facts: AgentFacts, stdout_tail: str,
          stderr_tail: str) -> tuple[Decision, Report, tuple[str | None, str | None]]:
    """Fold the iteration into `state` and `log` (in place). Returns the decision, and the checks, HEAD and the
    work-tree hash afterwards (the next iteration may reuse them)."""
    root = session.root
    error = agent_error(adapter, settings, parsed, facts, stdout_tail, stderr_tail)
    head_after, tree_after = session.look()
    after = session.report()
    after_ids = [r.id for r in after.actionable()]
    paths: list[str] | None = None  # what the iteration changed, for the co-change hints (dun/hints/)
    if start.tree and tree_after:
        paths = changed_paths(root, start.tree, tree_after) if tree_after != start.tree else []
        files_changed = len(paths)
    else:  # no tree hash recorded at the start: compare with the starting commit instead
        files_changed = diff_stat(root, start.head)[1] if start.head else 0
    newly_passing = sorted(set(start.actionable) - set(after_ids))
    moved = start.head and head_after and head_after != start.head
    commits = recent_commits(root, 50, since=start.head) if moved else []
    # what the iteration's commits carry: committing work an earlier iteration left uncommitted is a change too
    committed = len(changed_paths(root, str(start.head), str(head_after))) if moved else 0
    from dun.trust.verify import remember_tree, verify_iteration

    verification = verify_iteration(session, settings, state, parsed.block, after, files_changed, committed,
                                    start.tree, tree_after, newly_passing,
                                    progressed_checks(start, after, newly_passing), start.checker)
    repaired = bool(verification.restored or verification.reverted)
    if repaired:  # dun repaired the tree: judge the repaired state
        head_after, tree_after = session.look()
        after = session.report()
        after_ids = [r.id for r in after.actionable()]
        newly_passing = sorted(set(start.actionable) - set(after_ids))
    remember_tree(state, settings.trust.oscillation_window, tree_after, by_dun=repaired)
    progress = bool(start.head != head_after or files_changed or newly_passing)
    cost = known_cost(adapter.cost(parsed.agent, settings.agent))
    estimated = False
    budget = settings.loop.budget_per_iteration_usd and call_cap(state, settings)  # what the call was allowed
    spent = facts.timed_out or parsed.agent.get("cost_usd") is not None or has_tokens(parsed.agent)
    if cost is None and budget and spent:
        # a killed call reports nothing, a garbled one lies, tokens without a price are not free: charge a typical
        # iteration of this run (never more than the call's cap), or the cap before any iteration was priced
        typical = reserve(state)[0]
        cost, estimated = (min(typical, budget) if typical else budget), True
    denials = len(parsed.agent.get("permission_denials") or [])
    gate = None if facts.interrupted or error is not None else review(
        session, settings, n, parsed.block, start, after, newly_passing, tree_after)
    if gate is not None:  # a rejection is one more discrepancy; the reviewers' cost is spent too
        verification.discrepancies.extend(gate.discrepancies)
        cost = (cost or 0.0) + gate.cost_usd
        verification.review = gate.to_dict()  # logged as verification.review
    found = verification.discrepancies
    judged, confirmation = parsed, start.confirmation
    if gate is not None and gate.outcome == "rejected" and parsed.block is not None:
        # a rejected completion completes nothing: its EXIT_SIGNAL is set aside, and it is no confirmation
        judged = replace(parsed, block=replace(parsed.block, exit_signal=False))
        confirmation = False
    outcome = IterationOutcome(judged, error, cost or 0.0, progress, after_ids, confirmation, denials,
                               facts.interrupted, found, None if facts.interrupted else verification.stop,
                               cost_estimated=estimated)
    decision = after_iteration(state, settings, outcome)
    handoff = build_handoff(session.store, parsed, n, {"base_head": start.head, "head": head_after,
                                                       "commits": commits[:20], "files_changed": files_changed})
    handoff["discrepancies"] = [d.detail for d in found]
    session.store.write_handoff(handoff)
    log["verification"] = verification.to_log()
    if facts.interrupted:
        log["interrupted"] = True
    if facts.duration_s is not None:
        log["duration_s"] = round(facts.duration_s, 3)
    log.update({
        "ended_at": now_iso(), "exit_code": facts.exit_code, "timed_out": facts.timed_out, "cost_usd": cost,
        "cost_estimated": estimated, "session_id": parsed.agent.get("session_id"),
        "error_kind": error.kind if error else None, "error": error.message if error else None,
        "reset_at": error.reset_at if error else None,
        "status_block": parsed.block.to_dict() if parsed.block else None,
        "parse_error": parsed.error if parsed.outcome != "parsed" else None,
        "parse_outcome": parsed.outcome, "answer_shape": parsed.shape,
        "checks_after": {"actionable": len(after_ids), "ids": after_ids},
        "progress": {"head_before": start.head, "head_after": head_after, "commits": commits,
                     "files_changed": files_changed, "tree_hash": tree_after, "newly_passing": newly_passing,
                     **({"paths": paths[:MAX_LOG_PATHS]} if paths is not None else {})},
        "usage": parsed.agent.get("usage") if isinstance(parsed.agent.get("usage"), dict) else None,
        "permission_denials": denials, "flags": outcome.flags, "circuit": state.circuit.to_record(),
        "decision": decision.to_dict(),
    })
    return decision, after, (head_after, tree_after)
