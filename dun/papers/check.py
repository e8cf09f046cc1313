"""The `papers` check type (the `papers-unread` check of the papers manifest): the papers polled that nobody has
looked at yet. A paper is settled by `dun papers read ID` or `dun papers mission ID` (the operator), or by a
triage note NOTES_DIR/SLUG.md in the work tree (what an agent, which cannot write `.dun/`, does)."""

from __future__ import annotations

import posixpath
from typing import Any

from dun.engine.checkapi import CheckContext, CheckSpec
from dun.engine.model import Item, Outcome, Status, cap_items


def notes_dir(ctx: CheckContext) -> str:
    config: Any = ctx.config
    try:
        return str(config.get("papers.notes_dir"))
    except (AttributeError, KeyError, TypeError):
        return "papers"


def outside(folder: str) -> bool:
    """Whether `folder` (papers.notes_dir) is no directory of the work tree: empty, absolute or climbing out with
    `..`. The agent would be told to write its notes where it cannot, or where nobody looks."""
    normal = posixpath.normpath(folder) if folder else ""
    return normal == "" or normal.startswith(("/", "../")) or normal == ".."


def inputs(spec: CheckSpec, ctx: CheckContext) -> list[str]:
    """`.dun/papers.jsonl` (ignored by git, so outside the tree's fingerprint) and the notes directory's listing."""
    from dun.store.layout import PAPERS

    folder = notes_dir(ctx)
    return [PAPERS] if outside(folder) else [PAPERS, folder]


def run(spec: CheckSpec, ctx: CheckContext) -> Outcome:
    from dun.core.kinds import PaperStatus
    from dun.papers.model import Paper
    from dun.store.store import Store

    records, bad = Store(ctx.root).read_papers()
    papers = [Paper.from_dict(r) for r in records]
    folder = notes_dir(ctx)
    if outside(folder):
        return Outcome(Status.ERROR, f"papers.notes_dir {folder!r}: not a directory inside the repository (e.g. "
                                     "papers)", next="Fix papers.notes_dir in .dun/config.yaml (the operator's).")
    unread = [p for p in papers if p.status == PaperStatus.NEW and not (ctx.root / folder / f"{p.slug}.md").exists()]
    skipped = f"; {bad} unreadable line(s) skipped" if bad else ""
    if not unread:
        return Outcome(Status.PASS, f"{len(papers)} paper(s), none unread{skipped}")
    items = [Item(text=f"unread paper {p.id}: {p.title} ({p.link or 'no link'}): write {folder}/{p.slug}.md",
                  file=f"{folder}/{p.slug}.md") for p in unread]
    return Outcome(Status.FAIL, f"{len(unread)} of {len(papers)} paper(s) unread{skipped}",
                   items=cap_items(items, spec.options["max_items"], "unread papers"),
                   next=f"For each paper: read it, then write {folder}/SLUG.md (the file each item names) saying "
                        "whether it matters to this repository and why; a paper worth a deep dive says so there.")
