"""`.dun/history.db`: schema and migrations, recording from real scripted runs, rebuilding from the logs, and
surviving a kill -9 in the middle of a write."""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import settings_with, write
from history_support import NO_CIRCUIT, dump, dun, guard_line, make_log, new_repo, write_run
from loop_support import idle, work

from dun.core.errors import UsageError
from dun.history.schema import MIGRATIONS, SCHEMA_VERSION, migrate
from dun.history.store import History, db_path
from dun.history.sync import sync
from dun.loop import operator as loop_hooks


def test_a_new_database_is_wal_at_the_newest_schema(tmp_path: Path) -> None:
    with History.open(tmp_path) as history:
        assert history.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        versions = [r[0] for r in history.conn.execute("SELECT version FROM schema_migrations")]
    assert versions == [n for n, _ in MIGRATIONS] and versions[-1] == SCHEMA_VERSION


def test_a_migration_keeps_the_rows_and_runs_once(tmp_path: Path) -> None:
    conn = sqlite3.connect(tmp_path / "h.db", isolation_level=None)
    assert migrate(conn) == SCHEMA_VERSION
    conn.execute("INSERT INTO runs (run_id, status) VALUES ('r1', 'stopped')")
    later = [*MIGRATIONS, (SCHEMA_VERSION + 1, "ALTER TABLE runs ADD COLUMN host TEXT")]
    assert migrate(conn, later) == SCHEMA_VERSION + 1
    assert migrate(conn, later) == SCHEMA_VERSION + 1  # nothing left to apply
    assert conn.execute("SELECT run_id, status, host FROM runs").fetchall() == [("r1", "stopped", None)]
    with pytest.raises(UsageError, match="newer than this dun knows"):
        migrate(conn)  # the database is now ahead of the migrations given


def test_an_unreadable_database_is_one_line_and_rebuild_recovers(tmp_path: Path) -> None:
    repo = new_repo(tmp_path / "repo")
    write_run(repo, "r1", [make_log("r1", 1), make_log("r1", 2)])
    write(repo, ".dun/history.db", "this is not a database\n" * 100)
    proc = dun(repo, "history")
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert "dun history rebuild" in proc.stderr
    proc = dun(repo, "history", "rebuild")
    assert proc.returncode == 0, proc.stderr
    assert "1 run(s), 2 iteration(s)" in proc.stdout and "kept as history.db.corrupt-" in proc.stdout
    assert list((repo / ".dun").glob("history.db.corrupt-*"))
    assert json.loads(dun(repo, "history", "--json").stdout)["runs"][0]["iterations"] == 2


def test_scripted_runs_are_recorded_and_rebuilt_the_same(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two real runs (the first archived by --fresh), guard decisions from the real hook, the database caught up
    after each; a rebuild, and a lost database, give the same rows."""
    from history_support import drive

    repo = new_repo(tmp_path / "repo", boxes=("alpha", "beta", "gamma"), circuit=NO_CIRCUIT)
    steps = [work("alpha", cost=0.02), idle(), work("beta", cost=0.05), work("gamma", cost=0.05, exit=True)]
    assert drive(repo, steps, "loop", "--max-iterations", "2").returncode == 1
    for command in ("git push --force origin main", "ls"):
        event = {"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": command},
                 "cwd": str(repo), "session_id": "s1"}
        subprocess.run([sys.executable, "-m", "dun", "guard"], input=json.dumps(event), text=True, check=True,
                       capture_output=True, cwd=repo)
    first = json.loads(dun(repo, "history", "--json").stdout)["runs"]
    assert [(r["iterations"], r["stop_reason"], r["cost_usd"]) for r in first] == [(2, "max_iterations", 0.03)]
    assert drive(repo, steps, "loop", "--fresh").returncode == 0  # the fake agent goes on with step 3
    runs = json.loads(dun(repo, "history", "--json").stdout)["runs"]
    assert [(r["iterations"], r["stop_reason"], r["archived"]) for r in runs] == [(2, "max_iterations", 1),
                                                                                   (2, "complete", 0)]
    rows = dump(repo)
    assert len(rows["iterations"]) == 4 and len(rows["guard_decisions"]) == 2
    with History.open(repo) as history:
        assert sorted(g["decision"] for g in history.table("guard_decisions")) == ["allow", "deny"]
        recorded = sorted((it["run_id"], it["iteration"], it["cost_usd"], it["status"]) for it in history.iterations())
    logs = [json.loads(p.read_text()) for p in (repo / ".dun").glob("**/logs/iteration-*.json")]
    assert recorded == sorted((log["run_id"], log["iteration"], log["cost_usd"], log["status_block"]["status"])
                              for log in logs)
    assert dun(repo, "history", "rebuild").returncode == 0
    assert dump(repo) == rows
    for path in (repo / ".dun").glob("history.db*"):
        path.unlink()
    assert dun(repo, "history").returncode == 0  # a lost database comes back from the logs by itself
    assert dump(repo) == rows


def test_the_engine_calls_record_the_same_rows_as_a_rebuild(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What the loop records live, log by log (loop_hooks), is what a rebuild reads back from the files."""
    repo = new_repo(tmp_path / "repo")
    logs = [make_log("r1", 1, cost=0.02), make_log("r1", 2, found=({"kind": "phantom_changes", "detail": "x"},)),
            make_log("r1", 3, after=(), decision=("stop", "complete"))]
    state = json.loads(write_run(repo, "r1", logs).joinpath("state.json").read_text())
    (repo / ".dun" / "history.db").unlink(missing_ok=True)
    cfg = settings_with(loop__max_budget_usd=0)
    loop_hooks.on_run_start(repo, state, cfg)
    for log in logs:
        loop_hooks.on_iteration(repo, log, state, cfg)
    loop_hooks.on_wait(repo, state, cfg, "hourly_call_limit", 30.0)
    loop_hooks.on_stop(repo, state, cfg)
    live = dump(repo)
    assert len(live["iterations"]) == 3 and len(live["discrepancies"]) == 1 and len(live["events"]) == 1
    assert dun(repo, "history", "rebuild").returncode == 0
    assert dump(repo) == live


def test_a_log_removed_by_the_driver_leaves_the_database_too(tmp_path: Path) -> None:
    repo = new_repo(tmp_path / "repo")
    write_run(repo, "r1", [make_log("r1", 1), make_log("r1", 2)])
    with History.open(repo) as history:
        sync(history)
        assert len(history.iterations()) == 2
        (repo / ".dun" / "logs" / "iteration-2.json").unlink()  # `dun respond --decide --all-pass` does this
        sync(history)
        assert [it["iteration"] for it in history.iterations()] == [1]


def test_guard_lines_are_read_once_and_placed_in_their_iteration(tmp_path: Path) -> None:
    repo = new_repo(tmp_path / "repo")
    write_run(repo, "r1", [make_log("r1", 1), make_log("r1", 2)])
    guard = repo / ".dun" / "logs" / "guard.jsonl"
    from history_support import T0, iso

    guard.write_text(guard_line(iso(T0 + 1210)) + guard_line(iso(T0 + 1215)).rstrip("\n"), encoding="utf-8")
    with History.open(repo) as history:
        sync(history)  # the second line has no newline yet: still being written
        assert [(g["seq"], g["iteration"]) for g in history.table("guard_decisions")] == [(0, 2)]
        with guard.open("a") as fh:
            fh.write("\n" + guard_line(iso(T0 + 610)))
        sync(history)
        sync(history)
        assert [(g["seq"], g["iteration"]) for g in history.table("guard_decisions")] == [(0, 2), (1, 2), (2, 1)]


def test_a_guard_decision_goes_to_the_iteration_of_its_agent_session(tmp_path: Path) -> None:
    from history_support import T0, iso

    repo = new_repo(tmp_path / "repo")
    logs = [make_log("r1", 1), make_log("r1", 2)]
    logs[1]["session_id"] = "s"  # guard_line's session
    base = write_run(repo, "r1", logs)
    (base / "logs" / "guard.jsonl").write_text(guard_line(iso(T0 + 610)), encoding="utf-8")  # iteration 1's time
    with History.open(repo) as history:
        sync(history)
        assert [g["iteration"] for g in history.table("guard_decisions")] == [2]


WRITER = r"""
import sys
from pathlib import Path
sys.path[:0] = [sys.argv[2]]
from history_support import make_log
from dun.history.store import History
root = Path(sys.argv[1])
checks = tuple(f"check-{i}" for i in range(150))
with History.open(root) as history:
    n = 0
    while True:
        n += 1
        history.record_iteration(make_log("r1", n, before=checks, after=checks[n % 150:]))
        sys.stdout.write(f"{n}\n")
        sys.stdout.flush()
"""


def test_the_database_survives_kill_9_mid_write(tmp_path: Path) -> None:
    tests = Path(__file__).resolve().parents[1]
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(tmp_path), str(tests)],
                              stdout=subprocess.PIPE, text=True)
    assert writer.stdout is not None
    for line in writer.stdout:  # the writer says each committed iteration: no sleeping, no guessing
        if int(line) >= 40:
            break
    writer.send_signal(signal.SIGKILL)
    writer.wait()
    assert writer.returncode == -signal.SIGKILL
    conn = sqlite3.connect(db_path(tmp_path))
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    count = conn.execute("SELECT COUNT(*) FROM iterations").fetchone()[0]
    assert count >= 40
    # each iteration was one transaction: its check rows are all there or it is not there at all
    per = dict(conn.execute("SELECT iteration, COUNT(*) FROM check_results GROUP BY iteration").fetchall())
    assert set(per) == set(range(1, count + 1)) and all(v == 150 for v in per.values())
    conn.close()
    with History.open(tmp_path) as history:  # and dun opens it and writes on
        history.record_iteration(make_log("r1", count + 1))
        assert len(history.iterations()) == count + 1
