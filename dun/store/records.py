"""The typed, versioned records dun keeps under `.dun/`: the loop state, the iteration log, the handoff.

They are TypedDicts because they are JSON on disk first: a person reads them, `jq` reads them, and older files
load by filling in the keys they lack (`Store.read_state`). Every key is declared here and nowhere else. In memory
the loop's state is a dataclass (dun/store/state.py), converted where the store reads and writes the file.
"""

from __future__ import annotations

import math
from typing import Any, NotRequired, Required, TypedDict

from dun.core.kinds import CircuitState

STATE_SCHEMA_VERSION = 1
LOG_SCHEMA_VERSION = 1
HANDOFF_SCHEMA_VERSION = 1
COCHANGE_SCHEMA_VERSION = 1

# `.dun/cochange.idx`, the co-change index (dun/hints/index.py builds it and checks every part when it reads it): a
# tuple, not JSON, since dun/core/cache/file.py marshals it. (schema_version, (hints.history, hints.max_commit_files,
# hints.half_life), the last commit learned or "", changes seen, the scale's base, paths by id (a name merged into
# another by a rename is ""), each id's weighted changes, each id's links {id: weight}, deleted ids, the iteration
# logs learned ("RUN:N", "archive:NAME"))
CochangeRecord = tuple[int, tuple[int, int, int], str, int, int, list[str], list[float], list[dict[int, float]],
                       list[int], list[str]]
LIVE_SCHEMA_VERSION = 1
DETECTOR_SCHEMA_VERSION = 1
# `.dun/detector.state`, the deficiency detector's running state (dun/history/resume.py), marshalled as the co-change
# index is: (schema_version, the database it was read from (root, `rewrites` token, counter), the review thresholds in
# `Review`'s field order, the state: a dict of plain values, keyed as `Detector`'s attributes)
DetectorRecord = tuple[int, tuple[str, str, int], tuple[object, ...], dict[str, object]]


class CircuitRecord(TypedDict, total=False):
    state: str  # CircuitState
    no_progress: int
    same_error: int
    last_error: str | None
    permission_denials: int
    discrepancies: int
    oscillations: int
    opened_at: float | None
    reason: str | None  # CircuitReason
    trial: bool  # the first iteration after a cooldown decides whether it closes


class BlockedRecord(TypedDict):
    task: str
    count: int


class StartRecord(TypedDict):
    """Where the iteration in progress began: what its conclusion compares against."""

    actionable: list[str]
    head: str | None
    tree: str | None
    confirmation: bool
    items: NotRequired[dict[str, list[str]]]  # the actionable checks' items (file and text): what progress removes
    checker: NotRequired[dict[str, object]]  # what decides "done" as the agent found it: files, blobs, head (tamper.py)


class StateRecord(TypedDict):
    """`.dun/state.json`: one run of `dun loop` or of scripts/dun-loop.sh, saved after every step (in memory:
    dun.store.state.LoopState, whose fields say what each key holds)."""

    schema_version: int
    run_id: str
    status: str  # running | stopped | complete
    stop_reason: str | None  # StopReason
    iteration: int  # iterations opened in this run (an interrupted one counts)
    started_at: str
    started_epoch: float
    updated_at: str
    ended_at: str | None
    cost_usd_total: float
    calls: list[float]  # epoch seconds of agent calls in the rolling hour
    resume_at: float | None  # a usage-limit wait ends here
    circuit: CircuitRecord
    errors_total: int
    in_progress: int | None  # the iteration whose agent may be running
    start: StartRecord | None  # where `in_progress` began
    agent_pgid: int | None
    agent_started: float | None  # the agent's process start time (pid reuse check)
    agent_token: str | None  # in the environment of every process of the agent's tree
    agent_tree: list[list[float]]  # [pid, start time] of the agent's descendants, refreshed while it runs
    call_started: float | None
    confirmations: int
    blocked: BlockedRecord | None
    last_exit_signal: bool | None
    trees: list[str]  # work-tree hashes of the last iterations (oscillation)
    dun_trees: list[str]  # of those, the ones dun's own restores and reverts produced: never an oscillation
    costs: list[float]  # what this run's iterations cost (the budget's reserve is a typical one of them)
    unconfirmed: int  # confirmation calls in a row that gave no answer (failed, or no status block)
    stop_detail: str | None  # why the stop reason applied, in words (a budget stop: spent, reserved, why)
    pid: int | None
    calls_left_hour: int | None
    budget_left_usd: float | None


# What each state key may hold on disk; anything else makes the file corrupt (never silently a new run).
_NUM = (int, float)
_STATE_TYPES: dict[str, tuple[type, ...]] = {
    "schema_version": (int,), "run_id": (str,), "status": (str,), "stop_reason": (str, type(None)),
    "iteration": (int,), "started_at": (str,), "started_epoch": _NUM, "updated_at": (str,),
    "ended_at": (str, type(None)), "cost_usd_total": _NUM, "calls": (list,), "resume_at": (*_NUM, type(None)),
    "circuit": (dict,), "errors_total": (int,), "in_progress": (int, type(None)), "start": (dict, type(None)),
    "agent_pgid": (int, type(None)), "agent_started": (*_NUM, type(None)),
    "agent_token": (str, type(None)), "agent_tree": (list,), "call_started": (*_NUM, type(None)),
    "confirmations": (int,), "blocked": (dict, type(None)), "last_exit_signal": (bool, type(None)),
    "trees": (list,), "dun_trees": (list,), "costs": (list,), "unconfirmed": (int,),
    "stop_detail": (str, type(None)), "pid": (int, type(None)), "calls_left_hour": (int, type(None)),
    "budget_left_usd": (*_NUM, type(None)),
}
RUN_STATUSES = ("running", "stopped", "complete")


def _finite(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value) and value >= 0


def state_problem(data: object) -> str | None:
    """Why `data` is not a loop state this version can resume, or None."""
    if not isinstance(data, dict):
        return "not a JSON object"
    version = data.get("schema_version", STATE_SCHEMA_VERSION)
    if version != STATE_SCHEMA_VERSION:
        return f"schema_version {version!r}; this dun reads {STATE_SCHEMA_VERSION}"
    for key, types in _STATE_TYPES.items():
        if key not in data:
            continue
        value = data[key]
        if not isinstance(value, types) or (isinstance(value, bool) and bool not in types):
            return f"{key}: {type(value).__name__} {str(value)[:40]!r} is not a valid value"
        if isinstance(value, float) and not math.isfinite(value):
            return f"{key}: {value} is not a finite number"
        if isinstance(value, int | float) and not isinstance(value, bool) and value < 0 and key != "schema_version":
            return f"{key}: {value} is negative"
    if data.get("status", "running") not in RUN_STATUSES:
        return f"status: {data['status']!r} is not one of {', '.join(RUN_STATUSES)}"
    if any(not isinstance(c, int | float) or isinstance(c, bool) or not math.isfinite(c)
           for c in data.get("calls", [])):
        return "calls: not a list of times"
    for key in ("trees", "dun_trees"):
        if any(not isinstance(t, str) for t in data.get(key, [])):
            return f"{key}: not a list of hashes"
    if any(not _finite(c) for c in data.get("costs", [])):
        return "costs: not a list of amounts"
    if any(not isinstance(p, list) or len(p) != 2 or not all(_finite(n) for n in p)
           for p in data.get("agent_tree", [])):
        return "agent_tree: not a list of [pid, start time]"
    circuit = data.get("circuit") or {}
    if circuit.get("state", CircuitState.CLOSED) not in tuple(CircuitState):
        return f"circuit.state: {circuit.get('state')!r} is not a circuit state"
    return None


class Box(TypedDict, total=False):
    """A mission box as `.dun/tasks.json` (the task ratchet's ledger) records it."""

    id: str  # FILE#HASH.N: the N-th box of that text in the file
    file: str
    line: int
    text: str
    hash: str
    checked: bool
    verify: str | None  # the box's `verify:` command, when it has one
    raw: str  # the line as written, to restore it


class DiscrepancyRecord(TypedDict, total=False):
    """What trust verification or the review gate found in one iteration (`verification.discrepancies[]`): its kind
    (DiscrepancyKind), what the agent is told, and the facts of its kind (in memory: dun.trust.claims.Discrepancy)."""

    kind: Required[str]
    detail: Required[str]
    claim: str  # unverified_completion of a claim: the claim and the check that still fails
    check: str
    claimed: int | str  # phantom_changes: the FILES_MODIFIED the agent gave
    task: Box  # task_tampered, unverified_completion of a box: the box as the ledger had it
    flip: bool  # a box ticked without evidence (unticked again on restore)
    paths: list[str]  # checker_tampered: what changed, and how to put it back
    diff: str
    head: str | None
    existed: list[str]
    blobs: dict[str, str]
    tree: str | None  # oscillation: the tree that came back
    deleted: list[str]  # tests_removed
    count_before: int
    count_after: int


class VerificationLog(TypedDict, total=False):
    """An iteration's `verification` (dun/trust/verify.Verification.to_log)."""

    discrepancies: Required[list[DiscrepancyRecord]]
    notes: Required[list[str]]
    restored: Required[list[str]]
    reverted: Required[list[str]]
    tasks: dict[str, list[str]]
    committed: list[str]
    review: dict[str, object]


class CheckCount(TypedDict):
    """The actionable checks before or after an iteration (`checks_before`, `checks_after`)."""

    actionable: int
    ids: list[str]


class Progress(TypedDict, total=False):
    """What an iteration changed, as git tells it (`progress`)."""

    head_before: str | None
    head_after: str | None
    commits: list[str]
    files_changed: int
    tree_hash: str | None
    newly_passing: list[str]
    paths: list[str]


class IterationLog(TypedDict, total=False):
    """`.dun/logs/iteration-N.json`: opened before the agent runs, completed when its answer was judged."""

    schema_version: int
    iteration: int
    run_id: str | None
    started_at: str
    ended_at: str
    agent: str
    argv: list[str]
    sandbox: str  # bubblewrap | off: how the agent and the checks that judged it were confined
    protection: str  # when weaker than asked for or than the default: why (sandbox off by config, bwrap missing)
    confirmation: bool
    prompt_file: str
    out_file: str
    err_file: str
    checks_before: CheckCount
    baseline_changes: list[str]  # what decides "done" changed while no agent ran (since the last iteration or run)
    checks_after: CheckCount
    duration_s: float
    exit_code: int | None
    timed_out: bool
    interrupted: bool
    cost_usd: float | None
    cost_estimated: bool
    usage: dict[str, object] | None  # the agent's token counts, as it reported them
    session_id: str | None
    error_kind: str | None  # ErrorKind
    error: str | None
    reset_at: float | None
    status_block: dict[str, Any] | None
    parse_error: str | None
    parse_outcome: str
    answer_shape: str
    agent_facts: dict[str, object]
    progress: Progress
    permission_denials: int
    flags: list[str]
    circuit: CircuitRecord
    verification: VerificationLog
    decision: dict[str, object]  # {action, reason, wait_s}


class Handoff(TypedDict, total=False):
    """`.dun/handoff.json`: what one iteration leaves the next, built from facts, never free text."""

    schema_version: int
    written_at: str
    iteration: int | None
    outcome: str
    status: dict[str, Any] | None
    error: str | None
    agent: dict[str, object]
    git: dict[str, Any]
    discrepancies: list[str]


class LiveDecision(TypedDict):
    iteration: int | None  # None: a decision taken before any iteration opened (a wait, a stop)
    action: str  # Action
    reason: str
    at: float  # epoch seconds


class LiveRecord(TypedDict):
    """`.dun/live.json`: what a loop is doing now, rewritten at every change of phase (`dun watch` shows it; a fleet
    registry may read it as a heartbeat). Times are epoch seconds; the agent's output is read from `out_file`."""

    schema_version: int
    run_id: str
    pid: int  # the process driving the loop: `dun loop`, or the script calling `dun respond --decide`
    pid_started: float | None  # its start time (clock ticks since boot): a reused pid is not the loop
    driver: str  # loop (`dun loop`) | shell (scripts/dun-loop.sh, one `dun respond --decide` step per process)
    agent: str
    phase: str  # LivePhase
    iteration: int  # iterations opened in this run
    max_iterations: int
    in_progress: int | None  # the iteration whose agent may be running
    call_started: float | None  # when the agent call of `in_progress` started
    out_file: str | None  # the agent's stdout of `in_progress`, relative to `.dun/logs/`
    boxes_done: int | None  # the mission's ticked boxes (None: no mission file)
    boxes_total: int | None
    cost_usd: float  # spent in this run
    budget_usd: float | None  # loop.max_budget_usd (None: no cap)
    decisions: list[LiveDecision]  # the last few, oldest first
    wait_until: float | None  # a wait in progress ends here
    wait_reason: str | None
    stop_reason: str | None
    started_epoch: float  # when the run started
    updated: float
