"""Review items: the detector's findings, waiting for a person.

An item is `open` until someone runs `dun ack ID` (seen; still shown to the agent) or `dun review dismiss
ID` (not a problem; shown nowhere). The person's decisions and the time each item was notified live in
`.dun/review.json` (not in the database, which can be rebuilt), so a rebuild neither reopens nor re-notifies.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dun.core.atomic import write_json_atomic
from dun.core.errors import UsageError
from dun.core.timefmt import now_iso as now
from dun.store.store import Store, read_json

if TYPE_CHECKING:  # the detector and the database load when used: `dun iterate`'s prompt section rarely needs them
    from dun.config.sections import Review
    from dun.history.deficiency import Finding
    from dun.history.incremental import Detector
    from dun.history.store import History

STATUSES = ("open", "acked", "dismissed")
PROMPT_ITEMS = 5


def decisions_path(root: Path) -> Path:
    return Store(root).review_path


@contextlib.contextmanager
def decisions(root: Path) -> Iterator[dict[str, dict[str, object]]]:
    """The decisions, locked for a read-modify-write (the loop notifies while a person acknowledges)."""
    path = decisions_path(root)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path.with_name("review.lock"), os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        items = dict((read_json(path) or {}).get("items") or {})
        before = json.dumps(items, sort_keys=True)
        yield items
        if json.dumps(items, sort_keys=True) != before:
            write_json_atomic(path, {"schema_version": 1, "items": items})
    finally:
        os.close(fd)


def read_decisions(root: Path) -> dict[str, dict[str, object]]:
    return dict((read_json(decisions_path(root)) or {}).get("items") or {})


def update(history: History, settings: Review | None = None, detector: Detector | None = None) -> list[Finding]:
    """Run the detector and store its findings as review items; returns the findings never notified yet (open,
    in the order found), for the caller to notify. `detector`: one kept from the previous call (a loop's), which
    reads only what was added since; without it, the whole history is read."""
    from dun.history.deficiency import detect

    found = detector.findings(history, settings) if detector is not None else detect(history, settings)
    decided = read_decisions(history.root)
    with history.transaction() as conn:
        conn.execute("DELETE FROM review_items")
        for f in found:
            d = decided.get(f.id) or {}
            status = d.get("status") if d.get("status") in STATUSES else "open"
            conn.execute("INSERT INTO review_items VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                         (f.id, f.pattern, f.subject, f.title, f.detail, json.dumps(f.evidence, sort_keys=True),
                          f.first_ts, f.last_ts, status, d.get("decided_at"), d.get("notified_at")))
    return [f for f in found if not (decided.get(f.id) or {}).get("notified_at")
            and (decided.get(f.id) or {}).get("status", "open") == "open"]


def mark_notified(root: Path, ids: list[str]) -> None:
    with decisions(root) as items:
        for item_id in ids:
            items.setdefault(item_id, {})["notified_at"] = now()


def items(history: History, statuses: tuple[str, ...] = STATUSES) -> list[dict[str, Any]]:
    marks = ", ".join("?" for _ in statuses)
    found = history.query(f"SELECT * FROM review_items WHERE status IN ({marks}) ORDER BY first_ts, id",
                          list(statuses))
    for row in found:
        row["evidence"] = json.loads(row["evidence"])
    return found


def resolve(history: History, prefix: str) -> str:
    """The id an unambiguous prefix names."""
    ids = [r["id"] for r in history.query("SELECT id FROM review_items WHERE id LIKE ? ORDER BY id",
                                          [prefix.lower() + "%"])] if prefix else []
    if len(ids) != 1:
        raise UsageError(f"no review item '{prefix}' (`dun review` lists them)" if not ids else
                         f"'{prefix}' names {len(ids)} review items ({', '.join(ids[:4])}); give more of the id")
    return str(ids[0])


def decide(history: History, prefix: str, status: str) -> str:
    item_id = resolve(history, prefix)
    stamp = now()
    with decisions(history.root) as decided:
        decided.setdefault(item_id, {}).update(status=status, decided_at=stamp)
    with history.transaction() as conn:
        conn.execute("UPDATE review_items SET status = ?, decided_at = ? WHERE id = ?", (status, stamp, item_id))
    return item_id


def evidence_text(evidence: list[dict[str, Any]], limit: int = 6) -> str:
    refs = [f"{e['run_id'][:8]}#{e['iteration']}" if e.get("iteration") is not None else f"{e['run_id'][:8]}"
            for e in evidence]
    return ", ".join(refs[:limit]) + (f" (+{len(refs) - limit} more)" if len(refs) > limit else "")


def prompt_section(store: Store, settings: Review | None) -> str:
    """Open and acknowledged items of `store`'s repository (the session's) as a short prompt section ("" when there
    are none, `review.in_prompt` is off, or the history cannot be read: the prompt never fails because of it)."""
    if settings is not None and not settings.in_prompt:
        return ""
    if not store.history_db.exists():  # no run yet: nothing to show, and a read creates nothing
        return ""
    from dun.history.store import History

    try:
        with History.open(store.root) as history:
            shown = items(history, ("open", "acked"))
    except Exception:
        return ""
    if not shown:
        return ""
    lines = ["dun found these patterns in this repository's history. Do not repeat them; if one cannot be avoided, "
             "say so in NEXT_RECOMMENDATION.", ""]
    lines += [f"- {r['title']}: {r['detail']}"[:300] for r in shown[:PROMPT_ITEMS]]
    if len(shown) > PROMPT_ITEMS:
        lines.append(f"- ... and {len(shown) - PROMPT_ITEMS} more (`dun review`)")
    return "\n".join(lines) + "\n"
