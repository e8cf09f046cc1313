"""A loop's link to the fleet store when the store goes away: it says so once, waits or falls back to this
machine's limits, and catches the store up from its journal when it is back (a real redis-server)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from redis_support import RedisServer, free_port

from dun.core.errors import ConfigError
from dun.core.redact import Redactor
from dun.fleet.connect import open_store, store_url
from dun.fleet.limits import LocalStore, SharedLimits
from dun.fleet.link import FleetLink
from dun.fleet.redisstore import RedisStore
from dun.sandbox.spec import SandboxSpec, prefix


@pytest.fixture
def server(tmp_path: Path) -> Iterator[RedisServer]:
    running = RedisServer(tmp_path / "redis").start()
    yield running
    running.kill()


def link(server: RedisServer, tmp_path: Path, on_lost: str, said: list[str]) -> FleetLink:
    return FleetLink(RedisStore(server.url, timeout_s=1), "claude", tmp_path, tmp_path / "fleet.json", on_lost,
                     retry_s=7.0, say=said.append)


def test_waits_while_the_store_is_lost_then_catches_it_up(server: RedisServer, tmp_path: Path) -> None:
    said: list[str] = []
    loop = link(server, tmp_path, "wait", said)
    assert loop.reserve(10, 0).granted
    loop.record_cost(0.5)
    server.kill()
    answer = loop.reserve(10, 0)
    assert (answer.why, answer.wait_s) == ("unreachable", 7.0)
    loop.record_cost(0.25)  # the iteration in flight when the store went: kept in the journal
    assert loop.beat({"status": "running"}) is False
    assert len([s for s in said if "cannot be reached" in s]) == 1  # said once per outage
    assert "waiting for it (fleet.on_store_lost: wait)" in said[0]
    server.start()  # empty
    assert loop.reserve(10, 0).granted
    assert said[-1].endswith("is back: caught up with this loop's 1 call(s) of the last hour and $0.75 of the last day")
    limits = RedisStore(server.url).limits("claude")
    assert limits.calls_in_window() == 2 and limits.spent_usd() == 0.75


def test_what_the_store_missed_is_put_back_by_the_next_run(server: RedisServer, tmp_path: Path) -> None:
    """The store was out of reach (its data kept) when the loop ended: its next run, another process, catches the
    store up although the store's epoch never changed."""
    said: list[str] = []
    loop = link(server, tmp_path, "wait", said)
    assert loop.reserve(10, 0).granted
    loop.store = RedisStore(f"redis://127.0.0.1:{free_port()}/0", timeout_s=1)  # the network between them cut
    loop.limits = loop.store.limits("claude")
    loop.record_cost(0.5)  # the last iteration's cost, then the loop stops
    again = link(server, tmp_path, "wait", said)
    assert again.reserve(10, 0).granted
    limits = RedisStore(server.url).limits("claude")
    assert limits.spent_usd() == 0.5 and limits.calls_in_window() == 2
    assert "is back: caught up with this loop's 1 call(s) of the last hour and $0.50" in said[-1]
    assert '"behind": false' in (tmp_path / "fleet.json").read_text()


def test_falls_back_to_local_limits_and_pushes_them_back(server: RedisServer, tmp_path: Path) -> None:
    said: list[str] = []
    loop = link(server, tmp_path, "local", said)
    server.kill()
    assert [loop.reserve(2, 0).why for _ in range(3)] == ["granted", "granted", "window"]  # this machine's window
    assert "going on under this machine's limits" in said[0]
    assert SharedLimits("claude").calls_in_window() == 2
    server.start()
    answer = loop.reserve(2, 0)
    assert answer.why == "window"  # the two calls made without the store count in it once it is back
    assert RedisStore(server.url).limits("claude").calls_in_window() == 2


def test_a_restarted_store_is_caught_up_by_the_heartbeat(server: RedisServer, tmp_path: Path) -> None:
    said: list[str] = []
    loop = link(server, tmp_path, "wait", said)
    assert loop.reserve(10, 0).granted
    loop.pause_until(9e9, "usage_limit")
    server.kill()
    server.start()  # between two heartbeats: the loop never saw it go
    assert loop.beat({"status": "waiting"}) is True
    limits = RedisStore(server.url).limits("claude")
    assert limits.calls_in_window() == 1 and limits.paused_until() == 9e9
    assert [r["loop_id"] for r in RedisStore(server.url).loops()] == [loop.loop_id]


def test_a_password_never_goes_in_the_repository_config(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ConfigError, match="holds a password: the agent can read"):
        open_store("redis://:hunter22@fleet.example:6379/0")
    with pytest.raises(ConfigError, match="neither 'local' nor a redis"):
        open_store("http://fleet.example")
    monkeypatch.setenv("DUN_FLEET_PASSWORD", "p@ss/word")
    assert store_url("redis://fleet.example:6379/1") == "redis://:p%40ss%2Fword@fleet.example:6379/1"
    monkeypatch.setenv("DUN_FLEET_STORE", "redis://u:envpass@other.example:6379/0")
    redactor = Redactor()
    store = open_store("local", redactor=redactor)  # the environment wins, and may hold the password
    assert store.where == "redis://u:***@other.example:6379/0"
    assert redactor.redact("connecting with envpass") == "connecting with <redacted:secret>"
    monkeypatch.delenv("DUN_FLEET_STORE")
    monkeypatch.delenv("DUN_FLEET_PASSWORD")
    assert isinstance(open_store("local"), LocalStore)
    monkeypatch.setenv("DUN_FLEET_STORE", "redis://env.example:6379/0")  # a command line's --store wins
    assert open_store("local", explicit="redis://cli.example:6379/3").where == "redis://cli.example:6379/3"


def test_the_sandbox_unsets_the_store_variables(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DUN_FLEET_STORE", "redis://:pw@h:1/0")
    line = prefix(SandboxSpec(repo=tmp_path, agent_env=dict(os.environ)), ["true"])
    unset = [line[i + 1] for i, word in enumerate(line) if word == "--unsetenv"]
    assert unset == ["DUN_FLEET_STORE", "DUN_FLEET_PASSWORD"]
