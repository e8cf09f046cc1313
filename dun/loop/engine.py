"""The iteration engine: the steps of one iteration, written once, for both drivers.

    start     start a run, or resume one (an iteration left open by a kill is closed as interrupted)
    next      stop or wait (policy), else run the checks, render the prompt and open iteration N
    (agent)   `dun loop` runs the adapter's command in-process; scripts/dun-loop.sh runs its own command
    conclude  parse the answer, re-run the checks, verify the claims, decide (policy), log, save
    finish    record the stop reason and write the report

`dun loop` (driver.py) calls these in one process; `dun respond --decide` (stepper.py) calls one step per process.
Every step starts from `.dun/state.json` and ends by saving it, so both drivers take the same decision from the
same state, whichever step a kill interrupted.
"""

from __future__ import annotations

import copy
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from dun.agents.base import AgentAdapter, AgentRequest, Invocation, guard_command
from dun.agents.registry import agent_adapters
from dun.agents.runner import output_tail, process_start_time, stop_recorded_agent
from dun.answer.handoff import record_iterate
from dun.core.errors import UsageError
from dun.core.git import head
from dun.core.kinds import Action, ExitCode, LivePhase, StopReason
from dun.core.ratewindow import calls_left
from dun.core.reaper import new_token
from dun.core.redact import redact_argv
from dun.core.timefmt import now_iso
from dun.engine.model import Report
from dun.engine.session import Session
from dun.history.incremental import Detector
from dun.loop import circuit as breaker
from dun.loop import confinement, operator
from dun.loop.conclude import MAX_ITEMS, AgentFacts, item_key, judge
from dun.loop.fleetside import FleetSide
from dun.loop.live import LiveWriter, decision_entry, record_live
from dun.loop.policy import Decision, before_iteration, call_cap, nothing_actionable
from dun.loop.report import write_report
from dun.prompt.sections import render
from dun.store.records import (
    LOG_SCHEMA_VERSION,
    IterationLog,
    LiveDecision,
    LiveRecord,
)
from dun.store.state import LoopState, Start

if TYPE_CHECKING:
    from dun.config.sections import Settings

SHELL_AGENT = "shell"


def effective_config(session: Session, overrides: Mapping[str, object]) -> Settings:
    """The typed config with command-line overrides (`loop.max_iterations`, `agent.name`, ...) on top. `--agent
    NAME` with an `agent.command` configured for another agent is a usage error: that command line is the other
    agent's, and would run in NAME's place."""
    chosen, agent = overrides.get("agent.name"), session.settings.agent
    if chosen is not None and chosen != agent.name and agent.command and chosen in agent_adapters(session.pm):
        raise UsageError(f"--agent {chosen}: agent.command is set for agent '{agent.name}' and would run in its "
                         f"place; pass --agent {agent.name}, or remove agent.command from the config")
    return session.settings.with_flags(overrides)


def redact(argv: list[str], secrets: list[str]) -> list[str]:
    out = []
    for arg in argv:
        for secret in secrets:
            if secret and secret in arg:
                arg = arg.replace(secret, f"<prompt: {len(secret)} chars>" if len(secret) > 80 else "<redacted>")
        out.append(arg)
    return out


@dataclass
class Opened:
    """An iteration whose prompt is written and whose agent may now run."""

    n: int
    prompt: str
    prompt_file: Path
    confirmation: bool
    invocation: Invocation | None  # None for the shell driver, which runs its own command


def exit_code_for(reason: str, signalled_term: bool = False) -> int:
    if reason == StopReason.COMPLETE:
        return ExitCode.OK
    if reason == StopReason.INTERRUPTED:
        return ExitCode.SIGTERM if signalled_term else ExitCode.SIGINT
    if reason == StopReason.UNCONFIRMED:
        return ExitCode.UNCONFIRMED
    return ExitCode.WORK_REMAINS


def adapter_for(session: Session, settings: Settings) -> AgentAdapter:
    adapters = agent_adapters(session.pm)
    name = settings.agent.name
    if name not in adapters:
        raise UsageError(f"unknown agent '{name}'; choose from {', '.join(sorted(adapters))}")
    return adapters[name]


class Engine:
    def __init__(self, session: Session, settings: Settings, adapter: AgentAdapter, external: bool = False,
                 say: Callable[[str], None] | None = None, overrides: Mapping[str, object] | None = None) -> None:
        self.session = session
        self.settings = settings
        self.overrides = overrides or {}  # the command line's, on top of the config (a reload keeps them)
        self.outside: list[str] = []  # what decides "done" changed while no agent ran, for the next log
        self.adapter = adapter
        self.external = external  # the shell driver runs the agent: no argv of ours, no guard wiring
        self.store = session.store
        self.say = say or (lambda text: None)
        self.state = LoopState()
        self.last: tuple[Report, str | None, str | None] | None = None  # checks, HEAD, tree after an iteration
        self.live_record: LiveRecord | None = None  # the last one written
        self.live_writer = LiveWriter(self.store)
        # the deficiency detector, kept between iterations: it reads only what is new (the shell driver's process
        # lives one step: it resumes the one the store keeps, `operator.on_iteration(resumed=True)`)
        self.detector = Detector()
        # the shared limits and the registry of loops
        self.fleet = FleetSide(self.store, settings.fleet, settings.agent.name, self.say,
                               quiet_s=settings.loop.iteration_timeout_s + settings.loop.kill_grace_s + 60
                               if external else None)
        # the OS sandbox in effect for the agent and the checks that judge it (a sandbox that was required and
        # cannot run is a config error before the run starts); the shell driver wraps its own agent
        # (`dun sandbox --loop -- CMD`), its checks are confined here alike
        self.protection = confinement.resolve(self.settings)
        if self.protection.mode == "bubblewrap":
            confinement.confine_checks(self.session, self.settings, self.store.cache_dir)

    @property
    def sandbox(self) -> str:
        """"bubblewrap" or "off"."""
        return self.protection.mode

    def confine(self, inv: Invocation) -> Invocation:
        """The invocation run inside the sandbox, when there is one."""
        if self.sandbox != "bubblewrap":
            return inv
        return confinement.confine_agent(self.session, self.settings, inv, self.adapter.state_dirs,
                                         self.store.cache_dir / self.adapter.name)

    def preflight(self) -> None:
        """An agent that cannot start inside the sandbox is refused (exit 2) before iteration 1."""
        if self.external or self.sandbox != "bubblewrap":
            return
        probe = self.store.cache_dir / "preflight.prompt.md"
        inv = self.confine(self.adapter.build(self.request("", probe, wire_guard=False)))
        confinement.preflight(inv, version_flag=not self.settings.agent.command)

    # -- state ---------------------------------------------------------------------------------------------
    def save(self) -> None:
        loop, state = self.settings.loop, self.state
        state.calls_left_hour = calls_left(state.calls, loop.max_calls_per_hour, time.time())
        cap = loop.max_budget_usd
        state.budget_left_usd = round(cap - state.cost_usd_total, 4) if cap > 0 else None
        self.store.write_state(state)
        self.fleet.beat(state)

    def live(self, phase: LivePhase, decision: LiveDecision | None = None, wait_until: float | None = None,
             wait_reason: str | None = None) -> None:
        """The live record (`.dun/live.json`, what `dun watch` shows), now in `phase`."""
        self.live_record = record_live(self.live_writer, self.state, self.settings, phase, decision, wait_until,
                                       wait_reason, previous=self.live_record, shell=self.external)

    def starting_state(self, fresh: bool = False,
                       reset_circuit: bool = False) -> tuple[LoopState, LoopState | None, bool]:
        """The state a run starts from, the previous run's state, and whether this is a new run (pure: it writes
        nothing, so `--dry-run` uses it too)."""
        previous = self._read_previous(fresh)
        new_run = previous is None or fresh or previous.status == "complete"
        if new_run:
            state = LoopState()
            if previous is not None:  # what outlives a run: the call window, a pending wait, the breaker
                state.calls, state.resume_at = list(previous.calls), previous.resume_at
                if not fresh:  # `--fresh` is a new start: its circuit is closed
                    state.circuit = previous.circuit
        else:
            assert previous is not None
            state = copy.deepcopy(previous)
        if reset_circuit:
            state.circuit = breaker.new_circuit()
        state.circuit = breaker.on_start(state.circuit, self.settings.circuit.cooldown_min, time.time())
        return state, previous, new_run

    def _read_previous(self, fresh: bool) -> LoopState | None:
        from dun.store.store import StateCorrupt

        try:
            return self.store.read_state()
        except StateCorrupt as exc:
            if not fresh:
                raise
            self.say(f"{str(exc).split(';')[0]}; kept as {self.store.set_aside_state()}; starting a new run")
            return None

    def start(self, fresh: bool = False, reset_circuit: bool = False) -> LoopState:
        """Start a new run or resume the one in progress; the state is saved. A new run archives the previous
        run's logs (never overwriting them) and records the boxes and the checker fingerprint it is held to."""
        self.preflight()
        self.store.refuse_links()
        confinement.before_dun_git(self.session.root, self.say)
        state, previous, new_run = self.starting_state(fresh, reset_circuit)
        self.state = state
        was = previous.circuit if previous is not None else breaker.new_circuit()
        if fresh and was.state == breaker.OPEN:
            self.say(f"--fresh: a new run with a closed circuit (it was OPEN: {was.reason})")
        self.say(self.protection.note)
        if new_run:
            if previous is not None or self._stray_logs():
                target = self.store.archive_run(previous.run_id if previous else None)
                self.say(f"previous run {previous.run_id if previous else '(no state)'} archived in {target}")
        else:
            self._close_interrupted()
        from dun.trust.verify import rebaseline

        changes = rebaseline(self.session, self.settings, head(self.session.root), new_run=new_run)[1]
        self.outside = changes  # logged with the next iteration (the shell driver starts before every iteration)
        if new_run:
            self._mission_note()
        if changes:  # made outside any iteration: the operator's, never held against the agent
            since = "the last iteration" if previous and previous.status == "running" and not new_run \
                else "the last run"
            self.say(f"changed since {since}, taken as the new baseline: {', '.join(changes[:8])}"
                     + (f" and {len(changes) - 8} more" if len(changes) > 8 else ""))
        state.status, state.stop_reason, state.stop_detail, state.ended_at = "running", None, None, None
        state.pid = os.getpid()
        self.save()
        self.live(LivePhase.STARTING)
        operator.on_run_start(self.session.root, state.to_record(), self.settings)
        return state

    def _mission_note(self) -> None:
        """A mission with no boxes gives the loop no work: said at the start, naming the file."""
        from dun.trust import tasks

        ledger = tasks.load(self.session.root)
        if ledger is not None and not ledger[1]:
            what = f"{', '.join(ledger[0])} has no boxes (`- [ ] ...` lines)" if ledger[0] else \
                f"there is no mission file ({self.session.settings.iterate.mission_file})"
            self.say(f"warning: {what}: the mission gives the loop no work, only the other checks decide 'done'")

    def _stray_logs(self) -> bool:
        """Logs of an earlier run with no state to name it: they are archived, never overwritten."""
        return self.store.logs_dir.is_dir() and any(self.store.logs_dir.glob("iteration-*.json"))

    def _close_interrupted(self) -> None:
        """After a crash or kill -9: the unfinished iteration is logged as interrupted and its agent killed."""
        state = self.state
        killed = stop_recorded_agent(state.agent_pgid, state.agent_started, state.agent_tree,
                                     state.agent_token)
        if killed:
            self.say(f"killed the agent left running by the previous loop (process group {state.agent_pgid})")
        n = state.in_progress
        if n:
            log = self.store.read_log(n) or {"schema_version": LOG_SCHEMA_VERSION, "iteration": n,
                                             "run_id": state.run_id}
            if not log.get("ended_at"):
                log.update({"ended_at": now_iso(), "decision": {"action": "stop", "reason": "interrupted"},
                            "interrupted": True})
                start = state.start
                checker = start.checker if start is not None else None
                if checker:  # a killed iteration's changes to the judge are still the agent's, not a baseline
                    from dun.trust import tasks
                    from dun.trust.verify import Verification, checker_changes

                    tasks.hold(self.session.root)

                    found, reverted = checker_changes(self.session, self.settings, checker)
                    if found:
                        log["verification"] = Verification(found, [], reverted=reverted).to_log()
                        self.say(f"iteration {n}, interrupted, changed what decides 'done': "
                                 f"{', '.join((found[0].paths or [])[:5])}" + (" (reverted)" if reverted else ""))
                    if reverted:
                        self._reload()
                self.store.write_log(log)
            state.iteration = max(state.iteration, n)
            call = state.call_started
            if call:  # the lost call still counts against the hourly limit
                state.calls = sorted([*state.calls, call])
            self.say(f"resuming after iteration {n}, which was interrupted")
        self._close_call()

    def _close_call(self) -> None:
        """No iteration in progress: nothing of its agent is left to watch."""
        state = self.state
        state.in_progress, state.start, state.call_started = None, None, None
        state.agent_pgid, state.agent_started, state.agent_token, state.agent_tree = None, None, None, []

    def _reload(self) -> None:
        """The config and manifests were loaded before a revert put them back: read them again, so that the run
        goes on under what it was held to, not under what a killed agent left."""
        from dun.engine.session import open_session

        self.session = open_session(self.session.root)
        self.settings = effective_config(self.session, self.overrides)  # the driver reads it from here

    def attach(self, n: int) -> LoopState:
        """The shell driver's answer step: the run must have iteration `n` open."""
        state = self.store.read_state()
        if state is None or state.status != "running" or not state.in_progress:
            raise UsageError("no iteration in progress: run `dun respond --decide --before` first")
        if state.in_progress != n:
            raise UsageError(f"--iteration {n} does not match the iteration in progress ({state.in_progress})")
        self.state = state
        return state

    # -- the steps -----------------------------------------------------------------------------------------
    def next(self, stop_requested: bool) -> Decision | Opened:
        """A stop or wait that is due, or the next iteration opened with its prompt written."""
        decision = before_iteration(self.state, self.settings, stop_requested)
        if decision is not None:
            return decision
        self.live(LivePhase.CHECKS)
        look = self.session.look()
        report = self._reuse(look) or self.session.report()
        confirmation = False
        if not report.actionable():
            done = nothing_actionable(self.state, self.settings)
            if done is not None:
                return done
            confirmation = True
        # last: a call is reserved only when one will be made. The limits this agent's loops share through the
        # fleet store (`fleet.shared_limits`): one hourly window, one daily budget, one usage-limit pause
        shared = self.fleet.reserve(self.settings.loop.max_calls_per_hour)
        if shared is not None:
            return shared
        return self._open(report, confirmation, look)

    def _reuse(self, look: tuple[str | None, str | None]) -> Report | None:
        """The checks of the previous iteration's end, when neither HEAD nor the work tree changed since."""
        if self.last is None or look[1] is None:
            return None
        report, last_head, last_tree = self.last
        return report if (last_head, last_tree) == look else None

    def request(self, prompt: str, prompt_file: Path, wire_guard: bool = True) -> AgentRequest:
        guard = None
        if wire_guard and self.settings.guard.enabled:
            guard = guard_command()
        budget = call_cap(self.state, self.settings)
        return AgentRequest(prompt, prompt_file, self.settings.agent, budget, self.session.root, guard,
                            self.store.cache_dir, os_sandboxed=self.sandbox == "bubblewrap")

    def _open(self, report: Report, confirmation: bool, look: tuple[str | None, str | None]) -> Opened:
        state, store = self.state, self.store
        n = state.iteration + 1
        actionable = [r.id for r in report.actionable()]
        start = Start(actionable, look[0], look[1], confirmation,
                      {r.id: [item_key(i) for i in r.items][:MAX_ITEMS] for r in report.actionable()})
        from dun.trust.verify import rebaseline

        # right before the agent starts: what changed since the last iteration ended is the operator's
        start.checker, changes = rebaseline(self.session, self.settings, look[0])
        if changes:
            self.say(f"changed between iterations (not by the agent), taken as the new baseline: "
                     f"{', '.join(changes[:8])}")
        changes, self.outside = sorted({*self.outside, *changes}), []
        prompt = render(self.session, report, confirmation, n)
        prompt_file = store.write_prompt(n, prompt)
        record_iterate(store, report.actionable(), look=look)
        inv = None
        if self.external:
            agent, argv = SHELL_AGENT, ["(scripts/dun-loop.sh)"]
        else:
            built = self.adapter.build(self.request(prompt, prompt_file))
            # the agent's own argv, not bwrap's; the prompt and secret-looking values redacted
            agent, argv = self.adapter.name, redact_argv(redact(built.argv, built.redact), store.redactor)
            inv = self.confine(built)
        log: IterationLog = {"schema_version": LOG_SCHEMA_VERSION, "iteration": n, "run_id": state.run_id,
                             "started_at": now_iso(), "agent": agent, "argv": argv, "confirmation": confirmation,
                             "prompt_file": prompt_file.name, "out_file": f"iteration-{n}.out",
                             "err_file": f"iteration-{n}.err", "sandbox": self.sandbox,
                             **({"protection": self.protection.weaker} if self.protection.weaker else {}),
                             "checks_before": {"actionable": len(actionable), "ids": actionable},
                             "baseline_changes": changes}
        store.write_log(log)
        # the token every process of the agent will carry, saved before the agent starts
        state.iteration, state.in_progress, state.start, state.call_started = n, n, start, time.time()
        state.agent_token, state.agent_tree = None if self.external else new_token(), []
        self.save()
        self.live(LivePhase.AGENT)
        return Opened(n, prompt, prompt_file, confirmation, inv)

    def agent_started(self, pid: int, token: str | None = None) -> None:
        self.state.agent_pgid, self.state.agent_started = pid, process_start_time(pid)
        self.save()

    def agent_tree(self, tree: list[list[float]]) -> None:
        """The agent's processes changed: saved, so that a loop resumed after a kill -9 can kill them."""
        self.state.agent_tree = tree
        self.save()

    def conclude(self, n: int, facts: AgentFacts) -> Decision:
        """Everything after the agent answered; saves the state and returns the decision."""
        self.store.refuse_links()  # before dun writes a log or restores a file the agent could have aimed
        confinement.before_dun_git(self.session.root, self.say)
        state, store = self.state, self.store
        self.live(LivePhase.JUDGING)
        start = state.start or Start()
        with store.iteration_file(n, ".out").open("rb") as fh:
            parsed = self.adapter.parse(fh)
        log = store.read_log(n) or {"schema_version": LOG_SCHEMA_VERSION, "iteration": n, "run_id": state.run_id}
        stdout_tail = output_tail(store.iteration_file(n, ".out"))
        stderr_tail = output_tail(store.iteration_file(n, ".err"))
        decision, after, look_after = judge(self.session, self.settings, state, self.adapter, n, parsed, start, log,
                                            facts, stdout_tail, stderr_tail)
        store.write_log(log)
        state.iteration = max(state.iteration, n)
        self._close_call()
        self.save()
        self.live(LivePhase.DECIDED, decision_entry(n, str(decision.action), str(decision.reason)))
        self.last = (after, *look_after)
        operator.on_iteration(self.session.root, dict(log), dict(state.to_record()), self.settings, self.detector,
                              redactor=store.redactor, resumed=self.external)
        self.fleet.concluded(log.get("cost_usd") or 0.0, decision, state.resume_at)  # the others of this agent
        return decision

    def finish(self, decision: Decision) -> Path:
        """Record the stop reason, consume a STOP request, write the report."""
        assert decision.action == Action.STOP
        reason = str(decision.reason)
        complete = reason == StopReason.COMPLETE
        state = self.state
        state.status, state.stop_reason = "complete" if complete else "stopped", reason
        state.stop_detail, state.ended_at = decision.detail, now_iso()
        if reason == StopReason.STOP_REQUESTED:
            self.store.consume_stop()
        self.save()
        self.live(LivePhase.STOPPED, decision_entry(None, str(decision.action), reason))
        report = write_report(self.store, self.state, self.settings)
        operator.on_stop(self.session.root, dict(self.state.to_record()), self.settings, self.detector,
                         redactor=self.store.redactor, resumed=self.external)
        return report

    def waiting(self, decision: Decision, until: float | None = None) -> None:
        """A driver is about to wait (until `until`, default `wait_s` from now): recorded in the history and the
        live record and the fleet's registry, notified when it is a usage or rate limit."""
        until = time.time() + decision.wait_s if until is None else until
        self.live(LivePhase.WAITING, decision_entry(None, str(decision.action), str(decision.reason)),
                  wait_until=until, wait_reason=str(decision.reason))
        self.fleet.waiting(self.state, str(decision.reason), until - time.time())
        operator.on_wait(self.session.root, dict(self.state.to_record()), self.settings, str(decision.reason),
                         decision.wait_s, redactor=self.store.redactor)

    def tick(self) -> None:
        """While a driver waits: the loop's heartbeat in the fleet's registry (every `fleet.heartbeat_s`)."""
        self.fleet.beat(self.state)
