"""Every enumeration dun writes to a file, prints, or returns as an exit code, in one place.

The members are `str`/`int` enums, so they compare equal to the plain values found in JSON files and scripts.
The README's tables of exit codes, stop reasons and discrepancy kinds are tested against these.
"""

from __future__ import annotations

import enum


class ExitCode(enum.IntEnum):
    """What `dun` returns. `STEP_*` are `dun respond --decide`'s answers to scripts/dun-loop.sh."""

    OK = 0  # nothing actionable / the run completed / the answer parsed
    WORK_REMAINS = 1  # checks are actionable / the loop stopped with work remaining
    USAGE = 2  # bad flags, config, manifest, or a plugin that cannot load
    INTERNAL = 3  # a bug in dun: one line on screen, the traceback in a crash log
    NO_BLOCK = 4  # `dun respond`: the answer holds no valid status block
    UNCONFIRMED = 5  # `dun loop` stopped `unconfirmed`: the checks pass, the agent never confirmed
    STEP_WAIT = 10  # `--decide`: wait SECONDS REASON, then ask again
    STEP_COMPLETE = 20  # `--decide`: stop complete
    STEP_STOPPED = 21  # `--decide`: stop REASON (work remains)
    AGENT_TIMEOUT = 124  # what `timeout` returns: the shell driver's agent ran out of time
    SIGINT = 130
    SIGTERM = 143


class Action(enum.StrEnum):
    """What the loop does after a decision."""

    CONTINUE = "continue"
    WAIT = "wait"
    STOP = "stop"


class StopReason(enum.StrEnum):
    """Why a run stopped: `state.json`'s `stop_reason` and the report's headline."""

    COMPLETE = "complete"  # the checks pass and the agent agrees (the dual gate)
    STOP_REQUESTED = "stop_requested"  # `dun stop` / .dun/STOP
    INTERRUPTED = "interrupted"  # SIGINT, SIGTERM or SIGHUP
    CIRCUIT_OPEN = "circuit_open"
    MAX_ITERATIONS = "max_iterations"
    MAX_DURATION = "max_duration"
    BUDGET = "budget"
    ERROR_THRESHOLD = "error_threshold"
    AGENT_BLOCKED = "agent_blocked"  # STATUS: BLOCKED twice on the same task
    TASK_TAMPERED = "task_tampered"  # trust.on_task_tamper: stop
    CHECKER_TAMPERED = "checker_tampered"  # trust.on_checker_tamper: stop
    SHARED_BUDGET = "shared_budget"  # fleet.budget_usd_per_day spent by this agent's loops of the fleet store
    DISK_FULL = "disk_full"  # no space left to write the agent's output or dun's records
    UNCONFIRMED = "unconfirmed"  # the checks pass, but the confirmation calls gave no answer (exit 5)


class WaitReason(enum.StrEnum):
    """Why the loop waits before the next agent call."""

    USAGE_LIMIT = "usage_limit"
    RATE_LIMIT = "rate_limit"
    HOURLY_CALL_LIMIT = "hourly_call_limit"
    SHARED_CALL_LIMIT = "shared_call_limit"  # the hourly window this agent's loops of the fleet store share
    FLEET_STORE = "fleet_store"  # the fleet store cannot be reached (fleet.on_store_lost: wait)


class LivePhase(enum.StrEnum):
    """What a loop is doing now (`phase` in `.dun/live.json`, shown by `dun watch`)."""

    STARTING = "starting"  # the run starts or resumes
    CHECKS = "checks"  # the checks run before an iteration
    AGENT = "agent"  # the agent runs
    JUDGING = "judging"  # the answer is parsed, the checks run again, the claims are verified
    DECIDED = "decided"  # the iteration is judged; the next one starts (or a cooldown passes)
    WAITING = "waiting"  # a limit's wait, until `wait_until`
    STOPPED = "stopped"  # the run stopped (`stop_reason`)


class ContinueReason(enum.StrEnum):
    WORK_REMAINS = "work_remains"
    CONFIRM = "confirm"  # checks pass, the agent has not agreed yet: a confirmation iteration


class ErrorKind(enum.StrEnum):
    """How a failed agent call is classified (`error_kind` in the iteration log)."""

    RATE_LIMIT = "rate_limit"
    USAGE_LIMIT = "usage_limit"
    AUTH = "auth"
    NETWORK = "network"
    BUDGET = "budget"
    MAX_TURNS = "max_turns"
    OTHER = "other"


LIMIT_KINDS = (ErrorKind.RATE_LIMIT, ErrorKind.USAGE_LIMIT)  # waiting, not failing


class DiscrepancyKind(enum.StrEnum):
    """A claim or change that dun could not verify (`verification.discrepancies[].kind`)."""

    UNVERIFIED_COMPLETION = "unverified_completion"
    EMPTY_COMPLETION = "empty_completion"
    PHANTOM_CHANGES = "phantom_changes"
    TASK_TAMPERED = "task_tampered"
    CHECKER_TAMPERED = "checker_tampered"
    TESTS_REMOVED = "tests_removed"
    OSCILLATION = "oscillation"
    REVIEW_REJECTED = "review_rejected"  # the review gate's reviewers rejected the iteration (gate.reviewers)


class NotifyEvent(enum.StrEnum):
    """What `notify.events` can name (docs/history.md)."""

    COMPLETE = "complete"
    STOPPED = "stopped"
    CIRCUIT_OPEN = "circuit_open"
    WAITING = "waiting"  # a usage or rate limit, with the resume time
    BUDGET = "budget"  # notify.budget_fraction of loop.max_budget_usd spent
    TAMPERING = "tampering"  # tampering or unverified claims
    DEFICIENCY = "deficiency"  # a new review item


class CircuitState(enum.StrEnum):
    CLOSED = "CLOSED"
    HALF_OPEN = "HALF_OPEN"
    OPEN = "OPEN"


class CircuitReason(enum.StrEnum):
    """Why the breaker opened (`circuit.reason`)."""

    NO_PROGRESS = "no_progress"
    SAME_ERROR = "same_error"
    PERMISSION_DENIED = "permission_denied"
    UNTRUSTWORTHY = "untrustworthy"  # discrepancies in a row
    OSCILLATION = "oscillation"


class PaperStatus(enum.StrEnum):
    """A paper's `status` in `.dun/papers.jsonl` (`dun papers`)."""

    NEW = "new"  # polled, not yet looked at: the `papers-unread` check lists it
    READ = "read"  # `dun papers read ID`: looked at, nothing to do
    MISSION = "mission"  # `dun papers mission ID` wrote a deep-dive mission for it
