"""Claim verification: TASK_COMPLETED, FILES_MODIFIED and completion claims against the re-run checks and git."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import cast

from dun.answer.block import StatusBlock
from dun.engine.model import Report
from dun.store.records import Box, DiscrepancyRecord


@dataclass
class Discrepancy:
    """What trust verification or the review gate found in one iteration: its kind (DiscrepancyKind), what the agent
    is told, and the facts of its kind (None: not one of its facts). Logged as its record (`to_record`)."""

    kind: str
    detail: str
    claim: str | None = None  # unverified_completion of a claim: the claim and the check that still fails
    check: str | None = None
    claimed: int | str | None = None  # phantom_changes: the FILES_MODIFIED the agent gave
    task: Box | None = None  # task_tampered, unverified_completion of a box: the box as the ledger had it
    flip: bool | None = None  # a box ticked without evidence (unticked again on restore)
    paths: list[str] | None = None  # checker_tampered: what changed, and how to put it back
    diff: str | None = None
    head: str | None = None
    existed: list[str] | None = None
    blobs: dict[str, str] | None = None
    tree: str | None = None  # oscillation: the tree that came back
    deleted: list[str] | None = None  # tests_removed
    count_before: int | None = None
    count_after: int | None = None

    def to_record(self) -> DiscrepancyRecord:
        """Its record for the iteration log: the facts it has (a None is a fact it does not have)."""
        return cast(DiscrepancyRecord, {f.name: getattr(self, f.name) for f in dataclasses.fields(self)
                                        if getattr(self, f.name) is not None})


def verify_claims(block: StatusBlock | None, after: Report, files_changed: int, commits: int,
                  progressed: frozenset[str] = frozenset()) -> tuple[list[Discrepancy], list[str]]:
    """(discrepancies, notes) for one iteration's status block. `progressed`: the checks with real progress this
    iteration (an item of theirs gone: a box ticked, a test newly passing). Claiming such a check is honest work in
    progress, even while it still has other items; a claim naming one item (`check@file:line`) is held to it."""
    if block is None:
        return [], []
    found: list[Discrepancy] = []
    notes: list[str] = []
    failing = {r.id: r for r in after.actionable()}
    claim = block.task_completed
    if claim and block.status == "COMPLETE":
        check_id, _, location = claim.partition("@")
        result = failing.get(check_id.strip())
        moved = not location and result is not None and result.id in progressed
        if result is not None and not moved and (
                not location or any(i.location() == location.strip() for i in result.items)):
            what = f"{location.strip()} is still listed by {result.id}" if location else \
                f"check {result.id} still fails ({result.signal})"
            found.append(Discrepancy("unverified_completion", f"your previous claim '{claim}' was not verified: "
                                     f"{what}", claim=claim, check=result.id))
    # `commits`: the files the iteration's commits changed (an empty commit changes none); committing work left
    # uncommitted by an earlier iteration changes no file in the tree but is a change
    changed = files_changed > 0 or commits > 0
    if block.files_modified and not changed:
        found.append(Discrepancy("phantom_changes", f"you reported FILES_MODIFIED: {block.files_modified}, but git "
                                 "shows no change since the iteration began", claimed=block.files_modified))
    elif block.files_modified is not None and block.files_modified != files_changed:
        notes.append(f"FILES_MODIFIED {block.files_modified}, git shows {files_changed}")
    # claiming completion without touching anything is only empty while work remains (a confirmation that all
    # is done rightly changes nothing)
    if (block.status == "COMPLETE" or block.exit_signal) and not changed and failing and not any(
            d.kind == "phantom_changes" for d in found):
        found.append(Discrepancy("empty_completion", "you reported " + (
            "EXIT_SIGNAL: true" if block.exit_signal else "STATUS: COMPLETE") + " but changed nothing at all"))
    return found, notes
