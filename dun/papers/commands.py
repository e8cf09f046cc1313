"""`dun papers poll | list | read | mission`: the paper watch's commands, added to dun's command line through the
`dun_commands` hook. Each takes `-C PATH` for the repository."""

from __future__ import annotations

import sys
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

import click

from dun.core.errors import UsageError
from dun.core.kinds import ExitCode, PaperStatus
from dun.papers.model import Paper

if TYPE_CHECKING:
    from dun.config.sections import Papers
    from dun.engine.session import Session

REPO = click.option("-C", "--path", "path", type=click.Path(file_okay=False), help="Repository (default: here).")
MAX_FEEDS_AT_ONCE = 8


@click.group("papers")
def papers_group() -> None:
    """The paper watch: poll feeds into .dun/papers.jsonl, list them, make a deep-dive mission of one."""


@papers_group.command("poll")
@REPO
@click.option("--feed", "feeds", multiple=True, metavar="URL", help="Poll URL instead of papers.feeds (repeatable).")
def poll_cmd(path: str | None, feeds: tuple[str, ...]) -> None:
    """Read every feed (papers.feeds) and record the papers not seen before. Exit 0: every feed read; 1: a feed
    failed (one line each, the others still recorded)."""
    sys.exit(run_poll(path, list(feeds)))


@papers_group.command("list")
@REPO
@click.option("--unread", is_flag=True, help="Only the papers nobody has looked at (status new).")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output (one JSON object a line).")
def list_cmd(path: str | None, unread: bool, as_json: bool) -> None:
    """The papers recorded, newest first: id, status, date and title."""
    sys.exit(run_list(path, unread, as_json))


@papers_group.command("read")
@click.argument("ids", nargs=-1, required=True, metavar="ID...")
@REPO
def read_cmd(ids: tuple[str, ...], path: str | None) -> None:
    """Mark papers as looked at: the papers-unread check no longer lists them."""
    sys.exit(run_read(path, list(ids)))


@papers_group.command("mission")
@click.argument("paper", metavar="ID")
@REPO
@click.option("--force", is_flag=True, help="Replace MISSION.md and the deep-dive checks, keeping backups.")
def mission_cmd(paper: str, path: str | None, force: bool) -> None:
    """Write MISSION.md as a deep dive into paper ID (the deepdive mission template) and its checks."""
    sys.exit(run_mission(path, paper, force))


def _session(path: str | None) -> Session:
    from dun.engine.session import open_session

    return open_session(path, agents=False)


def _settings(session: Session) -> Papers:
    return session.config.settings.papers


def run_poll(path: str | None, feeds: list[str]) -> int:
    from dun.core.timefmt import now_iso
    from dun.papers.feeds import FeedError, Limits, check_url, fetch, parse

    session = _session(path)
    settings = _settings(session)
    urls = feeds or list(settings.feeds)
    if not urls:
        raise UsageError("no feeds to poll: list them in papers.feeds (.dun/config.yaml) or pass --feed URL")
    for url in urls:
        try:
            check_url(url)
        except FeedError as exc:
            raise UsageError(str(exc)) from None
    limits = Limits(settings.timeout_s, settings.max_bytes, settings.max_entries)

    def one(url: str) -> list[Paper] | FeedError:
        try:
            return parse(url, fetch(url, limits), limits)
        except FeedError as exc:
            return exc

    # hosts at once, but one request at a time to each host (arXiv asks API users not to hammer it)
    urls = list(dict.fromkeys(urls))  # a feed named twice is read once
    by_host: dict[str, list[str]] = {}
    for url in urls:
        by_host.setdefault(urlsplit(url).netloc.lower(), []).append(url)
    found: dict[str, list[Paper] | FeedError] = {}
    with ThreadPoolExecutor(max_workers=min(MAX_FEEDS_AT_ONCE, len(by_host))) as pool:
        for host_urls, host_results in zip(by_host.values(), pool.map(lambda group: [one(u) for u in group],
                                                                      by_host.values()), strict=True):
            found.update(zip(host_urls, host_results, strict=True))
    results = [found[url] for url in urls]  # reported in the order the feeds are listed
    store = session.store
    failed = 0
    with store.papers_lock():
        records, _ = store.read_papers()
        known = {r["id"]: r for r in records}
        stamp = now_iso()
        for url, result in zip(urls, results, strict=True):
            if isinstance(result, FeedError):
                failed += 1
                sys.stderr.write(f"dun: {result}\n")
                continue
            new = 0
            for paper in result:
                if paper.id in known:
                    seen = known[paper.id].setdefault("feeds", [])
                    if isinstance(seen, list) and url not in seen:
                        seen.append(url)
                    continue
                paper.feeds, paper.first_seen = [url], stamp
                known[paper.id] = paper.to_dict()
                records.append(known[paper.id])
                new += 1
            sys.stdout.write(f"{url}: {len(result)} entries, {new} new\n")
        kept = _bounded(records, settings.max_papers)
        if failed < len(urls):  # nothing read: nothing to write (a first poll that failed creates no file)
            store.write_papers(kept)
    unread = sum(1 for r in kept if r.get("status", PaperStatus.NEW) == PaperStatus.NEW)
    sys.stdout.write(f"{len(kept)} papers, {unread} unread (dun papers list --unread)\n")
    return ExitCode.WORK_REMAINS if failed else ExitCode.OK


def _bounded(records: list[dict[str, object]], limit: int) -> list[dict[str, object]]:
    """At most `limit` papers: the oldest settled ones (read, made missions) go first, unread ones only last."""
    if len(records) <= limit:
        return records
    order = sorted(range(len(records)), key=lambda i: (records[i].get("status", "new") == PaperStatus.NEW,
                                                       str(records[i].get("first_seen", "")), i))
    drop = set(order[:len(records) - limit])
    return [r for i, r in enumerate(records) if i not in drop]


def _papers(session: Session) -> list[Paper]:
    records, bad = session.store.read_papers()
    if bad:
        sys.stderr.write(f"dun: {session.store.papers_path}: {bad} unreadable line(s) skipped\n")
    return [Paper.from_dict(r) for r in records]


def run_list(path: str | None, unread: bool, as_json: bool) -> int:
    import json

    papers = _papers(_session(path))
    if unread:
        papers = [p for p in papers if p.status == PaperStatus.NEW]
    papers.sort(key=lambda p: (p.first_seen, p.published), reverse=True)
    if as_json:
        sys.stdout.writelines(json.dumps(p.to_dict(), ensure_ascii=False) + "\n" for p in papers)
        return ExitCode.OK
    if not papers:
        sys.stdout.write("no unread papers\n" if unread else "no papers yet (dun papers poll)\n")
    for p in papers:
        sys.stdout.write(f"{p.id}  {p.status:<7}  {p.published[:10] or '-':<10}  {p.title}\n")
    return ExitCode.OK


def find(papers: list[Paper], wanted: str) -> Paper:
    """The paper whose id is `wanted`, or ends with `:wanted` (`2401.01234` for `arxiv:2401.01234`)."""
    exact = [p for p in papers if p.id == wanted]
    matches = exact or [p for p in papers if p.id.split(":", 1)[-1] == wanted.removeprefix("arXiv:")]
    if len(matches) == 1:
        return matches[0]
    if matches:
        raise UsageError(f"paper '{wanted}' is ambiguous: {', '.join(p.id for p in matches)}")
    raise UsageError(f"no paper '{wanted}' (dun papers list shows the ids)")


def _set_status(session: Session, ids: list[str], status: PaperStatus) -> list[Paper]:
    store = session.store
    with store.papers_lock():
        records, _ = store.read_papers()
        papers = [Paper.from_dict(r) for r in records]
        chosen = [find(papers, wanted) for wanted in ids]  # all found before any is changed
        by_id = {r["id"]: r for r in records}
        for paper in chosen:
            by_id[paper.id]["status"] = status
        store.write_papers(records)
    return chosen


def run_read(path: str | None, ids: list[str]) -> int:
    for paper in _set_status(_session(path), ids, PaperStatus.READ):
        sys.stdout.write(f"read {paper.id}: {paper.title}\n")
    return ExitCode.OK


def run_mission(path: str | None, wanted: str, force: bool) -> int:
    from dun.missions import named_dir, place, render

    session = _session(path)
    paper = find(_papers(session), wanted)
    mission_dir = session.config.settings.missions.dir
    extra = [named_dir(session.root, mission_dir, "missions.dir")] if mission_dir else []
    rendered = render("deepdive", {
        "topic": paper.title, "slug": paper.slug, "paper_id": paper.id, "paper_title": paper.title,
        "paper_authors": ", ".join(paper.authors) or "(not given)", "paper_link": paper.link or "(not given)",
        "paper_published": paper.published or "(not given)", "paper_summary": paper.summary or "(no abstract given)",
    }, extra)
    if rendered.manifest is not None:  # a user's deepdive template whose checks dun check could not load: refused
        from dun.engine.manager import check_types
        from dun.engine.manifest import check_manifest_text
        from dun.missions import CHECKS_FILE

        check_manifest_text(rendered.manifest, str(rendered.source / CHECKS_FILE), check_types(session.pm))
    files = rendered.files()
    there = [rel for rel in files if (session.root / rel).exists() or (session.root / rel).is_symlink()]
    if there and not force:
        raise UsageError(f"{' and '.join(there)} already there: --force replaces them (keeping each as FILE.bak)")
    for rel, text in files.items():
        sys.stdout.write(place(session.root, rel, text, force) + "\n")
    _set_status(session, [paper.id], PaperStatus.MISSION)
    sys.stdout.write(f"next: dun check, then dun loop: the deep dive's notes go to deepdive/{paper.slug}.md\n")
    return ExitCode.OK
