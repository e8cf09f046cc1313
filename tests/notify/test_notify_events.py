"""Notifications for every event, through the calls the loop engine makes (dun.loop.operator), delivered by
apprise (`json://`) to a local HTTP endpoint on 127.0.0.1 and by `notify.command`; failures never raise."""

from __future__ import annotations

import importlib.util
import json
import socket
import sys
import threading
from collections.abc import Iterator
from dataclasses import replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from conftest import git, settings_with
from history_support import make_log, new_repo, write_run

from dun.config.loader import defaults_only
from dun.config.sections import Settings
from dun.history.store import History
from dun.loop import operator as loop_hooks

needs_apprise = pytest.mark.skipif(importlib.util.find_spec("apprise") is None,
                                   reason="the notify extra (apprise) is not installed: pip install 'dun-loop[notify]'")


class Endpoint:
    """An HTTP server on 127.0.0.1 that records every POST; paths under /fail answer 500."""

    def __init__(self) -> None:
        self.received: list[tuple[str, dict[str, Any]]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                outer.received.append((self.path, json.loads(body or b"{}")))
                self.send_response(500 if self.path.startswith("/fail") else 200)
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def url(self, path: str = "dun") -> str:
        return f"json://127.0.0.1:{self.port}/{path}"


@pytest.fixture
def endpoint(monkeypatch: pytest.MonkeyPatch) -> Iterator[Endpoint]:
    for var in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    server = Endpoint()
    yield server
    server.server.shutdown()
    server.server.server_close()


def cfg(urls: list[str], command: list[str] | None = None, events: list[str] | None = None,
        cap: float = 1.0) -> Settings:
    return settings_with(loop__max_budget_usd=cap, notify__urls=urls, notify__command=command or [],
                         notify__timeout_s=20.0, notify__events=events)


def run_state(repo: Path, logs: list[dict[str, Any]], **state: Any) -> dict[str, Any]:
    return dict(json.loads((write_run(repo, "r1", logs, **state) / "state.json").read_text()))


def recorded(repo: Path) -> list[dict[str, Any]]:
    with History.open(repo) as history:
        return history.table("notifications")


@needs_apprise
def test_every_event_reaches_the_endpoint_with_its_facts(tmp_path: Path, endpoint: Endpoint) -> None:
    repo = new_repo(tmp_path / "repo")
    conf = cfg([endpoint.url()])
    claims = [make_log("r1", n, status="COMPLETE", task="lint", before=("lint",), after=("lint",), cost=0.2)
              for n in (1, 2, 3, 4)]
    for log in claims:  # what dun records for a claim with no progress; notified once, the rest in a digest
        log["verification"]["discrepancies"] = [{"kind": "unverified_completion", "detail": "lint still fails"}]
    for n, log in enumerate(claims, 1):  # budget crosses 80% at iteration 4; the claim streak fires at 3
        loop_hooks.on_iteration(repo, log, run_state(repo, claims[:n], cost_usd_total=0.2 * n), conf)
    state = run_state(repo, claims, cost_usd_total=0.8)
    loop_hooks.on_wait(repo, state, conf, "usage_limit", 3600.0)
    loop_hooks.on_wait(repo, state, conf, "hourly_call_limit", 60.0)  # dun's own pacing: no notification
    for reason in ("complete", "max_iterations", "circuit_open"):
        loop_hooks.on_stop(repo, {**state, "stop_reason": reason, "status": "stopped",
                                  "circuit": {"state": "OPEN", "reason": "no_progress"}}, conf)
    got = [(path, body["title"], body["message"]) for path, body in endpoint.received]
    assert all(path == "/dun" for path, _, _ in got)
    who = f"dun repo@{socket.gethostname()}: "
    assert all(t.startswith(who) for _, t, _ in got)
    titles = [t.removeprefix(who) for _, t, _ in got]
    assert titles[0] == "unverified claims in run r1 (unverified_completion)"
    assert "lint still fails" in got[0][2]
    assert titles[1].startswith("review item ") and "check lint still fails" in titles[1]
    assert "r1#1, r1#2, r1#3" in got[1][2]
    assert titles[2] == "80% of the budget spent in run r1" and "$0.80 of $1.00" in got[2][2]
    assert titles[3] == "run r1 waiting (usage_limit)" and "until 20" in got[3][2]
    assert titles[4:] == ["run r1 complete", "run r1 stopped (max_iterations)", "circuit open in run r1"]
    assert "no_progress" in got[6][2]
    assert len(got) == 7  # each deficiency and the budget once, however often the loop reports in
    rows = [r for r in recorded(repo) if r["channel"] != "held"]
    assert [r["event"] for r in rows] == ["tampering", "deficiency", "budget", "waiting", "complete", "stopped",
                                          "circuit_open"]
    assert "Also since the last notification (3 held back)" in got[4][2]  # the other three claims
    assert all(r["ok"] == 1 and r["channel"] == "apprise:json" for r in rows)


def test_the_command_gets_the_event_in_its_environment(tmp_path: Path) -> None:
    repo = new_repo(tmp_path / "repo")
    sink = tmp_path / "sink.jsonl"
    script = tmp_path / "notify.py"
    script.write_text("import os, sys\nopen(sys.argv[1], 'a').write(os.environ['DUN_NOTIFY_JSON'] + '\\n')\n")
    state = run_state(repo, [make_log("r1", 1)], stop_reason="budget")
    loop_hooks.on_stop(repo, state, cfg([], [sys.executable, str(script), str(sink)]))
    [payload] = [json.loads(line) for line in sink.read_text().splitlines()]
    assert payload["event"] == "stopped" and payload["reason"] == "budget" and payload["run_id"] == "r1"
    assert payload["title"] == f"dun repo@{socket.gethostname()}: run r1 stopped (budget)"
    assert "budget" in payload["message"] and payload["host"] == socket.gethostname()
    assert "To go on: `dun loop --max-budget-usd X` with a higher cap resumes the run." in payload["message"]
    assert [(r["channel"], r["ok"]) for r in recorded(repo)] == [(f"command:{Path(sys.executable).name}", 1)]


def test_a_notification_names_the_repository_by_its_origin_and_the_host(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """Twenty pods all clone into /work/repo: the origin's owner/name and the pod's name tell them apart."""
    repo = new_repo(tmp_path / "repo")
    git(repo, "remote", "add", "origin", "git@git.example:acme/widgets.git")
    monkeypatch.setenv("DUN_HOST", "dun-widgets-0-x7k2p")
    sink = tmp_path / "sink.jsonl"
    script = tmp_path / "notify.py"
    script.write_text("import os, sys\nopen(sys.argv[1], 'a').write(os.environ['DUN_NOTIFY_JSON'] + '\\n')\n")
    state = run_state(repo, [make_log("r1", 1)], stop_reason="budget")
    loop_hooks.on_stop(repo, state, cfg([], [sys.executable, str(script), str(sink)]))
    [payload] = [json.loads(line) for line in sink.read_text().splitlines()]
    assert payload["title"] == "dun acme/widgets@dun-widgets-0-x7k2p: run r1 stopped (budget)"
    assert payload["host"] == "dun-widgets-0-x7k2p" and payload["repo"] == "acme/widgets"


@needs_apprise
def test_failures_are_logged_and_recorded_never_raised(tmp_path: Path, endpoint: Endpoint,
                                                       capfd: pytest.CaptureFixture[str]) -> None:
    repo = new_repo(tmp_path / "repo")
    state = run_state(repo, [make_log("r1", 1)], stop_reason="max_iterations")
    closed = "json://127.0.0.1:9/nobody"  # the discard port: nothing listens
    conf = cfg([endpoint.url("fail"), closed], ["sh", "-c", "echo cannot deliver >&2; exit 3"])
    loop_hooks.on_stop(repo, state, conf)
    rows = recorded(repo)
    assert [(r["channel"], r["ok"]) for r in rows] == [("apprise:json", 0), ("apprise:json", 0), ("command:sh", 0)]
    assert rows[2]["error"] == "exited 3: cannot deliver"
    err = capfd.readouterr().err
    assert err.count("dun: notification 'stopped' via") == 3
    events = [json.loads(line) for line in (repo / ".dun" / "logs" / "events.jsonl").read_text().splitlines()]
    assert [e["ok"] for e in events] == [False, False, False]  # in the log file too, so a rebuild keeps them


@needs_apprise
def test_only_the_configured_events_are_sent(tmp_path: Path, endpoint: Endpoint) -> None:
    repo = new_repo(tmp_path / "repo")
    state = run_state(repo, [make_log("r1", 1)], stop_reason="max_iterations")
    loop_hooks.on_stop(repo, state, cfg([endpoint.url()], events=["complete"]))
    loop_hooks.on_stop(repo, {**state, "stop_reason": "complete"}, cfg([endpoint.url()], events=["complete"]))
    assert [body["title"] for _, body in endpoint.received] == [f"dun repo@{socket.gethostname()}: run r1 complete"]


def test_without_apprise_the_failure_names_the_extra(tmp_path: Path, endpoint: Endpoint,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "apprise", None)  # as if `dun-loop[notify]` were not installed
    repo = new_repo(tmp_path / "repo")
    state = run_state(repo, [make_log("r1", 1)], stop_reason="complete")
    loop_hooks.on_stop(repo, state, cfg([endpoint.url()]))
    [row] = recorded(repo)
    assert row["ok"] == 0 and row["error"] == "apprise is not installed (pip install 'dun-loop[notify]')"
    assert endpoint.received == []


def test_one_notification_per_kind_per_interval_the_rest_as_a_digest(tmp_path: Path) -> None:
    repo = new_repo(tmp_path / "repo")
    sink = tmp_path / "sink.jsonl"
    script = tmp_path / "notify.py"
    script.write_text("import os, sys\nopen(sys.argv[1], 'a').write(os.environ['DUN_NOTIFY_JSON'] + '\\n')\n")
    conf = replace(cfg([], [sys.executable, str(script), str(sink)]),
                   review=replace(defaults_only().settings.review, claim_streak=9))
    logs = [make_log("r1", n, status="COMPLETE", task="lint", before=("lint",), after=("lint",)) for n in (1, 2, 3)]
    for n, log in enumerate(logs, 1):
        log["verification"]["discrepancies"] = [{"kind": "unverified_completion", "detail": f"claim {n}"}]
        loop_hooks.on_iteration(repo, log, run_state(repo, logs[:n]), conf)
    state = run_state(repo, logs)
    loop_hooks.on_wait(repo, state, conf, "rate_limit", 60.0)
    loop_hooks.on_wait(repo, state, conf, "rate_limit", 60.0)
    loop_hooks.on_stop(repo, {**state, "stop_reason": "max_iterations", "status": "stopped"}, conf)
    sent = [json.loads(line) for line in sink.read_text().splitlines()]
    assert [p["event"] for p in sent] == ["tampering", "waiting", "stopped"]  # one of each kind
    digest = sent[-1]["message"].split("Also since the last notification (3 held back):\n", 1)[1]
    assert digest.count("unverified claims in run r1") == 2 and digest.count("waiting (rate_limit)") == 1
    held = [r for r in recorded(repo) if r["channel"] == "held"]
    assert [r["event"] for r in held] == ["tampering", "tampering", "waiting"]
