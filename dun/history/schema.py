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
    # The incremental deficiency detector reads only rows added since its last look. Anything else (a row replaced,
    # deleted or re-timed, a database rebuilt or swapped) moves this counter or its token, and the detector then
    # reads everything again: the database itself says so, whichever process or command wrote.
    (2, """
CREATE TABLE rewrites (token TEXT NOT NULL, n INTEGER NOT NULL);
INSERT INTO rewrites VALUES (lower(hex(randomblob(8))), 0);
CREATE TRIGGER iterations_replaced BEFORE INSERT ON iterations WHEN EXISTS (SELECT 1 FROM iterations
    WHERE run_id = NEW.run_id AND iteration = NEW.iteration) BEGIN UPDATE rewrites SET n = n + 1; END;
CREATE TRIGGER iterations_updated AFTER UPDATE ON iterations BEGIN UPDATE rewrites SET n = n + 1; END;
CREATE TRIGGER iterations_deleted AFTER DELETE ON iterations BEGIN UPDATE rewrites SET n = n + 1; END;
CREATE TRIGGER check_results_replaced BEFORE INSERT ON check_results WHEN EXISTS (SELECT 1 FROM check_results
    WHERE run_id = NEW.run_id AND iteration = NEW.iteration AND check_id = NEW.check_id)
    BEGIN UPDATE rewrites SET n = n + 1; END;
CREATE TRIGGER check_results_updated AFTER UPDATE ON check_results BEGIN UPDATE rewrites SET n = n + 1; END;
CREATE TRIGGER check_results_deleted AFTER DELETE ON check_results BEGIN UPDATE rewrites SET n = n + 1; END;
CREATE TRIGGER discrepancies_replaced BEFORE INSERT ON discrepancies WHEN EXISTS (SELECT 1 FROM discrepancies
    WHERE run_id = NEW.run_id AND iteration = NEW.iteration AND seq = NEW.seq)
    BEGIN UPDATE rewrites SET n = n + 1; END;
CREATE TRIGGER discrepancies_updated AFTER UPDATE ON discrepancies BEGIN UPDATE rewrites SET n = n + 1; END;
CREATE TRIGGER discrepancies_deleted AFTER DELETE ON discrepancies BEGIN UPDATE rewrites SET n = n + 1; END;
CREATE TRIGGER guard_replaced BEFORE INSERT ON guard_decisions WHEN EXISTS (SELECT 1 FROM guard_decisions
    WHERE run_id = NEW.run_id AND seq = NEW.seq) BEGIN UPDATE rewrites SET n = n + 1; END;
CREATE TRIGGER guard_updated AFTER UPDATE ON guard_decisions WHEN OLD.iteration IS NOT NULL OR
    OLD.run_id IS NOT NEW.run_id OR OLD.seq IS NOT NEW.seq OR OLD.ts IS NOT NEW.ts OR OLD.time IS NOT NEW.time OR
    OLD.decision IS NOT NEW.decision OR OLD.rule IS NOT NEW.rule OR OLD.tool IS NOT NEW.tool OR
    OLD.command IS NOT NEW.command OR OLD.path IS NOT NEW.path BEGIN UPDATE rewrites SET n = n + 1; END;
CREATE TRIGGER guard_deleted AFTER DELETE ON guard_decisions BEGIN UPDATE rewrites SET n = n + 1; END;
CREATE TRIGGER boxes_deleted AFTER DELETE ON boxes BEGIN UPDATE rewrites SET n = n + 1; END;
CREATE TRIGGER runs_retimed BEFORE INSERT ON runs WHEN EXISTS (SELECT 1 FROM runs
    WHERE run_id = NEW.run_id AND started_ts IS NOT NEW.started_ts) BEGIN UPDATE rewrites SET n = n + 1; END;
CREATE TRIGGER runs_updated AFTER UPDATE OF run_id, started_ts ON runs BEGIN UPDATE rewrites SET n = n + 1; END;
CREATE TRIGGER runs_deleted AFTER DELETE ON runs BEGIN UPDATE rewrites SET n = n + 1; END;
"""),
]

SCHEMA_VERSION = MIGRATIONS[-1][0]
DATA_TABLES = ("runs", "iterations", "check_results", "discrepancies", "guard_decisions", "events", "notifications",
               "boxes", "review_items")  # `sources` is bookkeeping of the incremental sync, not history


def statements(sql: str) -> list[str]:
    """The statements of a migration, each whole (a trigger's body holds semicolons of its own)."""
    out, pending = [], ""
    for piece in sql.split(";"):
        pending += piece + ";"
        if sqlite3.complete_statement(pending):
            if pending.strip(" \n\t;"):
                out.append(pending)
            pending = ""
    return out


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
            for statement in statements(sql):
                conn.execute(statement)
            conn.execute("INSERT INTO schema_migrations VALUES (?, ?)",
                         (number, time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())))
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    return max(version, newest)
