"""`.dun/logs/events.jsonl`: waits and notifications, one JSON line each, the file the database rebuilds them from.

It lives in the run's logs directory, so it is archived with the run. Appends are single `write` calls on an
O_APPEND descriptor: lines from two processes never interleave.
"""

from __future__ import annotations

import datetime
import json
import os
import sys
import uuid
from collections.abc import Mapping
from pathlib import Path

from dun.core.redact import Redactor
from dun.store.store import Store


def events_path(root: Path) -> Path:
    return Store(root).events_log


def stamp() -> str:
    return datetime.datetime.now(datetime.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def append(root: Path, entry: Mapping[str, object], redactor: Redactor | None = None) -> dict[str, object]:
    """Write the entry (given an id and a time, cleaned by `redactor`: the command's, else the well-known formats)
    to the file, then to the database; neither failure raises."""
    full = {"id": uuid.uuid4().hex[:16], "time": stamp(), **entry}
    try:
        path = events_path(root)
        path.parent.mkdir(parents=True, exist_ok=True)
        clean = (redactor or Redactor()).redact_data(full)
        line = (json.dumps(clean, ensure_ascii=False, default=str) + "\n").encode("utf-8")
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)  # dun's records are private
        try:
            os.write(fd, line)
        finally:
            os.close(fd)
    except OSError as exc:
        sys.stderr.write(f"dun: could not write {events_path(root)}: {exc}\n")
    try:
        from dun.history.store import History

        with History.open(root) as history:
            history.record_event(full)
    except Exception as exc:  # the file has it; the next sync brings it into the database
        sys.stderr.write(f"dun: history not updated: {exc}".splitlines()[0] + "\n")
    return full
