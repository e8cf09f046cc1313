"""The prompt's sections (mission, handoff, git, loop numbers) and the two prompts built from them: the work prompt
of `dun iterate` and the confirmation prompt when every check passes."""

from __future__ import annotations

import subprocess
from typing import TYPE_CHECKING, Any

from dun.core.errors import DunError, UsageError
from dun.core.git import diff_stat, recent_commits
from dun.core.textfiles import read_text
from dun.engine import checkapi
from dun.engine.model import CheckResult, Report, folded_count
from dun.engine.session import Session
from dun.hints.graph import CHECK_PREFIX
from dun.hints.render import mentioned, prompt_section
from dun.history import review
from dun.prompt.build import MODES, Prompt, assemble, build, template
from dun.store.records import Handoff
from dun.store.store import Store

if TYPE_CHECKING:
    from dun.config.sections import Iterate

MAX_DIFF_PATHS = 200  # a longer command line costs more than the walk it spares


def mission_section(session: Session) -> str:
    rel = session.settings.iterate.mission_file
    text, problem = read_text(session.root / rel, root=session.root)
    if text is None:
        return "" if "No such file" in problem else f"({rel} could not be read: {problem})"
    return f"From {rel}:\n\n{text.strip()}"


def handoff_section(handoff: Handoff | None, report: Report) -> str:
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


def _discrepancies(handoff: Handoff, report: Report) -> list[str]:
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
    return [d.detail for d in found]


def git_section(session: Session, previous: dict[str, Any] | None) -> str:
    if not session.repo.is_git:
        return ""
    commits = recent_commits(session.root, 10)
    lines = ["Last commits:", *(f"- {c}" for c in commits)] if commits else ["No commits yet."]
    base = (previous or {}).get("head")
    if base:
        stat, changed = _changes_since(session, base)
        if stat:
            lines += ["", f"Changes since the previous iteration ({changed} files):", stat]
    return "\n".join(lines)


def _changes_since(session: Session, base: str) -> tuple[str, int]:
    """`diff_stat` from `base`, read from the run's look at the tree when that look shows nothing changed."""
    snapshot = checkapi.snapshot(session.context())
    untracked = paths = None
    if snapshot is not None:
        try:
            found = snapshot.entries()
            if snapshot.head() == base:
                if not found:
                    return "", 0
                # the status names every tracked path that can differ from HEAD: a diff of those alone spares
                # git a second walk of the tree (a second on a 10,000-file tree under load); renames, copies and
                # conflicts name two paths or stages, so they get the whole diff, as does a very long list
                tracked = [p for head, p in found if head[:1] != b"?"]
                if all(head[:1] in b"1?" for head, _ in found) and len(tracked) <= MAX_DIFF_PATHS:
                    paths = [p.decode("utf-8", "surrogateescape") for p in tracked]
            untracked = snapshot.untracked()
        except subprocess.CalledProcessError:
            pass
    return diff_stat(session.root, base, untracked, paths)


def hints_section(session: Session, report: Report) -> str:
    """Files that usually change with those of the work list (dun/hints/): advice, bounded by hints.max_chars."""
    if not session.repo.is_git:
        return ""
    return prompt_section(session.store, session.settings.hints, work_seeds(report.actionable()))


def loop_section(store: Store) -> str:
    """Shown when `dun loop` is running: it keeps these numbers in .dun/state.json."""
    try:
        state = store.read_state()
    except DunError:  # a corrupt state is `dun loop`'s to report, not the prompt's
        return ""
    if not state or state.status != "running":
        return ""
    parts = [f"Iteration {state.iteration}", f"spent ${state.cost_usd_total:.2f}"]
    if state.budget_left_usd is not None:
        parts.append(f"${state.budget_left_usd:.2f} left")
    if state.calls_left_hour is not None:
        parts.append(f"{state.calls_left_hour} calls left this hour")
    return ", ".join(parts) + "."


def work_seeds(actionable: list[CheckResult], limit: int = 200) -> list[str]:
    """What the hints are asked about, in the work list's order: the files its items name and the paths written in
    their text (a box saying `fix src/a.py` is about src/a.py; the task list holding the box is no seed: what
    changes with MISSION.md is every task ever done), and a check that names no file (`check:ID`: the files earlier
    iterations changed for it). The first `limit` only: the hints are for the top of the list, and 10,000 boxes need
    not all be read for them."""
    seeds: dict[str, None] = {}
    for result in actionable:
        items = [i for i in result.items if folded_count(i) is None]
        for item in items:
            seeds.update(dict.fromkeys(mentioned(item.text)))
            if item.file and result.type != "checkboxes":
                seeds[item.file] = None
            if len(seeds) >= limit:
                return list(seeds)[:limit]
        if not any(i.file for i in items):
            seeds[CHECK_PREFIX + result.id] = None
    return list(seeds)[:limit]


def build_prompt(session: Session, report: Report, git_text: str, iteration: int | None = None,
                 settings: Iterate | None = None) -> Prompt:
    """`dun iterate`'s prompt: the mission, the handoff, git, the loop's numbers and every actionable item.
    `settings`: the config's `iterate:` with the command's flags on top."""
    settings = settings or session.settings.iterate
    mode = settings.automation
    if mode not in MODES:
        raise UsageError(f"unknown automation mode '{mode}'; choose from {', '.join(MODES)}")
    sections = {
        "mission": mission_section(session),
        "handoff": handoff_section(session.store.read_handoff(), report),
        "review": review.prompt_section(session.store, session.settings.review),
        "git": git_text,
        "loop": loop_section(session.store),
        "hints": hints_section(session, report),
        "instructions": template(session.store, f"instructions/{mode}.md"),
        "status_template": template(session.store, "status-block.md"),
    }
    return build(session.store, sections, report.actionable(), settings.max_prompt_chars, settings.items_per_check,
                 iteration)


def render(session: Session, report: Report, confirmation: bool, n: int) -> str:
    """The prompt of iteration `n`: `dun iterate`'s, or the confirmation prompt when every check passes."""
    if not confirmation:
        git_text = git_section(session, session.store.read_iterate())
        return build_prompt(session, report, git_text, iteration=n).text
    sections = {"mission": mission_section(session), "instructions": template(session.store, "confirm.md"),
                "status_template": template(session.store, "status-block.md")}
    handoff = session.store.read_handoff()
    if handoff and handoff.get("discrepancies"):  # e.g. the review gate rejected the last completion: say why
        sections["handoff"] = handoff_section(handoff, report)
    return assemble(session.store, sections, n)
