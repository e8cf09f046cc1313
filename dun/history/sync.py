"""The database from the JSON files: an incremental catch-up (`sync`, run before every history command, so the
database is never behind the logs whatever wrote them) and a full `rebuild`.

Read, per run directory (`.dun/` for the current run, `.dun/archive/<run_id>/` for archived ones):
`state.json`, `logs/iteration-N.json`, `logs/guard.jsonl` (guard decisions) and `logs/events.jsonl` (waits and
notifications, written by dun.history and dun.notify). Plus `.dun/tasks.json`, the mission's boxes.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import time
from pathlib import Path

from dun.core.errors import UsageError
from dun.history.schema import DATA_TABLES
from dun.history.store import History, db_path
from dun.store.store import Store, read_json

ITERATION_FILE = re.compile(r"iteration-(\d+)\.json")


def _stat(path: Path) -> tuple[int, int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_ino, st.st_size, st.st_mtime_ns


class Sources:
    """What was already read of each file (`sources` table), so a sync reads only what changed."""

    def __init__(self, history: History) -> None:
        self.history = history
        self.dun = Store(history.root).dir

    def key(self, path: Path) -> str:
        return str(path.relative_to(self.dun))

    def changed(self, path: Path) -> bool:
        now = _stat(path)
        row = self.history.conn.execute("SELECT inode, size, mtime_ns FROM sources WHERE path = ?",
                                        (self.key(path),)).fetchone()
        return now is not None and (row is None or tuple(row) != now)

    def mark(self, path: Path, offset: int | None = None, lines: int | None = None) -> None:
        st = _stat(path)
        if st is not None:
            self.history.conn.execute("INSERT OR REPLACE INTO sources VALUES (?, ?, ?, ?, ?, ?)",
                                      (self.key(path), *st, offset, lines))

    def new_lines(self, path: Path) -> tuple[int, list[str]]:
        """(number of the first new line, the complete lines appended since the last read)."""
        st = _stat(path)
        if st is None:
            return 0, []
        row = self.history.conn.execute("SELECT inode, offset, lines FROM sources WHERE path = ?",
                                        (self.key(path),)).fetchone()
        offset, seq = (int(row[1] or 0), int(row[2] or 0)) if row and row[0] == st[0] and st[1] >= (row[1] or 0) \
            else (0, 0)  # a new or truncated file: from the start
        with path.open("rb") as fh:
            fh.seek(offset)
            data = fh.read()
        end = data.rfind(b"\n") + 1  # a line still being written waits for the next sync
        self.mark(path, offset + end, seq + data[:end].count(b"\n"))
        return seq, data[:end].decode("utf-8", "replace").splitlines()


def _json_lines(lines: list[str]) -> list[dict[str, object] | None]:
    out: list[dict[str, object] | None] = []
    for line in lines:
        try:
            value = json.loads(line)
        except ValueError:
            value = None
        out.append(value if isinstance(value, dict) else None)
    return out


def ingest_dir(history: History, base: Path, archived: bool) -> str | None:
    """Everything of one run directory that changed since the last sync; returns the directory's run id."""
    sources = Sources(history)
    state_file = base / "state.json"
    state = read_json(state_file)
    run_id = str(state.get("run_id") or "") if state else ""
    if state and run_id and sources.changed(state_file):
        history.record_run(state, archived)
        sources.mark(state_file)
    logs = base / "logs"
    present: dict[str, set[int]] = {}
    for path in sorted(logs.glob("iteration-*.json")) if logs.is_dir() else []:
        match = ITERATION_FILE.fullmatch(path.name)
        if not match:
            continue
        changed = sources.changed(path)
        log = read_json(path) if changed else None
        if changed and log is not None:
            log.setdefault("iteration", int(match.group(1)))
            log["run_id"] = log.get("run_id") or run_id
            history.record_iteration(log)
            sources.mark(path)
        owner = str(log["run_id"]) if log else _owner(history, run_id, int(match.group(1)))
        present.setdefault(owner, set()).add(int(match.group(1)))
        run_id = run_id or owner
    for owner, numbers in present.items():
        history.forget_iterations(owner, numbers)
    if run_id and not present.get(run_id) and not archived:
        history.forget_iterations(run_id, set())
    ingest_streams(history, logs, run_id, sources)
    return run_id or None


def ingest_streams(history: History, logs: Path, run_id: str, sources: Sources | None = None) -> None:
    """The lines appended to the guard's decisions and the events since the last read (read from an offset)."""
    sources = sources or Sources(history)
    first, lines = sources.new_lines(logs / "guard.jsonl")
    for seq, entry in enumerate(_json_lines(lines), first):
        if entry is not None:
            history.record_guard(run_id, seq, entry)
    for entry in _json_lines(sources.new_lines(logs / "events.jsonl")[1]):
        if entry is not None:
            history.record_event(entry)


def _owner(history: History, run_id: str, n: int) -> str:
    """The run an unchanged (already recorded) log belongs to."""
    if run_id:
        return run_id
    row = history.conn.execute("SELECT run_id FROM iterations WHERE iteration = ? ORDER BY started_ts DESC LIMIT 1",
                               (n,)).fetchone()
    return str(row[0]) if row else ""


def sync(history: History) -> None:
    """Catch the database up with the files: archived runs first, then the current one."""
    dun = Store(history.root).dir
    archive = dun / "archive"
    with history.transaction():
        for directory in sorted(p for p in archive.iterdir() if p.is_dir()) if archive.is_dir() else []:
            ingest_dir(history, directory, archived=True)
        ingest_dir(history, dun, archived=False)
        ledger = read_json(dun / "tasks.json") or {}
        history.record_boxes([str(t.get("text")) for t in ledger.get("tasks") or [] if isinstance(t, dict)])


def _set_aside(path: Path) -> Path:
    """Move a database that cannot be opened out of the way (kept, not deleted: it may be wanted)."""
    target = path.with_name(f"{path.name}.corrupt-{time.strftime('%Y%m%dT%H%M%S')}")
    shutil.move(str(path), str(target))
    for suffix in ("-wal", "-shm"):
        side = path.with_name(path.name + suffix)
        if side.exists():
            os.replace(side, target.with_name(target.name + suffix))
    return target


def rebuild(root: Path) -> tuple[History, Path | None]:
    """Recreate every row from the files, in one transaction. A database that cannot be opened is set aside
    first; returns the history and where the unreadable file went."""
    path = db_path(root)
    aside = None
    try:
        history = History.open(root)
        ok = history.conn.execute("PRAGMA quick_check").fetchone()[0] == "ok"
        if not ok:
            history.close()
    except UsageError:
        ok = False
    if not ok:
        aside = _set_aside(path)
        history = History.open(root)
    with history.transaction() as conn:
        for table in (*DATA_TABLES, "sources"):
            conn.execute(f"DELETE FROM {table}")
        sync(history)
    return history, aside
