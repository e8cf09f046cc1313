"""The loop's state in memory: dataclasses, converted from and to the JSON records of `.dun/state.json`
(dun/store/records.py declares the file's keys) only where the store reads and writes it."""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field
from typing import cast

from dun.core.kinds import CircuitState
from dun.core.timefmt import now_iso
from dun.store.records import (
    STATE_SCHEMA_VERSION,
    CircuitRecord,
    StartRecord,
    StateRecord,
)


@dataclass
class Breaker:
    """The circuit breaker's state (dun/loop/circuit.py folds iterations into it)."""

    state: str = CircuitState.CLOSED
    no_progress: int = 0
    same_error: int = 0
    last_error: str | None = None
    permission_denials: int = 0
    discrepancies: int = 0
    oscillations: int = 0
    opened_at: float | None = None
    reason: str | None = None  # CircuitReason
    trial: bool = False  # the first iteration after a cooldown decides whether it closes

    @classmethod
    def from_record(cls, record: CircuitRecord) -> Breaker:
        return cls(**{**dataclasses.asdict(cls()), **record})  # an older file lacks some keys

    def to_record(self) -> CircuitRecord:
        return cast(CircuitRecord, dataclasses.asdict(self))


@dataclass
class Start:
    """Where the iteration in progress began: what its conclusion compares against."""

    actionable: list[str] = field(default_factory=list)
    head: str | None = None
    tree: str | None = None
    confirmation: bool = False
    items: dict[str, list[str]] = field(default_factory=dict)  # the actionable checks' items: what progress removes
    checker: dict[str, object] | None = None  # what decides "done" as the agent found it (tamper.py's record)

    @classmethod
    def from_record(cls, record: StartRecord) -> Start:
        return cls(list(record["actionable"]), record["head"], record["tree"], record["confirmation"],
                   dict(record.get("items") or {}), record.get("checker"))


@dataclass
class Blocked:
    """The task the agent said it is blocked on, and how many iterations in a row it said so."""

    task: str
    count: int


def _run_id() -> str:
    import uuid  # here: importing it costs 3 ms of every `dun check`, which makes no state

    return uuid.uuid4().hex[:12]


@dataclass
class LoopState:
    """One run of `dun loop` or of scripts/dun-loop.sh (`.dun/state.json`, saved after every step). A new one is a
    new run."""

    schema_version: int = STATE_SCHEMA_VERSION
    run_id: str = field(default_factory=_run_id)
    status: str = "running"  # running | stopped | complete
    stop_reason: str | None = None  # StopReason
    iteration: int = 0  # iterations opened in this run (an interrupted one counts)
    started_at: str = field(default_factory=now_iso)
    started_epoch: float = field(default_factory=time.time)
    updated_at: str = field(default_factory=now_iso)
    ended_at: str | None = None
    cost_usd_total: float = 0.0
    calls: list[float] = field(default_factory=list)  # epoch seconds of agent calls in the rolling hour
    resume_at: float | None = None  # a usage-limit wait ends here
    circuit: Breaker = field(default_factory=Breaker)
    errors_total: int = 0
    in_progress: int | None = None  # the iteration whose agent may be running
    start: Start | None = None  # where `in_progress` began
    agent_pgid: int | None = None
    agent_started: float | None = None  # the agent's process start time (pid reuse check)
    agent_token: str | None = None  # in the environment of every process of the agent's tree
    agent_tree: list[list[float]] = field(default_factory=list)  # [pid, start time] of the agent's descendants
    call_started: float | None = None
    confirmations: int = 0
    blocked: Blocked | None = None
    last_exit_signal: bool | None = None
    trees: list[str] = field(default_factory=list)  # work-tree hashes of the last iterations (oscillation)
    dun_trees: list[str] = field(default_factory=list)  # of those, dun's own restores and reverts: never oscillation
    costs: list[float] = field(default_factory=list)  # this run's iterations' costs (the budget's reserve)
    unconfirmed: int = 0  # confirmation calls in a row that gave no answer (failed, or no status block)
    stop_detail: str | None = None  # why the stop reason applied, in words
    pid: int | None = None
    calls_left_hour: int | None = None
    budget_left_usd: float | None = None

    @classmethod
    def from_record(cls, record: StateRecord) -> LoopState:
        """The state a validated record holds (`state_problem` found nothing); keys it lacks (an older file) take
        a new run's values."""
        names = {f.name for f in dataclasses.fields(cls)}
        values: dict[str, object] = {k: v for k, v in record.items() if k in names}
        circuit = record.get("circuit")
        values["circuit"] = Breaker.from_record(circuit) if circuit else Breaker()
        start = record.get("start")
        values["start"] = Start.from_record(start) if start else None
        blocked = record.get("blocked")
        values["blocked"] = Blocked(blocked["task"], blocked["count"]) if blocked else None
        return cls(**values)  # type: ignore[arg-type]

    def to_record(self) -> StateRecord:
        """The JSON record, a deep copy (the nested dataclasses as their records)."""
        return cast(StateRecord, dataclasses.asdict(self))

    def update_from(self, record: StateRecord) -> None:
        """Take every value of `record` (this state redacted as written)."""
        other = LoopState.from_record(record)
        for f in dataclasses.fields(self):
            setattr(self, f.name, getattr(other, f.name))
