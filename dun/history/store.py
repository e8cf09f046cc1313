"""`.dun/history.db`: every run, iteration, check result, discrepancy, guard decision, wait and notification, in
SQLite (WAL: a reader never blocks the loop, a kill -9 loses at most the transaction in flight).

Each `record_*` call is one transaction. The JSON files stay the source of truth; `dun history rebuild` recreates
this database from them (see `dun.history.sync`).
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from dun.core.errors import UsageError
from dun.history import rows
from dun.history.schema import migrate
from dun.store.store import Store

BUSY_TIMEOUT_MS = 10_000


def db_path(root: Path) -> Path:
    return Store(root).history_db


def connect(path: Path) -> sqlite3.Connection:
    """A connection in autocommit mode (transactions are explicit), WAL, waiting for a busy writer."""
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path, isolation_level=None, timeout=BUSY_TIMEOUT_MS / 1000)
    conn.row_factory = sqlite3.Row
    try:
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")  # WAL + NORMAL: durable at checkpoints, never corrupt
        migrate(conn)
    except sqlite3.DatabaseError as exc:
        conn.close()
        raise UsageError(f"{path} is unreadable ({exc}); `dun history rebuild` recreates it from the logs") from None
    except BaseException:
        conn.close()
        raise
    return conn


class History:
    """One open history database. Use as a context manager, or call `close()`."""

    def __init__(self, root: Path, conn: sqlite3.Connection) -> None:
        self.root = root
        self.conn = conn

    @classmethod
    def open(cls, root: Path) -> History:
        from dun.store.store import Store

        Store(root).ensure()  # a first `.dun/` gets the .gitignore that keeps the database out of git
        return cls(root, connect(db_path(root)))

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> History:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextlib.contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """BEGIN IMMEDIATE ... COMMIT: all of it or none of it, one writer at a time. Nested use joins the outer."""
        if self.conn.in_transaction:
            yield self.conn
            return
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            yield self.conn
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        self.conn.execute("COMMIT")

    # -- writing ------------------------------------------------------------------------------------------------

    def _upsert(self, table: str, row: Mapping[str, object]) -> None:
        names = ", ".join(row)
        marks = ", ".join("?" for _ in row)
        self.conn.execute(f"INSERT OR REPLACE INTO {table} ({names}) VALUES ({marks})", list(row.values()))

    def record_run(self, state: Mapping[str, object], archived: bool = False) -> None:
        """The run as `.dun/state.json` describes it now (start, progress, or stop)."""
        row = rows.run_row(state, archived)
        if not row["run_id"]:
            return
        with self.transaction():
            self._upsert("runs", row)

    def record_stop(self, state: Mapping[str, object]) -> None:
        self.record_run(state)

    def record_iteration(self, log: dict[str, object]) -> None:
        """One `.dun/logs/iteration-N.json` (again: a newer version of the same iteration replaces the older)."""
        row = rows.iteration_row(log)
        key = (row["run_id"], row["iteration"])
        with self.transaction() as conn:
            if not conn.execute("SELECT 1 FROM runs WHERE run_id = ?", key[:1]).fetchone():
                conn.execute("INSERT INTO runs (run_id, started_at, started_ts) VALUES (?, ?, ?)",
                             (key[0], row["started_at"], row["started_ts"]))
            self._upsert("iterations", row)
            conn.execute("DELETE FROM check_results WHERE run_id = ? AND iteration = ?", key)
            conn.executemany("INSERT INTO check_results VALUES (?, ?, ?, ?, ?)",
                             [(*key, *r) for r in rows.check_rows(log)])
            conn.execute("DELETE FROM discrepancies WHERE run_id = ? AND iteration = ?", key)
            conn.executemany("INSERT INTO discrepancies VALUES (?, ?, ?, ?, ?, ?, ?)",
                             [(*key, *r) for r in rows.discrepancy_rows(log)])
            self.place_guard_decisions(key[0])

    def forget_iterations(self, run_id: str, keep: set[int]) -> None:
        """Drop the iterations of `run_id` whose log is gone (a driver removes the log of a call never made)."""
        with self.transaction() as conn:
            known = [r[0] for r in conn.execute("SELECT iteration FROM iterations WHERE run_id = ?", (run_id,))]
            for n in set(known) - keep:
                for table in ("iterations", "check_results", "discrepancies"):
                    conn.execute(f"DELETE FROM {table} WHERE run_id = ? AND iteration = ?", (run_id, n))

    def record_guard(self, run_id: str, seq: int, entry: Mapping[str, object]) -> None:
        with self.transaction():
            self._upsert("guard_decisions", rows.guard_row(run_id, seq, entry))
            self.place_guard_decisions(run_id)

    def place_guard_decisions(self, run_id: str) -> None:
        """Attach each guard decision to its iteration: the one with the agent session that asked, else the first
        whose time span holds it (log times have one-second resolution). Once placed, never moved."""
        self.conn.execute(
            "UPDATE guard_decisions SET iteration = COALESCE("
            "(SELECT i.iteration FROM iterations i WHERE i.run_id = guard_decisions.run_id AND "
            " guard_decisions.session_id IS NOT NULL AND i.session_id = guard_decisions.session_id "
            " ORDER BY i.iteration LIMIT 1),"
            "(SELECT i.iteration FROM iterations i WHERE i.run_id = guard_decisions.run_id AND "
            " i.started_ts <= guard_decisions.ts AND guard_decisions.ts <= COALESCE(i.ended_ts, 1e18) + 1 "
            " ORDER BY i.iteration LIMIT 1)) WHERE run_id = ? AND iteration IS NULL", (run_id,))

    def record_event(self, entry: Mapping[str, object]) -> None:
        """A line of `.dun/logs/events.jsonl`: a wait, or a notification sent or failed."""
        base = {"id": str(entry.get("id") or ""), "run_id": entry.get("run_id"), "time": entry.get("time"),
                "ts": rows.epoch(entry.get("time"))}
        if not base["id"]:
            return
        with self.transaction():
            if entry.get("kind") == "notification":
                self._upsert("notifications", {**base, "event": entry.get("event") or "", "channel":
                                               entry.get("channel"), "ok": int(bool(entry.get("ok"))),
                                               "error": entry.get("error"), "title": entry.get("title")})
            else:
                detail = {k: v for k, v in entry.items() if k not in ("id", "run_id", "time", "kind")}
                self._upsert("events", {**base, "kind": str(entry.get("kind") or "event"),
                                        "detail": rows.dumps(detail)})

    def record_boxes(self, texts: list[str]) -> None:
        with self.transaction() as conn:
            conn.executemany("INSERT OR IGNORE INTO boxes VALUES (?)", [(t,) for t in texts if t])

    # -- reading ------------------------------------------------------------------------------------------------

    def query(self, sql: str, params: tuple[object, ...] | list[Any] = ()) -> list[dict[str, Any]]:
        return [dict(r) for r in self.conn.execute(sql, params)]

    def runs(self, limit: int | None = None) -> list[dict[str, Any]]:
        """Runs, oldest first (the newest `limit` when given)."""
        found = self.query("SELECT * FROM runs ORDER BY COALESCE(started_ts, 0) DESC, run_id DESC"
                           + (" LIMIT ?" if limit else ""), (limit,) if limit else ())
        return found[::-1]

    def iterations(self, run_ids: list[str] | None = None, after: int | None = None) -> list[dict[str, Any]]:
        """Iterations in the order they ran: by run start, then number; JSON columns decoded. `after`: only the
        rows stored after that rowid, each with its `rowid` and its run's start as `order_ts` (the sort key)."""
        where = f"WHERE i.run_id IN ({', '.join('?' for _ in run_ids)})" if run_ids is not None else ""
        if after is not None:
            where = "WHERE i.rowid > ?"
        extra = ", i.rowid AS rowid, COALESCE(r.started_ts, i.started_ts, 0) AS order_ts" if after is not None else ""
        found = self.query(f"SELECT i.*{extra} FROM iterations i LEFT JOIN runs r ON r.run_id = i.run_id {where} "
                           "ORDER BY COALESCE(r.started_ts, i.started_ts, 0), i.run_id, i.iteration",
                           [after] if after is not None else run_ids or [])
        for row in found:
            for key in ("newly_passing", "boxes_ticked", "restored", "reverted", "flags"):
                row[key] = json.loads(row[key]) if row[key] else []
            row["status_block"] = json.loads(row["status_block"]) if row["status_block"] else None
        return found

    def table(self, name: str, run_ids: list[str] | None = None) -> list[dict[str, Any]]:
        if run_ids is None:
            return self.query(f"SELECT * FROM {name} ORDER BY rowid")
        marks = ", ".join("?" for _ in run_ids)
        return self.query(f"SELECT * FROM {name} WHERE run_id IN ({marks}) ORDER BY rowid", run_ids)

    def boxes(self) -> list[str]:
        return [r["text"] for r in self.query("SELECT text FROM boxes ORDER BY text")]

    def sent(self, run_id: str | None, event: str) -> bool:
        """Whether `event` was already notified for the run (a failed delivery counts: it is not retried)."""
        row = self.conn.execute("SELECT 1 FROM notifications WHERE run_id IS ? AND event = ? LIMIT 1",
                                (run_id, event)).fetchone()
        return row is not None
