"""Each adapter against what its real CLI printed (tests/e2e/corpus/, captured offline from the pinned versions by
tests/e2e/capture_agent_corpus.py): the answer's shape, the status block, the tokens and dollars, and how a 429 and
a 401 are classified from stdout, stderr and the exit code the CLI really returned."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import agent_settings

from dun.agents.base import AgentAdapter
from dun.agents.registry import agent_adapters
from dun.engine.manager import make_manager

CORPUS = Path(__file__).parents[1] / "e2e" / "corpus"
RUNS = {(r["cli"], r["case"]): r for r in json.loads((CORPUS / "agent_cli_runs.json").read_text(encoding="utf-8"))}
ADAPTERS = agent_adapters(make_manager(entry_points=False))
# $2 / $8 per million in opencode's and pi's provider config, and aider's model metadata; codex and gemini are
# priced from dun's table (gpt-6.1-sol $2 / $10; gemini-3.8-flash $0.75 / $3.75, its router $0.30 / $2.50)
OK = {
    "aider": ("text", {"input": 1200, "cached": 0, "output": 100}, 0.0032),
    "claude": ("claude-json", None, 0.01475),
    "codex": ("codex-jsonl", {"input": 2200, "cached": 0, "output": 150}, (2200 * 2 + 150 * 10) / 1e6),
    "gemini": ("gemini-json", {"input": 2201, "cached": 0, "output": 151},
               (2200 * 0.75 + 150 * 3.75 + 1 * 0.30 + 1 * 2.50) / 1e6),
    "opencode": ("opencode-jsonl", {"input": 2200, "cached": 0, "output": 150}, 0.0056),
    "pi": ("pi-jsonl", {"input": 2200, "cached": 0, "output": 150}, 0.0056),
}
CASES = {"claude": ("json_verbose_ok", "json_verbose_429", "json_verbose_401")}


def files(cli: str, case: str) -> tuple[Path, Path]:
    version = RUNS[(cli, case)]["version"]
    [out] = CORPUS.glob(f"{cli}_{version}_{case}_stdout.*")
    return out, CORPUS / f"{cli}_{version}_{case}_stderr.txt"


def run(cli: str, case: str) -> tuple[AgentAdapter, Any, Any]:
    adapter = ADAPTERS[cli]
    out, err = files(cli, case)
    with out.open("rb") as fh:
        parsed = adapter.parse(fh)
    error = adapter.classify(parsed.agent, RUNS[(cli, case)]["exit_code"], out.read_text("utf-8")[-4096:],
                             err.read_text("utf-8")[-4096:])
    return adapter, parsed, error


@pytest.mark.parametrize("cli", sorted(OK))
def test_success_is_parsed_and_priced(cli: str) -> None:
    adapter, parsed, error = run(cli, CASES.get(cli, ("ok",))[0])
    shape, tokens, dollars = OK[cli]
    assert (parsed.outcome, parsed.shape, error) == ("parsed", shape, None)
    assert parsed.block.status == "COMPLETE" and parsed.block.exit_signal is True
    assert parsed.agent.get("tokens") == tokens
    assert adapter.cost(parsed.agent, agent_settings()) == pytest.approx(dollars, abs=1e-9)


@pytest.mark.parametrize(("cli", "status", "kind"), [
    (cli, status, kind) for cli in sorted(OK) for status, kind in (("429", "rate_limit"), ("401", "auth"))])
def test_api_errors_are_classified(cli: str, status: str, kind: str) -> None:
    case = {"429": 1, "401": 2}[status]
    _, parsed, error = run(cli, CASES.get(cli, ("ok", "429", "401"))[case])
    assert parsed.block is None
    assert error is not None and error.kind == kind, error
    if kind == "auth":
        assert "API key" in error.message
    else:
        assert "Rate limit" in error.message or "429" in error.message


def test_gemini_errors_come_from_stderr_alone() -> None:
    """json mode prints nothing on stdout; the message is the API's own, not the JSON body it came in."""
    out, _ = files("gemini", "401")
    assert out.read_text("utf-8") == ""
    _, _, error = run("gemini", "401")
    assert error is not None and error.message == "Incorrect API key provided: dummy-key."


def test_pi_and_aider_exit_0_on_errors_but_are_still_failures() -> None:
    for cli in ("pi", "aider"):
        assert RUNS[(cli, "429")]["exit_code"] == 0
        _, parsed, error = run(cli, "429")
        assert parsed.agent["is_error"] is True and error is not None and error.kind == "rate_limit"


def test_a_cli_that_reports_no_price_is_not_free() -> None:
    """pi and opencode report $0 for a model without prices: tokens were spent, so the cost is unknown until rates
    are configured."""
    adapter, parsed, _ = run("pi", "ok")
    agent = {**parsed.agent, "cost_usd": 0.0}
    assert adapter.cost(agent, agent_settings()) is None
    assert adapter.cost(agent, agent_settings(input_usd_per_mtok=1.0, output_usd_per_mtok=4.0)) == pytest.approx(
        (2200 * 1.0 + 150 * 4.0) / 1e6)


def test_codex_model_error_item_is_not_a_failure(tmp_path: Path) -> None:
    """A model Codex has no metadata for makes it print an `error` *item* on stdout: a warning, not a failure."""
    lines = [{"type": "thread.started", "thread_id": "t"}, {"type": "turn.started"},
             {"type": "item.completed", "item": {"type": "error", "message": "Model metadata for `x` not found."}},
             {"type": "item.completed", "item": {"type": "agent_message", "text": "done"}},
             {"type": "turn.completed", "usage": {"input_tokens": 10, "cached_input_tokens": 4, "output_tokens": 2}}]
    path = tmp_path / "out.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    adapter = ADAPTERS["codex"]
    with path.open("rb") as fh:
        parsed = adapter.parse(fh)
    assert adapter.classify(parsed.agent, 0, "", "Reading additional input from stdin...") is None
    assert parsed.agent["tokens"] == {"input": 6, "cached": 4, "output": 2}


def test_a_flag_the_cli_does_not_know_is_named() -> None:
    """codex 0.169.0 no longer has --full-auto: clap's usage text ends with a useless last line."""
    stderr = ("error: unexpected argument '--full-auto' found\n\n  tip: to pass '--full-auto' as a value, use "
              "'-- --full-auto'\n\nUsage: codex exec [OPTIONS] [PROMPT]\n\nFor more information, try '--help'.\n")
    error = ADAPTERS["codex"].classify({}, 2, "", stderr)
    assert error is not None and error.kind == "other"
    assert error.message.startswith("error: unexpected argument '--full-auto' found (a flag dun passes is unknown")
