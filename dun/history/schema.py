"""The history database's schema, as numbered migrations applied in order inside one transaction each.

A migration is never edited once released: a change to the schema is a new entry at the end of MIGRATIONS. The
applied versions are rows of `schema_migrations`, so a database knows exactly which steps it has seen.
"""

from __future__ import annotations

import sqlite3
import time

from dun.core.errors import UsageError

MIGRATIONS: list[tuple[int, str]] = [
    (1, """
CREATE TABLE runs (
    run_id TEXT PRIMARY KEY,
    status TEXT, stop_reason TEXT,
    started_at TEXT, started_ts REAL, ended_at TEXT, ended_ts REAL,
    iterations INTEGER NOT NULL DEFAULT 0, cost_usd REAL NOT NULL DEFAULT 0, budget_usd REAL,
    errors_total INTEGER NOT NULL DEFAULT 0, circuit_state TEXT, archived INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE iterations (
    run_id TEXT NOT NULL, iteration INTEGER NOT NULL,
    started_at TEXT, started_ts REAL, ended_at TEXT, ended_ts REAL, duration_s REAL,
    agent TEXT, session_id TEXT, exit_code INTEGER, timed_out INTEGER, interrupted INTEGER, confirmation INTEGER,
    cost_usd REAL, cost_estimated INTEGER, tokens_in INTEGER, tokens_out INTEGER,
    error_kind TEXT, error TEXT, error_signature TEXT, reset_at REAL,
    status TEXT, task_claimed TEXT, claimed_check TEXT, exit_signal INTEGER, parse_outcome TEXT, status_block TEXT,
    actionable_before INTEGER, actionable_after INTEGER, files_changed INTEGER, commits INTEGER,
    newly_passing TEXT, boxes_ticked TEXT, restored TEXT, reverted TEXT,
    permission_denials INTEGER, flags TEXT, circuit_state TEXT,
    decision_action TEXT, decision_reason TEXT, wait_s REAL,
    PRIMARY KEY (run_id, iteration)
);
CREATE TABLE check_results (
    run_id TEXT NOT NULL, iteration INTEGER NOT NULL, check_id TEXT NOT NULL,
    failing_before INTEGER NOT NULL, failing_after INTEGER NOT NULL,
    PRIMARY KEY (run_id, iteration, check_id)
);
CREATE TABLE discrepancies (
    run_id TEXT NOT NULL, iteration INTEGER NOT NULL, seq INTEGER NOT NULL,
    kind TEXT NOT NULL, detail TEXT, check_id TEXT, task_text TEXT,
    PRIMARY KEY (run_id, iteration, seq)
);
CREATE TABLE guard_decisions (
    run_id TEXT NOT NULL, seq INTEGER NOT NULL, time TEXT, ts REAL, iteration INTEGER, session_id TEXT,
    tool TEXT, command TEXT, path TEXT, decision TEXT, rule TEXT, reason TEXT,
    PRIMARY KEY (run_id, seq)
);
CREATE TABLE events (
    id TEXT PRIMARY KEY, run_id TEXT, time TEXT, ts REAL, kind TEXT NOT NULL, detail TEXT
);
CREATE TABLE notifications (
    id TEXT PRIMARY KEY, run_id TEXT, time TEXT, ts REAL, event TEXT NOT NULL, channel TEXT, ok INTEGER NOT NULL,
    error TEXT, title TEXT
);
CREATE TABLE boxes (text TEXT PRIMARY KEY);
CREATE TABLE review_items (
    id TEXT PRIMARY KEY, pattern TEXT NOT NULL, subject TEXT NOT NULL, title TEXT NOT NULL, detail TEXT,
    evidence TEXT NOT NULL, first_ts REAL, last_ts REAL,
    status TEXT NOT NULL DEFAULT 'open', decided_at TEXT, notified_at TEXT
);
CREATE TABLE sources (path TEXT PRIMARY KEY, inode INTEGER, size INTEGER, mtime_ns INTEGER, offset INTEGER,
                      lines INTEGER);
CREATE INDEX iterations_by_time ON iterations (started_ts);
CREATE INDEX guard_by_time ON guard_decisions (ts);
"""),
]

SCHEMA_VERSION = MIGRATIONS[-1][0]
DATA_TABLES = ("runs", "iterations", "check_results", "discrepancies", "guard_decisions", "events", "notifications",
               "boxes", "review_items")  # `sources` is bookkeeping of the incremental sync, not history


def applied(conn: sqlite3.Connection) -> int:
    conn.execute("CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT)")
    row = conn.execute("SELECT MAX(version) FROM schema_migrations").fetchone()
    return int(row[0] or 0)


def migrate(conn: sqlite3.Connection, migrations: list[tuple[int, str]] | None = None) -> int:
    """Bring the database up to the newest schema; returns the version. A database written by a newer dun is
    refused rather than guessed at."""
    steps = MIGRATIONS if migrations is None else migrations
    newest = steps[-1][0]
    conn.execute("BEGIN IMMEDIATE")  # one writer migrates; another process waits, then finds nothing to do
    try:
        version = applied(conn)
        if version > newest:
            raise UsageError(f"the history database has schema {version}, newer than this dun knows ({newest}); "
                             "upgrade dun or run `dun history rebuild`")
        for number, sql in steps:
            if number <= version:
                continue
            for statement in sql.split(";"):
                if statement.strip():
                    conn.execute(statement)
            conn.execute("INSERT INTO schema_migrations VALUES (?, ?)",
                         (number, time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())))
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    return max(version, newest)
