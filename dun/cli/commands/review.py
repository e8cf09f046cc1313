"""`dun review`: the deficiency detector's review items, and a person's answer to each (ack or dismiss)."""

from __future__ import annotations

import json
import sys

from dun.core.kinds import ExitCode
from dun.engine.session import open_session


def run_review(path: str | None, as_json: bool, show_all: bool) -> int:
    """Exit 1 while any item is open (a person is needed), else 0."""
    from dun.history import review
    from dun.loop.operator import refresh

    session = open_session(path)
    with refresh(session.root, session.settings.review) as history:
        found = review.items(history, review.STATUSES if show_all else ("open", "acked"))
    is_open = any(r["status"] == "open" for r in found)
    if as_json:
        sys.stdout.write(json.dumps({"items": found}, indent=2) + "\n")
        return ExitCode.WORK_REMAINS if is_open else ExitCode.OK
    if not found:
        sys.stdout.write("no review items: the detector found no pattern that needs a person\n")
        return ExitCode.OK
    for r in found:
        sys.stdout.write(f"{r['id']}  {r['status']:9}  {r['pattern']:16}  {r['title']}\n"
                         f"{'':10}{r['detail']}\n{'':10}evidence: {review.evidence_text(r['evidence'])}\n")
    return ExitCode.WORK_REMAINS if is_open else ExitCode.OK


def run_decide(path: str | None, item: str, status: str) -> int:
    from dun.history import review
    from dun.loop.operator import refresh

    session = open_session(path)
    with refresh(session.root, session.settings.review) as history:
        item_id = review.decide(history, item, status)
    sys.stdout.write(f"{item_id} {status}\n")
    return ExitCode.OK
