"""What an agent call cost: the CLI's own dollars where it reports them, else its tokens times a rate, from
`agent.input_usd_per_mtok`/`output_usd_per_mtok` or the dated list prices below; else unknown (None), never $0.

The table holds the default model of each CLI that reports tokens but no dollars (codex, gemini), plus the models
those defaults route side calls to. Prices are USD per million tokens, list prices of the standard tier, read on
PRICES_AS_OF; a price with an end date (a promotion) names the rate that follows it."""

from __future__ import annotations

import datetime
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from dun.config.sections import Agent

PRICES_AS_OF = "2026-11-23"


@dataclass(frozen=True)
class Rate:
    input: float
    output: float  # thinking/reasoning tokens bill as output
    cached: float  # cache reads
    until: str | None = None  # last day of a promotional rate (ISO date)
    then: Rate | None = None  # the rate after it

    def on(self, day: datetime.date) -> Rate:
        if self.until is not None and self.then is not None and day.isoformat() > self.until:
            return self.then.on(day)
        return self


MODELS: dict[str, Rate] = {
    # OpenAI, up to 272K input tokens per request (above: $4 / $15, cached $0.20)
    "gpt-6.1-sol": Rate(2.00, 10.00, 0.10),
    # Google: 3.8 Flash at half price through 2026-12-31
    "gemini-3.8-flash": Rate(0.75, 3.75, 0.075, until="2026-12-31", then=Rate(1.50, 7.50, 0.15)),
    "gemini-3.5-flash-lite": Rate(0.30, 2.50, 0.03),  # the Gemini CLI's task router
}
# The model each CLI uses when neither agent.model nor the CLI's own config names one.
DEFAULT_MODEL = {"codex": "gpt-6.1-sol", "gemini": "gemini-3.8-flash"}


def normalize(model: str) -> str:
    """`openai/gpt-6.1-sol`, `models/gemini-3.8-flash` and `GPT-6.1-SOL` are the table's names."""
    return model.strip().lower().rsplit("/", 1)[-1]


def configured_rate(config: Agent) -> Rate | None:
    """The user's rates: cache reads are billed at the input rate, since no cache rate is configured."""
    rate_in = config.input_usd_per_mtok
    rate_out = config.output_usd_per_mtok
    if not rate_in and not rate_out:
        return None
    return Rate(rate_in, rate_out, rate_in)


def rate_for(model: str | None, config: Agent, today: datetime.date | None = None) -> Rate | None:
    """The configured rates win; else the table's price for the model; else None."""
    configured = configured_rate(config)
    if configured is not None:
        return configured
    if not model:
        return None
    rate = MODELS.get(normalize(model))
    return rate.on(today or datetime.date.today()) if rate else None


def tokens_cost(tokens: Mapping[str, object], rate: Rate) -> float:
    def n(key: str) -> int:
        value = tokens.get(key)
        return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0

    return (n("input") * rate.input + n("cached") * rate.cached + n("output") * rate.output) / 1_000_000


def has_tokens(agent: Mapping[str, object]) -> bool:
    tokens = agent.get("tokens")
    return isinstance(tokens, dict) and any(isinstance(v, int) and v > 0 for v in tokens.values())


def priced(agent: Mapping[str, object], config: Agent, model: str | None) -> float | None:
    """The cost of one call from its facts (see dun.agents.events.add_tokens/add_cost). A reported $0 with
    tokens spent is a CLI that knows no price for the model: unknown, not free. `model` is the model the call
    used when the facts do not name one per model."""
    reported = agent.get("cost_usd")
    spent = has_tokens(agent)
    if isinstance(reported, int | float) and not isinstance(reported, bool) and (reported > 0 or not spent):
        return float(reported)
    if not spent:
        return None
    by_model = agent.get("tokens_by_model")
    parts = by_model.items() if isinstance(by_model, dict) and by_model else [(model, agent["tokens"])]
    total = 0.0
    for name, tokens in parts:
        rate = rate_for(name or model, config)
        if rate is None or not isinstance(tokens, dict):
            return None
        total += tokens_cost(tokens, rate)
    return round(total, 10)


def table_refusal(cli: str, model: str | None, config: Agent) -> str | None:
    """Why dun cannot price a CLI that reports tokens only, or None when it can."""
    if configured_rate(config) is not None:
        return None
    name = model or DEFAULT_MODEL.get(cli)
    if name and normalize(name) in MODELS:
        return None
    what = f"model '{name}'" if name else "its model"
    return (f"dun cannot price {cli}'s usage: {cli} reports tokens, not dollars, and {what} is not in dun's price "
            f"table ({PRICES_AS_OF}); set agent.input_usd_per_mtok and agent.output_usd_per_mtok, or "
            f"loop.max_budget_usd: 0")
