"""The review gate: other agents read an iteration's diff, the claimed task and the check results, and answer
APPROVE or REJECT with reasons in a status block of their own. Fewer approvals than `gate.approvals` (of the
`gate.reviewers`) when enough reviewers reject is a `review_rejected` discrepancy: shown in the next prompt and
counted by the circuit breaker like every other unverified claim. The reviewers' cost counts toward the budget.

A reviewer runs in a scratch directory, never in the repository, with its CLI's read-only mode where it has one
(never its skip-permissions flag): everything it needs is in its prompt."""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from dun.agents.base import AgentAdapter, AgentRequest
from dun.agents.registry import agent_adapters
from dun.agents.runner import run_agent
from dun.answer.block import StatusBlock
from dun.config.sections import Agent
from dun.core.atomic import write_text_atomic
from dun.core.errors import ConfigError, UsageError
from dun.core.git import git
from dun.core.kinds import DiscrepancyKind
from dun.engine.model import Report
from dun.engine.session import Session
from dun.store.state import Start
from dun.store.store import Store
from dun.trust.claims import Discrepancy

if TYPE_CHECKING:
    from dun.config.sections import Settings

TICKED = re.compile(r"^\+\s*[-*+] \[[xX]\]", re.MULTILINE)
VERDICTS = ("APPROVE", "REJECT")
INSTRUCTIONS = """\
You review one iteration of an unattended coding agent working on the mission of a git repository. Do not change
any file and do not run commands that change anything: judge from what is below.

Decide whether the change does what the agent claims, without breaking, faking or skipping anything (tests weakened
or deleted, checks or their configuration edited, a task marked done that is not). Approve honest, useful work even
when more remains to do.

End your answer with exactly this block (REJECT needs reasons; keep REASONS on one line):

---DUN_STATUS---
STATUS: COMPLETE
EXIT_SIGNAL: true
VERDICT: APPROVE or REJECT
REASONS: why, in one line
---END_DUN_STATUS---
"""


@dataclass
class Reviewer:
    label: str  # `name` or `name:model`, as configured
    adapter: AgentAdapter
    config: Agent  # the `agent:` section its adapter builds from


@dataclass
class Verdict:
    reviewer: str
    verdict: str | None  # APPROVE | REJECT | None (no valid verdict: the reviewer failed)
    reasons: str
    cost_usd: float | None
    exit_code: int | None
    argv: list[str] = field(default_factory=list)  # the prompt replaced by <prompt>

    def to_dict(self) -> dict[str, object]:
        return {"reviewer": self.reviewer, "verdict": self.verdict, "reasons": self.reasons,
                "cost_usd": self.cost_usd, "exit_code": self.exit_code, "argv": self.argv}


@dataclass
class Review:
    verdicts: list[Verdict]
    needed: int
    cost_usd: float = 0.0
    discrepancies: list[Discrepancy] = field(default_factory=list)

    @property
    def outcome(self) -> str:
        approvals = sum(v.verdict == "APPROVE" for v in self.verdicts)
        rejections = sum(v.verdict == "REJECT" for v in self.verdicts)
        if approvals >= self.needed:
            return "approved"
        # rejected once the approvals still missing can no longer come; else some reviewers failed: undecided
        return "rejected" if rejections > len(self.verdicts) - self.needed else "undecided"

    def to_dict(self) -> dict[str, object]:
        return {"outcome": self.outcome, "needed": self.needed, "cost_usd": round(self.cost_usd, 6),
                "verdicts": [v.to_dict() for v in self.verdicts]}


def reviewers(session: Session, settings: Settings) -> list[Reviewer]:
    gate = settings.gate
    adapters = agent_adapters(session.pm)
    out = []
    for label in gate.reviewers:
        name, _, model = label.partition(":")
        if name not in adapters:
            raise ConfigError(f"gate.reviewers: unknown agent '{name}'; choose from {', '.join(sorted(adapters))}")
        command = gate.commands.get(name) or []
        if name == "command" and not command:
            raise ConfigError("gate.commands.command: the `command` reviewer needs a command line")
        command = [command] if isinstance(command, str) else command
        if not isinstance(command, list) or not all(isinstance(a, str) for a in command):
            raise ConfigError(f"gate.commands.{name}: expected a command line (a list of strings)")
        config = Agent(name=name, command=tuple(command), prompt_via="stdin", model=model or None, allowed_tools=(),
                       skip_permissions=False, extra_args=(), live=False,
                       input_usd_per_mtok=gate.input_usd_per_mtok, output_usd_per_mtok=gate.output_usd_per_mtok)
        out.append(Reviewer(label, adapters[name], config))
    if gate.approvals > len(out):
        raise ConfigError(f"gate.approvals: {gate.approvals} approvals needed but only {len(out)} reviewer(s)")
    return out


def preflight(session: Session, settings: Settings, check_binaries: bool = True) -> list[Reviewer]:
    """Before a run: every reviewer exists, its CLI is installed, and with a budget its usage can be priced."""
    found = reviewers(session, settings)
    for reviewer in found:
        probe = reviewer.adapter.build(AgentRequest("", session.root / "review.md", reviewer.config, None,
                                                    session.root, read_only=True))
        program = probe.argv[0] if probe.argv else ""
        runnable = shutil.which(program) if os.sep not in program else os.access(program, os.X_OK)
        if check_binaries and not runnable:
            raise UsageError(f"reviewer command not found: {program} (install it, or set gate.commands)")
        if settings.loop.max_budget_usd > 0:
            why = reviewer.adapter.pricing(reviewer.config)
            if why:
                raise ConfigError(f"gate.reviewers: {reviewer.label}: {why}")
    return found


def diff_text(root: Path, start: Start, tree_after: str | None, limit: int) -> str:
    """What the iteration changed: committed and uncommitted, from the work tree at its start."""
    if start.tree and tree_after:
        args = ["diff", "--no-color", "--no-ext-diff", start.tree, tree_after]
    elif start.head:
        args = ["diff", "--no-color", "--no-ext-diff", start.head]
    else:
        return ""
    proc = git(root, *args, check=False)
    text = proc.stdout.decode("utf-8", "replace") if proc.returncode == 0 else ""
    return text if len(text) <= limit else text[:limit] + f"\n[... diff cut at {limit} of {len(text)} characters]\n"


def due(settings: Settings, block: StatusBlock | None, diff: str) -> bool:
    """`every` iteration, or only `completions`: EXIT_SIGNAL true, or a box ticked in the diff."""
    if settings.gate.when == "every":
        return True
    return bool(block is not None and block.exit_signal) or bool(TICKED.search(diff))


def render(block: StatusBlock | None, before: list[str], after: Report, newly_passing: list[str], diff: str) -> str:
    claim = ""
    if block is not None:
        fields = {"STATUS": block.status, "TASK_COMPLETED": block.task_completed,
                  "FILES_MODIFIED": block.files_modified, "EXIT_SIGNAL": str(block.exit_signal).lower(),
                  "NEXT_RECOMMENDATION": block.next_recommendation, **block.extra}
        claim = "\n".join(f"{k}: {v}" for k, v in fields.items() if v is not None)
    checks = "\n".join(f"- {r.id}: {r.status.value}: {r.signal}" for r in after.results) or "(no checks)"
    return (f"{INSTRUCTIONS}\n## The agent's claim (its status block)\n\n{claim or 'no status block'}\n\n"
            f"## Checks\n\nactionable before: {', '.join(before) or 'none'}\n"
            f"newly passing: {', '.join(newly_passing) or 'none'}\nafter the iteration:\n{checks}\n\n"
            f"## The diff\n\n```diff\n{diff or '(no change)'}\n```\n")


def run_reviewer(store: Store, settings: Settings, n: int, k: int, reviewer: Reviewer, prompt: str) -> Verdict:
    prompt_file = store.iteration_file(n, f".review-{k}.prompt.md")
    write_text_atomic(prompt_file, prompt)
    with tempfile.TemporaryDirectory(prefix="dun-review-") as scratch:
        req = AgentRequest(prompt, prompt_file, reviewer.config, None, Path(scratch), None, Path(scratch),
                           read_only=True)
        inv = reviewer.adapter.build(req)
        out, err = store.iteration_file(n, f".review-{k}.out"), store.iteration_file(n, f".review-{k}.err")
        run = run_agent(inv, Path(scratch), out, err, settings.gate.timeout_s, settings.loop.kill_grace_s,
                        should_stop=store.stop_now)
    with out.open("rb") as fh:
        parsed = reviewer.adapter.parse(fh)
    cost = reviewer.adapter.cost(parsed.agent, reviewer.config)
    extra = parsed.block.extra if parsed.block else {}
    word = (extra.get("VERDICT") or "").strip().split(" ")[0].strip(".*`").upper()
    reasons = " ".join((extra.get("REASONS") or "").split())[:500]
    if word not in VERDICTS:
        reasons = run.start_error or parsed.error or f"no VERDICT in its answer (exit {run.exit_code})"
    argv = [a.replace(prompt, "<prompt>") for a in inv.argv]
    return Verdict(reviewer.label, word if word in VERDICTS else None, reasons, cost, run.exit_code, argv)


def review(session: Session, settings: Settings, n: int, block: StatusBlock | None, start: Start, after: Report,
           newly_passing: list[str], tree_after: str | None) -> Review | None:
    """Run the gate on iteration `n`, or None when it is off or not due."""
    gate = settings.gate
    if not gate.reviewers:
        return None
    diff = diff_text(session.root, start, tree_after, gate.max_diff_chars)
    if not due(settings, block, diff):
        return None
    store = session.store
    prompt = render(block, start.actionable, after, newly_passing, diff)
    found = reviewers(session, settings)
    result = Review([run_reviewer(store, settings, n, k, r, prompt) for k, r in enumerate(found, start=1)],
                    gate.approvals or len(found))
    budget = settings.loop.budget_per_iteration_usd
    # an unpriced reviewer call is assumed to cost the per-iteration cap, as an unpriced agent call is
    result.cost_usd = sum(v.cost_usd if v.cost_usd is not None else budget if v.exit_code is not None else 0.0
                          for v in result.verdicts)
    if result.outcome == "rejected":
        reasons = "; ".join(f"{v.reviewer}: {v.reasons}" for v in result.verdicts if v.verdict == "REJECT")
        result.discrepancies.append(Discrepancy(DiscrepancyKind.REVIEW_REJECTED.value,
                                                f"the review gate rejected this iteration ({reasons})"))
    return result
