"""After every iteration: claims, the task ratchet, checker tampering, removed tests and oscillation, with the
configured policies applied. The result goes into the iteration log as `verification`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from dun.answer.block import StatusBlock
from dun.core.git import git
from dun.engine.model import Report
from dun.engine.session import Session
from dun.store.records import LoopState
from dun.store.store import read_json
from dun.trust import tamper, tasks
from dun.trust.claims import discrepancy, verify_claims


def mission_files(session: Session) -> list[str]:
    from dun.checks.checkboxes import mission_paths

    ctx = session.context()
    patterns = [f for c in session.catalog().checks if c.type == "checkboxes" for f in c.options.get("files", [])]
    patterns.append(str(session.config.get("iterate.mission_file")))
    return mission_paths(ctx, list(dict.fromkeys(patterns)))


def start_run(session: Session, cfg: dict[str, Any], head: str | None) -> None:
    """Record the ledger of boxes and the checker fingerprint a run is held to."""
    tasks.record(session.root, mission_files(session))
    tamper.record(session.root, session.context(), session.catalog(), cfg["trust"]["protected"], head)


def _dirty(root: Path, paths: list[str]) -> set[str]:
    """Of `paths`, those with uncommitted changes (or untracked)."""
    changed = git(root, "diff", "--name-only", "HEAD", "--", *paths, check=False).stdout.decode().split()
    untracked = git(root, "ls-files", "--others", "--exclude-standard", "--", *paths, check=False).stdout.decode()
    return set(changed) | set(untracked.split())


def _commit(root: Path, paths: list[str], skip: set[str], message: str) -> list[str]:
    """Commit dun's own repair as dun; files that held the agent's uncommitted work (`skip`) are left repaired in
    the work tree only, so nothing of the agent's goes out under dun's name."""
    mine = [p for p in paths if p not in skip]
    if not mine:
        return []
    # set in the environment, which outranks a GIT_AUTHOR_* the user exported (`-c user.name` would not)
    env = {"GIT_AUTHOR_NAME": "dun", "GIT_AUTHOR_EMAIL": "dun@localhost",
           "GIT_COMMITTER_NAME": "dun", "GIT_COMMITTER_EMAIL": "dun@localhost"}
    git(root, "add", "-A", "--", *mine, check=False, env=env)
    proc = git(root, "commit", "-q", "-m", message, "--", *mine, check=False, env=env)
    return mine if proc.returncode == 0 else []


def verify_iteration(session: Session, cfg: dict[str, Any], state: LoopState, block: StatusBlock | None,
                     after: Report, files_changed: int, commits: int, tree_before: str | None,
                     tree_after: str | None, newly_passing: list[str],
                     progressed: frozenset[str] = frozenset()) -> dict[str, Any]:
    root = session.root
    trust = cfg["trust"]
    found, notes = verify_claims(block, after, files_changed, commits, progressed)
    out: dict[str, Any] = {"discrepancies": found, "notes": notes, "restored": [], "reverted": [], "stop": None}
    ledger = tasks.load(root)
    if ledger is not None:
        files, recorded = ledger
        task_found, facts, accepted = tasks.compare(root, recorded, files, after, session.confine)
        out["tasks"] = facts
        found += task_found
        tampered = [d for d in task_found if d["kind"] in ("task_tampered", "unverified_completion")]
        if tampered and trust["on_task_tamper"] == "restore":
            files_hit = sorted({d["task"]["file"] for d in tampered})
            dirty = _dirty(root, files_hit)
            start_head = (read_json(tamper.fingerprint_path(root)) or {}).get("head")
            out["restored"] = tasks.restore(root, tampered, recorded, start_head)
            out["committed"] = _commit(root, out["restored"], dirty, "dun: restore mission boxes the agent "
                                       "removed, reworded or ticked without evidence")
            accepted = tasks.scan(root, files)
        elif tampered and trust["on_task_tamper"] == "stop":
            out["stop"] = "task_tampered"
        elif tampered:  # flag: recorded once; the ledger moves on so one offence is not reported every iteration
            accepted = tasks.scan(root, files)
        from dun.core.atomic import write_json_atomic

        write_json_atomic(tasks.ledger_path(root), {"schema_version": 1, "files": files, "tasks": accepted})
    ctx = session.context()
    checker = tamper.compare(root, ctx, session.catalog(), trust["protected"])
    found += checker
    if checker and trust["on_checker_tamper"] == "revert":
        out["reverted"] = tamper.revert(root, checker[0])
        if out["reverted"]:
            # a reverted file holds dun's version only, so committing it takes nothing of the agent's
            _commit(root, out["reverted"], set(), "dun: revert changes to what decides 'done'")
    elif checker and trust["on_checker_tamper"] == "stop":
        out["stop"] = out["stop"] or "checker_tampered"
    found += tamper.tests_removed(root, tree_before, tree_after, newly_passing)
    if oscillated(state, trust["oscillation_window"], tree_before, tree_after, bool(after.actionable())):
        found.append(discrepancy("oscillation", "the work tree went back to a state of an earlier iteration while "
                                 "checks still fail", tree=tree_after))
    return out


def oscillated(state: LoopState, window: int, tree_before: str | None, tree_after: str | None,
               failing: bool) -> bool:
    """The agent took the work tree back to where an earlier iteration left it, while checks still fail. Only
    the agent's own moves count: an iteration that changed nothing (a crash, a timeout, an idle answer) did not
    go anywhere, and a tree dun produced (a restore, a revert) is dun's act, never the agent's."""
    if not tree_after or not failing or tree_after == tree_before:
        return False
    trees = list(state.get("trees") or [])
    theirs = set(trees[-window:-1]) - set(state.get("dun_trees") or [])
    return tree_after in theirs and bool(trees) and tree_after != trees[-1]


def remember_tree(state: LoopState, window: int, tree: str | None, by_dun: bool) -> None:
    """The work tree an iteration ended with (after dun's repairs); `by_dun`: dun's restore or revert made it."""
    if not tree:
        return
    keep = max(window, 1) + 1
    state["trees"] = [*(state.get("trees") or []), tree][-keep:]
    if by_dun:
        state["dun_trees"] = [*(state.get("dun_trees") or []), tree][-keep:]
