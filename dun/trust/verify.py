"""After every iteration: claims, the task ratchet, checker tampering, removed tests and oscillation, with the
configured policies applied. The result goes into the iteration log as `verification`."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dun.answer.block import StatusBlock
from dun.core.git import git
from dun.engine.model import Report
from dun.engine.session import Session
from dun.store.records import VerificationLog
from dun.store.state import LoopState
from dun.trust import tamper, tasks
from dun.trust.claims import Discrepancy, verify_claims

if TYPE_CHECKING:
    from dun.config.sections import Settings


@dataclass
class Verification:
    """What trust verification found in one iteration and what dun did about it; logged as the iteration's
    `verification` (`to_log`), the policy's `stop` aside."""

    discrepancies: list[Discrepancy]
    notes: list[str]
    restored: list[str] = field(default_factory=list)  # mission boxes put back
    reverted: list[str] = field(default_factory=list)  # files of what decides "done" put back
    stop: str | None = None  # a trust policy of `stop` that fired
    tasks: dict[str, list[str]] | None = None  # the mission's boxes: ticked, unticked, added, ...
    committed: list[str] | None = None  # of `restored`, what dun committed as itself
    review: dict[str, object] | None = None  # the review gate's verdicts

    def to_log(self) -> VerificationLog:
        out: VerificationLog = {"discrepancies": [d.to_record() for d in self.discrepancies], "notes": self.notes,
                                "restored": self.restored, "reverted": self.reverted}
        if self.tasks is not None:
            out["tasks"] = self.tasks
        if self.committed is not None:
            out["committed"] = self.committed
        if self.review is not None:
            out["review"] = self.review
        return out


def mission_files(session: Session) -> list[str]:
    from dun.checks.checkboxes import mission_paths

    ctx = session.context()
    patterns = [f for c in session.catalog().checks if c.type == "checkboxes" for f in c.options.get("files", [])]
    patterns.append(session.settings.iterate.mission_file)
    return mission_paths(ctx, list(dict.fromkeys(patterns)))


def snapshot(session: Session, settings: Settings) -> dict[str, dict[str, str]]:
    """What decides "done", as it is now (tamper.take)."""
    return tamper.take(session.root, session.context(), session.catalog(), settings.trust.protected,
                       [str(d) for d in settings.plugins.dirs])


def rebaseline(session: Session, settings: Settings, head: str | None,
               new_run: bool = False) -> tuple[dict[str, object], list[str]]:
    """At a run's start and right before each agent starts: what changed since dun last looked (between runs, or
    between iterations) is the operator's, taken as the new baseline. Returns the snapshot the agent will be
    held to (with `head`) and the paths the operator changed. A new run records its ledger of boxes afresh."""
    root = session.root
    old = tamper.read_baseline(root)
    snap = snapshot(session, settings)
    known = old is not None and old.get("schema_version") == tamper.SCHEMA  # an older dun's digests differ
    changes = [p for p in tamper.changed(old["files"], snap["files"]) if p != tamper.THRESHOLDS] if known and old \
        else []
    mission = tasks.rebase(root)
    if new_run or tasks.load(root) is None:
        tasks.record(root, mission_files(session))
    tamper.write_baseline(root, snap, head, old)
    return {**snap, "head": head}, sorted({*changes, *mission})


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


def verify_iteration(session: Session, settings: Settings, state: LoopState, block: StatusBlock | None,
                     after: Report, files_changed: int, commits: int, tree_before: str | None,
                     tree_after: str | None, newly_passing: list[str],
                     progressed: frozenset[str] = frozenset(), checker: dict[str, Any] | None = None,
                     ) -> Verification:
    """`checker`: the snapshot of what decides "done" taken right before the agent started (the start of the
    iteration); only what changed since is the agent's."""
    root = session.root
    if checker is None:  # an iteration opened by an older dun: its run's baseline stands in
        checker = tamper.read_baseline(root) or {}
    trust = settings.trust
    found, notes = verify_claims(block, after, files_changed, commits, progressed)
    out = Verification(found, notes)
    ledger = tasks.load(root)
    if ledger is not None:
        files, recorded = ledger
        task_found, facts, accepted = tasks.compare(root, recorded, files, after, session.confine)
        out.tasks = facts
        found += task_found
        tampered = [d for d in task_found if d.kind in ("task_tampered", "unverified_completion")]
        if tampered and trust.on_task_tamper == "restore":
            files_hit = sorted({d.task["file"] for d in tampered if d.task is not None})
            dirty = _dirty(root, files_hit)
            out.restored = tasks.restore(root, tampered, recorded, checker.get("head"))
            out.committed = _commit(root, out.restored, dirty, "dun: restore mission boxes the agent "
                                       "removed, reworded or ticked without evidence")
            accepted = tasks.scan(root, files)
        elif tampered and trust.on_task_tamper == "stop":
            out.stop = "task_tampered"
        elif tampered:  # flag: recorded once; the ledger moves on so one offence is not reported every iteration
            accepted = tasks.scan(root, files)
        tasks.save(root, files, accepted)
    changed = _checker(session, settings, checker, out) if checker.get("files") else []
    found += changed
    found += tamper.tests_removed(root, tree_before, tree_after, newly_passing)
    if oscillated(state, trust.oscillation_window, tree_before, tree_after, bool(after.actionable())):
        found.append(Discrepancy("oscillation", "the work tree went back to a state of an earlier iteration while "
                                 "checks still fail", tree=tree_after))
    return out


def _checker(session: Session, settings: Settings, before: dict[str, Any], out: Verification,
             ) -> list[Discrepancy]:
    """The agent's changes to what decides "done" (and to dun's record of it), with the policy applied; the
    baseline then becomes what the tree holds (reverted, or flagged and moved on)."""
    root, trust = session.root, settings.trust
    after = snapshot(session, settings)
    found = tamper.compare(root, session.context(), before, after, trust.protected, before.get("head"))
    found += tamper.baseline_missing(root, before)
    if found and trust.on_checker_tamper == "revert":
        out.reverted = tamper.revert(root, found[0]) if found[0].paths != [tamper.FINGERPRINT_FILE] else []
        if out.reverted:
            # a reverted file holds dun's version only, so committing it takes nothing of the agent's
            _commit(root, out.reverted, set(), "dun: revert changes to what decides 'done'")
            after = snapshot(session, settings)
    elif found and trust.on_checker_tamper == "stop":
        out.stop = out.stop or "checker_tampered"
        after = before  # the run stops held to what the agent found: the next start names the change
    tamper.write_baseline(root, {"files": after["files"], "blobs": after["blobs"]}, before.get("head"),
                          None if found else tamper.read_baseline(root))
    return found


def checker_changes(session: Session, settings: Settings, before: dict[str, object],
                    ) -> tuple[list[Discrepancy], list[str]]:
    """An iteration that was killed before its conclusion: its changes to what decides "done" (reverted by the
    policy) and the files reverted. Never a new baseline: killing dun must not launder the agent's changes."""
    out = Verification([], [])
    return _checker(session, settings, before, out), out.reverted


def oscillated(state: LoopState, window: int, tree_before: str | None, tree_after: str | None,
               failing: bool) -> bool:
    """The agent took the work tree back to where an earlier iteration left it, while checks still fail. Only
    the agent's own moves count: an iteration that changed nothing (a crash, a timeout, an idle answer) did not
    go anywhere, and a tree dun produced (a restore, a revert) is dun's act, never the agent's."""
    if not tree_after or not failing or tree_after == tree_before:
        return False
    trees = list(state.trees)
    theirs = set(trees[-window:-1]) - set(state.dun_trees)
    return tree_after in theirs and bool(trees) and tree_after != trees[-1]


def remember_tree(state: LoopState, window: int, tree: str | None, by_dun: bool) -> None:
    """The work tree an iteration ended with (after dun's repairs); `by_dun`: dun's restore or revert made it."""
    if not tree:
        return
    keep = max(window, 1) + 1
    state.trees = [*state.trees, tree][-keep:]
    if by_dun:
        state.dun_trees = [*state.dun_trees, tree][-keep:]
