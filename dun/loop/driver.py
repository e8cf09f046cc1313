"""`dun loop`: one fresh agent per iteration, until the checks and the agent agree, or a limit stops it."""

from __future__ import annotations

import os
import shutil
import signal
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Any

from dun.agents.base import AgentAdapter, AgentRequest
from dun.agents.runner import run_agent
from dun.answer.handoff import record_iterate
from dun.answer.transcript import parse_stream
from dun.core.atomic import write_text_atomic
from dun.core.errors import EXIT_OK, EXIT_WORK_REMAINS, UsageError
from dun.core.git import head, worktree_tree
from dun.engine.manager import agent_adapters
from dun.engine.model import Report
from dun.engine.session import Session, open_session
from dun.loop import lifecycle as runs
from dun.loop.policy import Decision, before_iteration, nothing_actionable
from dun.loop.report import cost_text
from dun.prompt.sections import render
from dun.store.state import LoopLock, load_state, logs_dir

EXIT_SIGINT, EXIT_SIGTERM = 130, 143


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

    def overrides(self) -> dict[str, Any]:
        return {"loop.max_iterations": self.max_iterations, "loop.max_budget_usd": self.max_budget_usd,
                "loop.iteration_timeout_s": self.iteration_timeout, "loop.max_calls_per_hour": self.max_calls_per_hour,
                "agent.name": self.agent, "agent.model": self.model, "agent.live": True if self.live else None}


def redact(argv: list[str], secrets: list[str]) -> list[str]:
    out = []
    for arg in argv:
        for secret in secrets:
            if secret and secret in arg:
                arg = arg.replace(secret, f"<prompt: {len(secret)} chars>" if len(secret) > 80 else "<redacted>")
        out.append(arg)
    return out


def adapter_for(session: Session, cfg: dict[str, Any]) -> AgentAdapter:
    adapters = agent_adapters(session.pm)
    name = cfg["agent"]["name"]
    if name not in adapters:
        raise UsageError(f"unknown agent '{name}'; choose from {', '.join(sorted(adapters))}")
    return adapters[name]


def summary(log: dict[str, Any]) -> str:
    block = log.get("status_block") or {}
    claim = f"{block.get('status')} {block.get('task_completed') or ''}".strip() if block else "no status block"
    cost = cost_text(log.get("cost_usd"), "cost unknown")
    err = f", {log['error_kind']}" if log.get("error_kind") else ""
    decision = log["decision"]
    return (f"iteration {log['iteration']}: {log['agent']} exit {log['exit_code']}{err} in "
            f"{log.get('duration_s', 0):.0f}s, {cost}, {claim}; checks {log['checks_before']['actionable']} -> "
            f"{log['checks_after']['actionable']} actionable; {decision['action']} ({decision['reason']})")


class Loop:
    def __init__(self, session: Session, opts: LoopOptions) -> None:
        self.session = session
        self.root = session.root
        self.opts = opts
        self.cfg = runs.effective_config(session, opts.overrides())
        self.adapter = adapter_for(session, self.cfg)
        # a bad `agent:` section or a missing CLI must fail now, before a run starts, not in iteration 1
        probe = self.adapter.build(AgentRequest("", logs_dir(self.root) / "check.prompt.md", self.cfg["agent"], None,
                                                self.root))
        program = probe.argv[0] if probe.argv else ""
        runnable = shutil.which(program) if os.sep not in program else os.access(
            program if os.path.isabs(program) else self.root / program, os.X_OK)  # the agent runs from the root
        if not opts.dry_run and not runnable:
            raise UsageError(f"agent command not found: {program} (install it, or set agent.command / --agent)")
        self.state: dict[str, Any] = {}
        self.signalled: int | None = None
        self.wakeup = threading.Event()
        self.last: tuple[Report, str | None, str | None] | None = None  # checks, HEAD, tree after an iteration

    def say(self, text: str) -> None:
        sys.stderr.write(f"dun loop: {text}\n")
        sys.stderr.flush()

    def stop_file(self) -> Path:
        return self.root / ".dun" / "STOP"

    def stop_requested(self) -> bool:
        return self.stop_file().exists()

    def stop_now(self) -> bool:
        return self.stop_requested() and self.stop_file().read_text(errors="replace").strip() == "now"

    def _on_signal(self, signum: int, frame: FrameType | None) -> None:
        self.signalled = signum
        self.wakeup.set()

    def run(self) -> int:
        handlers = {sig: signal.signal(sig, self._on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
        try:
            with LoopLock(self.root):
                self.state = runs.begin(self.session, self.cfg, self.opts.fresh, self.opts.reset_circuit, self.say)
                return self.finish(self.drive())
        finally:
            for sig, handler in handlers.items():
                signal.signal(sig, handler)

    def drive(self) -> Decision:
        first = self.state["iteration"] == 0  # no agent has run in this run yet (a resumed run is not new)
        while True:
            if self.signalled:
                return self.interrupted()
            decision = before_iteration(self.state, self.cfg, self.stop_requested())
            if decision and decision.action == "wait":
                self.wait(decision)
                continue
            if decision:
                return decision
            tree = worktree_tree(self.root)
            report = self.reuse(tree) or self.session.report()
            confirmation = False
            if not report.actionable():
                done = nothing_actionable(self.state, self.cfg, first)
                if done:
                    return done
                confirmation = True
            first = False
            decision = self.iteration(report, confirmation, tree)
            if self.signalled or decision.reason == "interrupted":
                return self.interrupted()
            if decision.action == "stop":
                return decision
            if decision.action == "wait":
                self.wait(decision)
            elif self.cfg["loop"]["cooldown_s"] > 0:
                self.wakeup.wait(self.cfg["loop"]["cooldown_s"])

    def reuse(self, tree: str | None) -> Report | None:
        """The checks of the previous iteration's end, when neither HEAD nor the work tree changed since."""
        if self.last is None or tree is None:
            return None
        report, last_head, last_tree = self.last
        return report if (last_tree, last_head) == (tree, head(self.root)) else None

    def wait(self, decision: Decision) -> None:
        """Sleep until the wait is over, a signal arrives, or STOP appears; a countdown on a terminal."""
        # never past the run's time limit: the next before_iteration then stops with max_duration
        deadline = self.state["started_epoch"] + self.cfg["loop"]["max_duration_h"] * 3600
        until = min(time.time() + decision.wait_s, deadline)
        self.say(f"waiting {decision.wait_s / 60:.1f} min ({decision.reason}) until "
                 f"{time.strftime('%H:%M:%S', time.localtime(until))}")
        tty = sys.stderr.isatty()
        while not self.signalled and not self.stop_requested():
            left = until - time.time()
            if left <= 0:
                break
            if tty:
                sys.stderr.write(f"\r  resuming in {int(left) // 60:02d}:{int(left) % 60:02d} ")
            self.wakeup.wait(min(1.0, left))
        if tty:
            sys.stderr.write("\n")

    def interrupted(self) -> Decision:
        return Decision("stop", "stop_requested" if self.stop_now() else "interrupted")

    def iteration(self, report: Report, confirmation: bool, tree: str | None) -> Decision:
        start = runs.Start([r.id for r in report.actionable()], head(self.root), tree, confirmation)
        n = self.state["iteration"] + 1
        prompt = render(self.session, report, confirmation, n)
        prompt_file = logs_dir(self.root) / f"iteration-{n}.prompt.md"
        write_text_atomic(prompt_file, prompt)
        record_iterate(self.root, report.actionable())
        budget = self.cfg["loop"]["budget_per_iteration_usd"] or None
        inv = self.adapter.build(AgentRequest(prompt, prompt_file, self.cfg["agent"], budget, self.root,
                                              self.guard_settings()))
        n, log = runs.open_iteration(self.root, self.state, self.cfg, self.adapter.name,
                                     redact(inv.argv, inv.redact), start, prompt_file.name)
        out_path = logs_dir(self.root) / f"iteration-{n}.out"
        t0 = time.monotonic()
        result = run_agent(inv, self.root, out_path, self.cfg["loop"]["iteration_timeout_s"],
                           self.cfg["loop"]["kill_grace_s"], on_start=self.agent_started,
                           should_stop=lambda: self.signalled is not None or self.stop_now())
        with out_path.open("rb") as fh:
            parsed = parse_stream(fh)
        log["duration_s"] = round(time.monotonic() - t0, 3)
        decision, after, tree_after = runs.conclude(
            self.session, self.cfg, self.state, n, parsed, start, log, result.exit_code, result.timed_out,
            self.adapter.cost(parsed.agent, self.cfg["agent"]), out_path, result.start_error, result.interrupted)
        self.last = (after, head(self.root), tree_after)
        self.say(summary(log))
        return decision

    def guard_settings(self) -> Path | None:
        """A settings file wiring `dun guard` in as the agent's PreToolUse hook for this run."""
        if not self.cfg["guard"]["enabled"]:
            return None
        import json
        import shlex

        command = f"{shlex.quote(sys.executable)} -m dun guard"
        settings = {"hooks": {"PreToolUse": [{"matcher": "Bash|Write|Edit|MultiEdit|NotebookEdit",
                                              "hooks": [{"type": "command", "command": command}]}]}}
        path = self.root / ".dun" / "cache" / "guard-settings.json"
        write_text_atomic(path, json.dumps(settings, indent=2) + "\n")
        return path

    def agent_started(self, pid: int) -> None:
        self.state["agent_pgid"] = pid
        runs.save(self.root, self.state, self.cfg)

    def finish(self, decision: Decision) -> int:
        reason = decision.reason
        report = runs.finish(self.root, self.state, self.cfg, reason)
        self.say(f"stopped: {reason} after {self.state['iteration']} iteration(s), "
                 f"${self.state['cost_usd_total']:.4f} spent; report: {report.relative_to(self.root)}")
        if reason == "complete":
            return EXIT_OK
        if reason == "interrupted":
            return EXIT_SIGTERM if self.signalled == signal.SIGTERM else EXIT_SIGINT
        return EXIT_WORK_REMAINS


def run_loop(opts: LoopOptions) -> int:
    session = open_session(opts.path)
    loop = Loop(session, opts)
    return dry_run(loop) if opts.dry_run else loop.run()


def dry_run(loop: Loop) -> int:
    """Render the next prompt and the decision, without calling an agent or changing any state."""
    state, _ = runs.starting_state(load_state(loop.root), loop.cfg, loop.opts.fresh, loop.opts.reset_circuit)
    decision = before_iteration(state, loop.cfg, loop.stop_requested())
    report = loop.session.report()
    if decision is None and not report.actionable():
        decision = nothing_actionable(state, loop.cfg, state["iteration"] == 0)
    if decision is not None:
        loop.say(f"dry run: would {decision.action} ({decision.reason})")
        return EXIT_OK
    prompt = render(loop.session, report, False, state["iteration"] + 1)
    sys.stdout.write(prompt)
    budget = loop.cfg["loop"]["budget_per_iteration_usd"] or None
    inv = loop.adapter.build(AgentRequest(prompt, logs_dir(loop.root) / "next.prompt.md", loop.cfg["agent"], budget,
                                          loop.root))
    loop.say(f"dry run: would run {' '.join(redact(inv.argv, inv.redact))}")
    return EXIT_OK
