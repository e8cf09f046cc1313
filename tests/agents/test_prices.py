"""Pricing an agent call (dun.agents.prices): the CLI's own dollars, else tokens times the configured or dated table
rates, else unknown; and reading JSON event streams in bounded memory (dun.agents.events)."""

from __future__ import annotations

import datetime
import io
import json
from typing import Any

import pytest
from conftest import agent_settings

from dun.agents import prices
from dun.agents.events import add_tokens, read_jsonl
from dun.agents.prices import MODELS, PRICES_AS_OF, Rate, priced, rate_for, table_refusal


def facts(cost: float | None = None, model: str | None = None, **tokens: int) -> dict[str, Any]:
    agent: dict[str, Any] = {}
    add_tokens(agent, tokens.get("input", 0), tokens.get("cached", 0), tokens.get("output", 0), model=model)
    if cost is not None:
        agent["cost_usd"] = cost
    return agent


def test_reported_dollars_win() -> None:
    assert priced(facts(0.5, input=10), agent_settings(input_usd_per_mtok=100.0), "gpt-6.1-sol") == 0.5


def test_configured_rates_beat_the_table_and_bill_cache_reads_as_input() -> None:
    cfg = agent_settings(input_usd_per_mtok=1.0, output_usd_per_mtok=2.0)
    assert priced(facts(input=1_000_000, cached=1_000_000, output=1_000_000), cfg, "gpt-6.1-sol") == 4.0


def test_the_table_prices_cache_reads_at_their_own_rate() -> None:
    cost = priced(facts(input=1_000_000, cached=1_000_000, output=1_000_000), agent_settings(), "openai/GPT-6.1-sol")
    assert cost == pytest.approx(2.0 + 0.10 + 10.0)


def test_each_model_at_its_own_rate_and_an_unknown_one_is_unknown() -> None:
    agent = facts(model="gemini-3.5-flash-lite", input=1_000_000)
    add_tokens(agent, 1_000_000, model="gemini-3.8-flash")
    rate = rate_for("gemini-3.8-flash", agent_settings())
    assert rate is not None and priced(agent, agent_settings(), None) == pytest.approx(0.30 + rate.input)
    add_tokens(agent, 5, model="gemini-9-ultra")
    assert priced(agent, agent_settings(), None) is None


def test_no_tokens_and_no_dollars_is_unknown_and_zero_without_tokens_is_free() -> None:
    assert priced({}, agent_settings(), "gpt-6.1-sol") is None
    assert priced(facts(0.0), agent_settings(), "gpt-6.1-sol") == 0.0
    # a $0 with tokens spent: no price known
    assert priced(facts(0.0, input=5), agent_settings(), "no-such-model") is None


def test_a_promotional_rate_ends_on_its_date() -> None:
    flash = MODELS["gemini-3.8-flash"]
    assert flash.on(datetime.date(2026, 12, 31)).input == 0.75
    assert flash.on(datetime.date(2027, 1, 1)) == Rate(1.50, 7.50, 0.15)


def test_refusal_names_the_fix() -> None:
    assert table_refusal("codex", None, agent_settings()) is None  # its default model is in the table
    assert table_refusal("codex", "gpt-6.1-sol", agent_settings()) is None
    assert table_refusal("codex", "o9", agent_settings(output_usd_per_mtok=3.0)) is None
    why = table_refusal("codex", "o9", agent_settings())
    assert why is not None and "'o9'" in why and PRICES_AS_OF in why
    assert "agent.input_usd_per_mtok" in why and "loop.max_budget_usd: 0" in why


def test_the_table_is_dated_and_covers_each_token_only_default() -> None:
    datetime.date.fromisoformat(PRICES_AS_OF)
    assert set(prices.DEFAULT_MODEL) == {"codex", "gemini"}
    assert all(model in MODELS for model in prices.DEFAULT_MODEL.values())


def test_read_jsonl_skips_what_is_not_an_object_and_bounds_lines(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("dun.agents.events.MAX_LINE", 100)
    monkeypatch.setattr("dun.agents.events.CHUNK", 7)  # events split across reads
    huge = json.dumps({"type": "big", "pad": "x" * 500})
    data = "\n".join(['{"type": "a"}', "warning: not json", huge, "[1, 2]", '{"type": "b"', '{"type": "c"}']).encode()
    seen: list[str] = []
    total = read_jsonl(io.BytesIO(data), lambda obj: seen.append(obj["type"]))
    assert seen == ["a", "c"] and total == len(data)


def test_a_handler_error_on_an_odd_event_skips_only_that_event() -> None:
    seen: list[int] = []

    def handle(obj: dict[str, Any]) -> None:
        seen.append(int(obj["n"]))

    read_jsonl(io.BytesIO(b'{"n": 1}\n{"n": "x"}\n{"m": 2}\n{"n": 3}'), handle)
    assert seen == [1, 3]
