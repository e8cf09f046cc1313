"""`dun loop`: one fresh agent per iteration, until the checks and the agent agree, or a limit stops it.

The in-process driver of the iteration engine: it owns what only a long-running process has (signals, the lock,
waiting with a countdown, running the agent) and asks the engine for every decision.
"""

from __future__ import annotations

import os
import shutil
import signal
import sys
import threading
import time
from dataclasses import dataclass
from types import FrameType
from typing import TYPE_CHECKING

from dun.agents.runner import run_agent
from dun.core.errors import UsageError, is_disk_full
from dun.core.kinds import Action, ExitCode, StopReason
from dun.core.redact import redact_argv
from dun.core.timefmt import clock
from dun.engine.session import Session, open_session
from dun.loop.conclude import AgentFacts, check_pricing
from dun.loop.engine import Engine, Opened, adapter_for, effective_config, exit_code_for, redact
from dun.loop.policy import Decision, before_iteration, nothing_actionable, stop
from dun.loop.report import cost_text, resume_hint
from dun.loop.review import preflight
from dun.prompt.sections import render
from dun.store.lock import LoopLock
from dun.store.records import IterationLog

if TYPE_CHECKING:
    from dun.config.sections import Settings

HANDLED_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)  # SIGHUP: the terminal or SSH session closed


@dataclass
class LoopOptions:
    path: str | None = None
    agent: str | None = None
    model: str | None = None
    max_iterations: int | None = None
    max_budget_usd: float | None = None
    iteration_timeout: float | None = None
    max_calls_per_hour: int | None = None
    fresh: bool = False
    reset_circuit: bool = False
    dry_run: bool = False
    live: bool = False
    skip_permissions: bool = False  # for this run only, whatever agent.skip_permissions says
    worktree: str | None = None  # run in the git worktree .dun/worktrees/NAME (created when missing)
    branch: str | None = None  # the worktree's branch (default dun/NAME)

    def overrides(self) -> dict[str, object]:
        return {"loop.max_iterations": self.max_iterations, "loop.max_budget_usd": self.max_budget_usd,
                "loop.iteration_timeout_s": self.iteration_timeout, "loop.max_calls_per_hour": self.max_calls_per_hour,
                "agent.name": self.agent, "agent.model": self.model, "agent.live": True if self.live else None,
                "agent.skip_permissions": True if self.skip_permissions else None}


def summary(log: IterationLog) -> str:
    block = log.get("status_block") or {}
    claim = f"{block.get('status')} {block.get('task_completed') or ''}".strip() if block else "no status block"
    cost = cost_text(log.get("cost_usd"), "cost unknown")
    err = f", {log['error_kind']}" if log.get("error_kind") else ""
    decision = log.get("decision") or {}
    before, after = log.get("checks_before"), log.get("checks_after")
    return (f"iteration {log['iteration']}: {log.get('agent')} exit {log.get('exit_code')}{err} in "
            f"{log.get('duration_s', 0):.0f}s, {cost}, {claim}; checks "
            f"{before.get('actionable') if before else None} -> "
            f"{after.get('actionable') if after else None} actionable; "
            f"{decision.get('action')} ({decision.get('reason')})")


class Loop:
    def __init__(self, session: Session, opts: LoopOptions) -> None:
        self.session = session
        self.root = session.root
        self.opts = opts
        self.redactor = session.store.redactor  # the engine's store's: the config's patterns, the fleet password
        settings = effective_config(session, opts.overrides())
        self.engine = Engine(session, settings, adapter_for(session, settings), say=self.say,
                             overrides=opts.overrides())
        self.store = self.engine.store
        # a bad `agent:` section or a missing CLI must fail now, before a run starts, not in iteration 1
        probe = self.engine.adapter.build(self.engine.request("", self.store.iteration_file(0, ".prompt.md"), False))
        program = probe.argv[0] if probe.argv else ""
        runnable = shutil.which(program) if os.sep not in program else os.access(
            program if os.path.isabs(program) else self.root / program, os.X_OK)  # the agent runs from the root
        if not opts.dry_run and not runnable:
            raise UsageError(f"agent command not found: {program} (install it, or set agent.command / --agent)")
        check_pricing(self.engine.adapter, settings)
        preflight(session, settings, check_binaries=not opts.dry_run)  # the review gate's reviewers, likewise
        self.signalled: int | None = None
        self.wakeup = threading.Event()
        # a loop in a linked work tree (`--worktree NAME`) names it on every line: several loops share a terminal
        self.linked = (self.root / ".git").is_file()
        self.prefix = f"dun loop [{self.root.name}]: " if self.linked else "dun loop: "
        self.tty = sys.stderr.isatty()
        self.ticking = False  # a progress line is on the terminal, to be cleared before the next line
        self.tick_alone = True  # no other loop of the repository runs (checked before each agent call)

    @property
    def settings(self) -> Settings:
        """The engine's: a reload after a revert replaces them."""
        return self.engine.settings

    def say(self, text: str) -> None:
        self._clear_tick()
        sys.stderr.write(f"{self.prefix}{self.redactor.redact(text)}\n")
        sys.stderr.flush()

    def _clear_tick(self) -> None:
        if self.ticking:
            sys.stderr.write("\r\x1b[K")
            self.ticking = False

    def progress(self) -> str:
        """Boxes and spend, as the live record has them: `boxes 1/3, $0.1200 of $5`."""
        live = self.engine.live_record
        parts = [f"boxes {live['boxes_done']}/{live['boxes_total']}"] if live and live["boxes_total"] is not None \
            else []
        cap = self.settings.loop.max_budget_usd
        spent = self.engine.state.cost_usd_total
        parts.append(f"${spent:.4f} of ${cap:g}" if cap > 0 else f"${spent:.4f} spent")
        return ", ".join(parts)

    def look_around(self) -> None:
        """Before each agent call: whether other loops of the repository run. Then the main tree's loop names itself
        `[main]` too, and no loop keeps a line in place. Git is asked only where it can matter: from a worktree on a
        terminal, or from a main tree that has worktrees."""
        from dun.fleet.status import running_elsewhere

        git_dir = self.root / ".git"
        if self.linked:
            others = bool(self.tty and running_elsewhere(self.root))
        else:
            others = (git_dir / "worktrees").is_dir() and bool(running_elsewhere(self.root))
            self.prefix = "dun loop [main]: " if others else "dun loop: "
        self.tick_alone = not others

    def _tick(self, n: int, started: float) -> None:
        """On a terminal, the agent's elapsed time on one line, rewritten in place while it works (not while other
        loops of the repository run: their lines would be written over, and theirs over it)."""
        if self.tty and self.tick_alone:
            sys.stderr.write(f"\r\x1b[K{self.prefix}iteration {n}: agent working {clock(time.time() - started)} "
                             f"({self.progress()})")
            sys.stderr.flush()
            self.ticking = True

    def _on_signal(self, signum: int, frame: FrameType | None) -> None:
        self.signalled = signum
        self.wakeup.set()

    def run(self) -> int:
        # not over a signal dun was started ignoring: `nohup dun loop &` must outlive the hangup of its terminal
        handlers = {sig: signal.signal(sig, self._on_signal) for sig in HANDLED_SIGNALS
                    if signal.getsignal(sig) != signal.SIG_IGN}
        try:
            with LoopLock(self.store):
                try:
                    self.store.reserve_space()
                    self.look_around()  # the start's lines are labelled like the rest
                    self.engine.start(self.opts.fresh, self.opts.reset_circuit)
                    return self.finish(self.drive())
                except OSError as exc:
                    if not is_disk_full(exc):
                        raise
                    return self.disk_full(exc)
                finally:
                    self.store.release_space()
        except OSError as exc:  # full before the run could even take its lock: nothing to record
            if not is_disk_full(exc):
                raise
            self.say(f"the disk is full ({exc.strerror}); free some space, then run `dun loop` again")
            return ExitCode.WORK_REMAINS
        finally:
            for sig, handler in handlers.items():
                signal.signal(sig, handler)

    def disk_full(self, exc: OSError) -> int:
        """No space left: the room kept in reserve is given back so that the stop, the state and the report still
        fit; the iteration in progress is closed as interrupted by the next start."""
        self.store.release_space()
        where = f" writing {exc.filename}" if exc.filename else ""
        try:
            self.engine.finish(stop(StopReason.DISK_FULL))
            saved = "state saved"
        except OSError:
            saved = "the state could not be saved either"
        self.say(f"stopped: the disk is full ({exc.strerror or exc}{where}); {saved}. Free some space, then "
                 "`dun loop` resumes the run")
        return ExitCode.WORK_REMAINS

    def drive(self) -> Decision:
        engine = self.engine
        while True:
            if self.signalled:
                return self.interrupted()
            step = engine.next(self.store.stop_requested())
            if isinstance(step, Decision):
                if step.action == Action.WAIT:
                    self.wait(step)
                    continue
                return step
            decision = self.iteration(step)
            if self.signalled or decision.reason == StopReason.INTERRUPTED:
                return self.interrupted()
            if decision.action == Action.STOP:
                return decision
            if decision.action == Action.WAIT:
                self.wait(decision)
            elif self.settings.loop.cooldown_s > 0:
                self.wakeup.wait(self.settings.loop.cooldown_s)

    def wait(self, decision: Decision) -> None:
        """Sleep until the wait is over, a signal arrives, or STOP appears; a countdown on a terminal."""
        # never past the run's time limit: the next step then stops with max_duration
        deadline = self.engine.state.started_epoch + self.settings.loop.max_duration_h * 3600
        until = min(time.time() + decision.wait_s, deadline)
        self.engine.waiting(decision, until)
        self.say(f"waiting {decision.wait_s / 60:.1f} min ({decision.reason}) until "
                 f"{time.strftime('%H:%M:%S', time.localtime(until))}")
        tty = sys.stderr.isatty()
        while not self.signalled and not self.store.stop_requested():
            left = until - time.time()
            if left <= 0:
                break
            if tty:
                sys.stderr.write(f"\r  resuming in {int(left) // 60:02d}:{int(left) % 60:02d} ")
            self.engine.tick()
            self.wakeup.wait(min(1.0, left))
        if tty:
            sys.stderr.write("\n")

    def interrupted(self) -> Decision:
        return stop(StopReason.STOP_REQUESTED if self.store.stop_now() else StopReason.INTERRUPTED)

    def iteration(self, opened: Opened) -> Decision:
        engine, store, n = self.engine, self.store, opened.n
        inv = opened.invocation
        assert inv is not None
        loop = self.settings.loop
        self.look_around()
        self.say(f"iteration {n}: the agent starts ({self.progress()})")
        started = time.time()

        def should_stop() -> bool:  # asked every half second while the agent runs
            self._tick(n, started)
            engine.tick()  # the fleet's heartbeat, every fleet.heartbeat_s: an agent runs for minutes
            return self.signalled is not None or store.stop_now()

        result = run_agent(inv, self.root, store.iteration_file(n, ".out"), store.iteration_file(n, ".err"),
                           loop.iteration_timeout_s, loop.kill_grace_s, on_start=engine.agent_started,
                           should_stop=should_stop,
                           max_output=int(loop.max_output_mb * (1 << 20)), on_tree=engine.agent_tree,
                           token=engine.state.agent_token)
        self._clear_tick()
        if result.disk_full is not None:
            raise result.disk_full
        if result.write_error is not None:
            self.say(f"iteration {n}: the agent's output could not be written ({result.write_error}); it was stopped")
        if result.dropped_bytes:
            self.say(f"iteration {n}: output over loop.max_output_mb; its first {result.dropped_bytes >> 20} MB "
                     "were dropped, the end kept")
        decision = engine.conclude(n, AgentFacts(result.exit_code, result.timed_out, result.start_error,
                                                 result.interrupted, result.duration_s))
        log = store.read_log(n)
        if log is not None:
            self.say(summary(log))
        return decision

    def finish(self, decision: Decision) -> int:
        report = self.engine.finish(decision)
        state = self.engine.state
        detail = f" ({decision.detail})" if decision.detail else ""
        self.say(f"stopped: {decision.reason}{detail} after {state.iteration} iteration(s), "
                 f"${state.cost_usd_total:.4f} spent; report: {report.relative_to(self.root)}")
        hint = resume_hint(str(decision.reason))
        if hint and decision.reason != StopReason.COMPLETE:
            self.say(f"to go on: {hint}")
        return exit_code_for(str(decision.reason), self.signalled in (signal.SIGTERM, signal.SIGHUP))


def run_loop(opts: LoopOptions) -> int:
    if opts.branch and not opts.worktree:
        raise UsageError("--branch goes with --worktree NAME")
    if opts.worktree:
        from dun.fleet.worktrees import prepare

        opts.path = str(prepare(opts.path, opts.worktree, opts.branch).path)
    session = open_session(opts.path)
    loop = Loop(session, opts)
    return dry_run(loop) if opts.dry_run else loop.run()


def dry_run(loop: Loop) -> int:
    """Render the next prompt and the decision, without calling an agent or changing any state."""
    engine = loop.engine
    loop.session.store.dry_run = True  # the loop's store too: the hints are learned, not stored
    state, _, _ = engine.starting_state(loop.opts.fresh, loop.opts.reset_circuit)
    decision = before_iteration(state, loop.settings, loop.store.stop_requested())
    report = loop.session.report()
    if decision is None and not report.actionable():
        decision = nothing_actionable(state, loop.settings)
    if decision is not None:
        loop.say(f"dry run: would {decision.action} ({decision.reason})")
        return ExitCode.OK
    prompt = render(loop.session, report, False, state.iteration + 1)
    sys.stdout.write(prompt)
    inv = engine.adapter.build(engine.request(prompt, loop.store.logs_dir / "next.prompt.md", False))
    loop.say(f"dry run: would run {' '.join(redact_argv(redact(inv.argv, inv.redact), loop.redactor))}")
    return ExitCode.OK
