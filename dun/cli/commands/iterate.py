"""`dun iterate`: run the checks and print the one prompt for the next agent iteration."""

from __future__ import annotations

import json
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dun.answer.handoff import read_handoff, read_json, record_iterate
from dun.cli.commands.check import CheckOptions, build_report
from dun.core.errors import EXIT_OK, UsageError
from dun.core.git import diff_stat, recent_commits
from dun.core.textfiles import read_text
from dun.engine.runner import Report
from dun.engine.session import Session, open_session
from dun.prompt.build import ALL_PASS, MODES, Prompt, build, template


@dataclass
class IterateOptions:
    path: str | None = None
    automation: str | None = None
    max_prompt_chars: int | None = None
    format: str = "text"
    only: tuple[str, ...] = ()
    skip: tuple[str, ...] = ()
    iteration: int | None = None  # set by the shell driver: numbers the prompt, records the work-tree hash
    confirm: bool = False


def mission_section(session: Session) -> str:
    rel = str(session.config.get("iterate.mission_file"))
    text, problem = read_text(session.root / rel)
    if text is None:
        return "" if "No such file" in problem else f"({rel} could not be read: {problem})"
    return f"From {rel}:\n\n{text.strip()}"


def handoff_section(handoff: dict[str, Any] | None, report: Report) -> str:
    if not handoff:
        return ""
    status = handoff.get("status")
    lines = []
    if handoff.get("outcome") != "parsed" or not status:
        reason = handoff.get("error") or "no status block"
        lines.append(f"The previous iteration gave no valid status block ({reason}). End this one with the block.")
    else:
        lines.append(f"Claimed: {status.get('task_completed') or '(nothing named)'}, STATUS {status.get('status')}, "
                     f"EXIT_SIGNAL {str(status.get('exit_signal')).lower()}, "
                     f"FILES_MODIFIED {status.get('files_modified')}")
        if status.get("next_recommendation"):
            lines.append(f"Its NEXT_RECOMMENDATION: {status['next_recommendation']}")
    if (handoff.get("agent") or {}).get("is_error"):
        lines.append(f"The agent call ended in an error: {handoff['agent'].get('error') or 'see the logs'}")
    git = handoff.get("git") or {}
    if git.get("commits"):
        lines.append(f"It made {len(git['commits'])} commit(s): " + "; ".join(git["commits"][:5]))
    for claim in _discrepancies(handoff, report):
        lines.append(f"NOT VERIFIED: {claim}")
    actionable = report.actionable()
    if status and status.get("exit_signal") and actionable:
        lines.append(f"NOT VERIFIED: you signalled EXIT_SIGNAL: true, but {len(actionable)} check(s) still fail: "
                     + ", ".join(r.id for r in actionable[:5]))
    return "\n".join(lines)


def _discrepancies(handoff: dict[str, Any], report: Report) -> list[str]:
    """What the loop recorded; for a handoff from a plain `dun respond`, the same claim checks against today's."""
    if "discrepancies" in handoff:
        return [str(d) for d in handoff["discrepancies"]]
    from dun.answer.block import StatusBlock
    from dun.trust.claims import verify_claims

    status = handoff.get("status")
    if not status:
        return []
    block = StatusBlock(status=status["status"], exit_signal=bool(status["exit_signal"]),
                        task_completed=status.get("task_completed"), files_modified=status.get("files_modified"))
    git = handoff.get("git") or {}
    changed = git.get("files_changed")
    found, _ = verify_claims(block, report, changed if changed is not None else 1, len(git.get("commits") or []))
    return [d["detail"] for d in found]


def git_section(session: Session, previous: dict[str, Any] | None) -> str:
    if not session.repo.is_git:
        return ""
    commits = recent_commits(session.root, 10)
    lines = ["Last commits:", *(f"- {c}" for c in commits)] if commits else ["No commits yet."]
    base = (previous or {}).get("head")
    if base:
        stat, changed = diff_stat(session.root, base)
        if stat:
            lines += ["", f"Changes since the previous iteration ({changed} files):", stat]
    return "\n".join(lines)


def loop_section(root: Path) -> str:
    """Shown when `dun loop` is running: it keeps these numbers in .dun/state.json."""
    state = read_json(root / ".dun" / "state.json")
    if not state or state.get("status") != "running":
        return ""
    parts = [f"Iteration {state.get('iteration')}"]
    if "cost_usd_total" in state:
        parts.append(f"spent ${state['cost_usd_total']:.2f}")
    if state.get("budget_left_usd") is not None:
        parts.append(f"${state['budget_left_usd']:.2f} left")
    if state.get("calls_left_hour") is not None:
        parts.append(f"{state['calls_left_hour']} calls left this hour")
    return ", ".join(parts) + "."


def build_prompt(session: Session, report: Report, opts: IterateOptions, git_text: str,
                 iteration: int | None = None) -> Prompt:
    mode = opts.automation or str(session.config.get("iterate.automation"))
    if mode not in MODES:
        raise UsageError(f"unknown automation mode '{mode}'; choose from {', '.join(MODES)}")
    sections = {
        "mission": mission_section(session),
        "handoff": handoff_section(read_handoff(session.root), report),
        "git": git_text,
        "loop": loop_section(session.root),
        "instructions": template(session.root, f"instructions/{mode}.md"),
        "status_template": template(session.root, "status-block.md"),
    }
    budget = opts.max_prompt_chars or int(session.config.get("iterate.max_prompt_chars"))
    return build(session.root, sections, report.actionable(), budget,
                 int(session.config.get("iterate.items_per_check")), iteration)


def run_iterate(opts: IterateOptions) -> int:
    if opts.format not in ("text", "json"):
        raise UsageError(f"unknown format '{opts.format}' for iterate; choose text or json")
    if opts.max_prompt_chars is not None and opts.max_prompt_chars < 1000:
        raise UsageError("--max-prompt-chars must be at least 1000")
    session = open_session(opts.path)
    session.context().prefetch()
    previous = read_json(session.root / ".dun" / "iterate.json")
    # git log and diff are subprocesses: run them while the checks run
    git_text: list[str] = []
    git_thread = threading.Thread(target=lambda: git_text.append(git_section(session, previous)), daemon=True)
    git_thread.start()
    report = build_report(session, CheckOptions(only=list(opts.only), skip=list(opts.skip)))
    record_iterate(session.root, report.actionable(), with_tree=opts.iteration is not None)
    if opts.confirm:
        from dun.loop.driver import render

        git_thread.join()
        sys.stdout.write(render(session, report, True, opts.iteration or 1))
        return EXIT_OK
    if not report.actionable():
        data: Any = {"schema_version": 1, "kind": "all_pass", "status": "ALL_PASS", "exit_signal": True}
        sys.stdout.write(json.dumps(data) + "\n" if opts.format == "json" else ALL_PASS)
        return EXIT_OK
    git_thread.join()
    prompt = build_prompt(session, report, opts, git_text[0] if git_text else "", iteration=opts.iteration)
    for note in prompt.notes:
        sys.stderr.write(f"dun: {note}\n")
    sys.stdout.write(json.dumps(prompt.to_dict(), indent=2) + "\n" if opts.format == "json" else prompt.text)
    return EXIT_OK
