"""`dun loop`: one fresh agent per iteration, until the checks and the agent agree, or a limit stops it."""

from __future__ import annotations

import copy
import os
import signal
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Any

from dun import circuit as breaker
from dun.agent_run import group_alive, output_tail, run_agent
from dun.agents.base import AgentAdapter, AgentRequest
from dun.atomic import write_json_atomic, write_text_atomic
from dun.commands.check import CheckOptions, build_report
from dun.commands.iterate import IterateOptions, build_prompt, git_section
from dun.engine import Report
from dun.errors import EXIT_OK, EXIT_WORK_REMAINS, UsageError
from dun.handoff import build_handoff, now, read_json, record_iterate, write_handoff
from dun.limits import classify
from dun.loopstate import LoopLock, archive_run, load_state, logs_dir, new_state, save_state
from dun.plugins import agent_adapters
from dun.policy import Decision, Outcome, after_iteration, before_iteration, nothing_actionable
from dun.prompt import template
from dun.ratewindow import calls_left
from dun.repo import changed_paths, head, recent_commits, worktree_tree
from dun.report import write_report
from dun.session import Session, open_session
from dun.transcript import parse_stream

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


def effective_config(session: Session, opts: LoopOptions) -> dict[str, Any]:
    """The config values with command-line flags applied on top."""
    cfg = copy.deepcopy(session.config.values)
    for key, value in (("max_iterations", opts.max_iterations), ("max_budget_usd", opts.max_budget_usd),
                       ("iteration_timeout_s", opts.iteration_timeout),
                       ("max_calls_per_hour", opts.max_calls_per_hour)):
        if value is not None:
            cfg["loop"][key] = value
    if opts.agent:
        cfg["agent"]["name"] = opts.agent
    if opts.model:
        cfg["agent"]["model"] = opts.model
    if opts.live:
        cfg["agent"]["live"] = True
    return cfg


def redact(argv: list[str], secrets: list[str]) -> list[str]:
    out = []
    for arg in argv:
        for secret in secrets:
            if secret and secret in arg:
                arg = arg.replace(secret, f"<prompt: {len(secret)} chars>" if len(secret) > 80 else "<redacted>")
        out.append(arg)
    return out


class Loop:
    def __init__(self, session: Session, opts: LoopOptions) -> None:
        self.session = session
        self.root = session.root
        self.opts = opts
        self.cfg = effective_config(session, opts)
        adapters = agent_adapters(session.pm)
        name = self.cfg["agent"]["name"]
        if name not in adapters:
            raise UsageError(f"unknown agent '{name}'; choose from {', '.join(sorted(adapters))}")
        self.adapter: AgentAdapter = adapters[name]
        self.state: dict[str, Any] = {}
        self.signalled: int | None = None
        self.wakeup = threading.Event()

    # --- plumbing -------------------------------------------------------------------------------------------
    def say(self, text: str) -> None:
        sys.stderr.write(f"dun loop: {text}\n")
        sys.stderr.flush()

    def stop_file(self) -> Path:
        return self.root / ".dun" / "STOP"

    def stop_requested(self) -> bool:
        return self.stop_file().exists()

    def _on_signal(self, signum: int, frame: FrameType | None) -> None:
        self.signalled = signum
        self.wakeup.set()

    def checks(self) -> Report:
        return build_report(self.session, CheckOptions())

    def save(self) -> None:
        loop = self.cfg["loop"]
        self.state["calls_left_hour"] = calls_left(self.state["calls"], loop["max_calls_per_hour"], time.time())
        cap = loop["max_budget_usd"]
        self.state["budget_left_usd"] = round(cap - self.state["cost_usd_total"], 4) if cap > 0 else None
        save_state(self.root, self.state)

    # --- run --------------------------------------------------------------------------------------------------
    def start(self) -> None:
        previous = load_state(self.root)
        if self.opts.fresh and previous is not None:
            target = archive_run(self.root, previous)
            self.say(f"previous run archived in {target}")
            previous = None
        if previous is None or (previous.get("status") != "running" and previous.get("stop_reason") == "complete"):
            self.state = new_state()
            if previous is not None:  # a finished run: keep what must survive (limits, breaker)
                self.state.update(calls=previous["calls"], resume_at=previous["resume_at"],
                                  circuit=previous["circuit"])
        else:
            self.state = previous
            self.resume_interrupted()
        if self.opts.reset_circuit:
            self.state["circuit"] = breaker.new_circuit()
        self.state["circuit"] = breaker.on_start(self.state["circuit"], self.cfg["circuit"]["cooldown_min"],
                                                 time.time())
        self.state.update(status="running", stop_reason=None, ended_at=None, pid=os.getpid())
        self.save()

    def resume_interrupted(self) -> None:
        """After a crash or kill -9: the unfinished iteration is recorded as interrupted and its agent killed."""
        pgid = self.state.get("agent_pgid")
        if pgid and group_alive(pgid):
            os.killpg(pgid, signal.SIGKILL)
            self.say(f"killed the agent left running by the previous loop (process group {pgid})")
        n = self.state.get("in_progress")
        if n:
            path = logs_dir(self.root) / f"iteration-{n}.json"
            log = read_json(path) or {"schema_version": 1, "iteration": n}
            if not log.get("ended_at"):
                log.update(ended_at=now(), decision={"action": "stop", "reason": "interrupted"}, interrupted=True)
                write_json_atomic(path, log)
            self.say(f"resuming after iteration {n}, which was interrupted")
        self.state.update(in_progress=None, agent_pgid=None)

    def run(self) -> int:
        handlers = {sig: signal.signal(sig, self._on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
        try:
            with LoopLock(self.root):
                self.start()
                decision = self.drive()
                return self.finish(decision)
        finally:
            for sig, handler in handlers.items():
                signal.signal(sig, handler)

    def drive(self) -> Decision:
        first = True
        while True:
            if self.signalled:
                return self.interrupted()
            decision = before_iteration(self.state, self.cfg, self.stop_requested())
            if decision and decision.action == "wait":
                self.wait(decision)
                continue
            if decision:
                return decision
            report = self.checks()
            confirmation = False
            if not report.actionable():
                done = nothing_actionable(self.state, self.cfg, first)
                if done:
                    return done
                confirmation = True
            first = False
            decision = self.iteration(report, confirmation)
            if self.signalled:
                return self.interrupted()
            if decision.action == "stop":
                return decision
            if decision.action == "wait":
                self.wait(decision)
            elif self.cfg["loop"]["cooldown_s"] > 0:
                self.wakeup.wait(self.cfg["loop"]["cooldown_s"])

    def wait(self, decision: Decision) -> None:
        """Sleep until the wait is over, a signal arrives, or STOP appears; a countdown on a terminal."""
        until = time.time() + decision.wait_s
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
        stop_now = self.stop_requested() and self.stop_file().read_text(errors="replace").strip() == "now"
        return Decision("stop", "stop_requested" if stop_now else "interrupted")

    # --- one iteration ------------------------------------------------------------------------------------------
    def iteration(self, report: Report, confirmation: bool) -> Decision:
        n = self.state["iteration"] + 1
        logs = logs_dir(self.root)
        started, t0 = now(), time.monotonic()
        before_ids = [r.id for r in report.actionable()]
        head_before, tree_before = head(self.root), worktree_tree(self.root)
        prompt = self.render(report, confirmation, n)
        prompt_file = logs / f"iteration-{n}.prompt.md"
        write_text_atomic(prompt_file, prompt)
        record_iterate(self.root, report.actionable())
        budget = self.cfg["loop"]["budget_per_iteration_usd"] or None
        inv = self.adapter.build(AgentRequest(prompt, prompt_file, self.cfg["agent"], budget, self.root))
        log: dict[str, Any] = {"schema_version": 1, "iteration": n, "run_id": self.state["run_id"],
                               "started_at": started, "agent": self.adapter.name,
                               "argv": redact(inv.argv, inv.redact), "confirmation": confirmation,
                               "prompt_file": prompt_file.name, "out_file": f"iteration-{n}.out",
                               "checks_before": {"actionable": len(before_ids), "ids": before_ids}}
        write_json_atomic(logs / f"iteration-{n}.json", log)
        self.state.update(iteration=n, in_progress=n)
        self.save()
        out_path = logs / f"iteration-{n}.out"
        run = run_agent(inv, self.root, out_path, self.cfg["loop"]["iteration_timeout_s"],
                        self.cfg["loop"]["kill_grace_s"], on_start=self.agent_started,
                        should_stop=lambda: self.signalled is not None or self.stop_now())
        with out_path.open("rb") as fh:
            parsed = parse_stream(fh)
        write_handoff(self.root, build_handoff(self.root, parsed, n))
        error = classify(parsed.agent, run.exit_code, output_tail(out_path)) if not run.start_error else None
        if run.start_error:
            from dun.limits import AgentError

            error = AgentError("other", run.start_error, None)
        elif run.timed_out:
            from dun.limits import AgentError

            error = AgentError("other", f"timed out after {self.cfg['loop']['iteration_timeout_s']:g}s", None)
        after = self.checks()
        after_ids = [r.id for r in after.actionable()]
        head_after, tree_after = head(self.root), worktree_tree(self.root)
        changed = changed_paths(self.root, tree_before, tree_after) if tree_before and tree_after else []
        newly_passing = sorted(set(before_ids) - set(after_ids))
        commits = recent_commits(self.root, 50, since=head_before) if head_before and head_after else []
        progress = bool(head_before != head_after or changed or newly_passing)
        cost = self.adapter.cost(parsed.agent, self.cfg["agent"])
        estimated = False
        if cost is None and run.timed_out and budget:
            cost, estimated = budget, True  # a killed call reports nothing: assume it spent its cap
        denials = len(parsed.agent.get("permission_denials") or [])
        outcome = Outcome(parsed, error, cost or 0.0, progress, after_ids, confirmation, denials)
        decision = after_iteration(self.state, self.cfg, outcome)
        if run.interrupted:
            decision = self.interrupted()
        log.update({
            "ended_at": now(), "duration_s": round(time.monotonic() - t0, 3), "exit_code": run.exit_code,
            "timed_out": run.timed_out, "cost_usd": cost, "cost_estimated": estimated,
            "session_id": parsed.agent.get("session_id"), "error_kind": error.kind if error else None,
            "error": error.message if error else None,
            "reset_at": error.reset_at if error else None,
            "status_block": parsed.block.to_dict() if parsed.block else None,
            "parse_error": parsed.error if parsed.outcome != "parsed" else None,
            "parse_outcome": parsed.outcome, "answer_shape": parsed.shape,
            "checks_after": {"actionable": len(after_ids), "ids": after_ids},
            "progress": {"head_before": head_before, "head_after": head_after, "commits": commits,
                         "files_changed": len(changed), "tree_hash": tree_after, "newly_passing": newly_passing},
            "permission_denials": denials, "flags": outcome.flags, "circuit": self.state["circuit"],
            "decision": decision.to_dict(),
        })
        write_json_atomic(logs / f"iteration-{n}.json", log)
        self.state.update(in_progress=None, agent_pgid=None)
        self.save()
        self.say(self.summary(log))
        return decision

    def stop_now(self) -> bool:
        path = self.stop_file()
        return path.exists() and path.read_text(errors="replace").strip() == "now"

    def agent_started(self, pid: int) -> None:
        self.state["agent_pgid"] = pid
        self.save()

    def render(self, report: Report, confirmation: bool, n: int) -> str:
        if not confirmation:
            git_text = git_section(self.session, read_json(self.root / ".dun" / "iterate.json"))
            return build_prompt(self.session, report, IterateOptions(), git_text, iteration=n).text
        from dun.commands.iterate import mission_section
        from dun.prompt import assemble

        sections = {"mission": mission_section(self.session), "instructions": template(self.root, "confirm.md"),
                    "status_template": template(self.root, "status-block.md")}
        return assemble(self.root, sections, n)

    @staticmethod
    def summary(log: dict[str, Any]) -> str:
        block = log.get("status_block") or {}
        claim = f"{block.get('status')} {block.get('task_completed') or ''}".strip() if block else "no status block"
        cost = f"${log['cost_usd']:.4f}" if log.get("cost_usd") is not None else "cost unknown"
        err = f", {log['error_kind']}" if log.get("error_kind") else ""
        decision = log["decision"]
        return (f"iteration {log['iteration']}: {log['agent']} exit {log['exit_code']}{err} in "
                f"{log['duration_s']:.0f}s, {cost}, {claim}; checks {log['checks_before']['actionable']} -> "
                f"{log['checks_after']['actionable']} actionable; {decision['action']} ({decision['reason']})")

    # --- stop -------------------------------------------------------------------------------------------------
    def finish(self, decision: Decision) -> int:
        reason = decision.reason
        self.state.update(status="complete" if reason == "complete" else "stopped", stop_reason=reason,
                          ended_at=now())
        if reason == "stop_requested" and self.stop_file().exists():
            self.stop_file().unlink()  # consumed: the next start runs
        self.save()
        report = write_report(self.root, self.state, self.cfg)
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
    if opts.dry_run:
        return dry_run(loop)
    return loop.run()


def dry_run(loop: Loop) -> int:
    """Render the next prompt and the decision, without calling an agent or changing any state."""
    state = load_state(loop.root) or new_state()
    decision = before_iteration(state, loop.cfg, loop.stop_requested())
    report = loop.checks()
    if decision is None and not report.actionable():
        decision = nothing_actionable(state, loop.cfg, state["iteration"] == 0)
    if decision is None:
        prompt = build_prompt(loop.session, report, IterateOptions(), git_section(loop.session, None),
                              iteration=state["iteration"] + 1).text
        sys.stdout.write(prompt)
        inv = loop.adapter.build(AgentRequest(prompt, loop.root / ".dun" / "logs" / "next.prompt.md",
                                              loop.cfg["agent"], loop.cfg["loop"]["budget_per_iteration_usd"] or None,
                                              loop.root))
        loop.say(f"dry run: would run {' '.join(redact(inv.argv, inv.redact))}")
        return EXIT_OK
    loop.say(f"dry run: would {decision.action} ({decision.reason})")
    return EXIT_OK
