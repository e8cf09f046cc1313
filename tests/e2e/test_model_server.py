"""The scripted model server drives the real Claude Code CLI: text answers, real tool calls, episodes, errors, streams.

Each CLI run takes well under two seconds; the 429 tests wait for one retry (about a second).
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from .conftest import ClaudeRun
from .model_server import ModelServer, ScenarioError

RunClaude = Callable[..., ClaudeRun]


def main_requests(server: ModelServer) -> list[dict[str, Any]]:
    return server.main_requests


# --- text answers and cost -------------------------------------------------------------------------------------------


def text_scenario(input_tokens: int, output_tokens: int) -> list[list[dict[str, Any]]]:
    return [[{"text": "The answer is 42.", "usage": {"input_tokens": input_tokens, "output_tokens": output_tokens}}]]


# The CLI prices its default model at $5 per million input tokens and $25 per million output tokens.
@pytest.mark.parametrize(("scenario", "cost"), [(text_scenario(1000, 100), 0.0075), (text_scenario(2000, 100), 0.0125)])
def test_text_episode_reports_scripted_text_and_cost(
    run_claude: RunClaude, server: ModelServer, scenario: list[list[dict[str, Any]]], cost: float,
) -> None:
    run = run_claude("What is the answer?")
    result = run.result
    assert run.returncode == 0, run.stderr
    assert result["is_error"] is False
    assert result["result"] == "The answer is 42."
    assert result["usage"]["input_tokens"] == scenario[0][0]["usage"]["input_tokens"]
    assert result["usage"]["output_tokens"] == scenario[0][0]["usage"]["output_tokens"]
    assert result["total_cost_usd"] == pytest.approx(cost)
    assert server.episode_count == 1
    [request] = main_requests(server)
    assert request["path"] == "/v1/messages?beta=true"
    assert (request["episode"], request["step"], request["retry"]) == (0, 0, False)
    assert not server.exhausted


# --- tools really run ------------------------------------------------------------------------------------------------


@pytest.mark.scenario([[
    {"tool_use": "Bash", "input": {"command": "echo made-by-bash > created.txt", "description": "Create a file"}},
    {"text": "Created it."},
]])
def test_bash_tool_use_really_runs(run_claude: RunClaude, server: ModelServer, repo: Path) -> None:
    run = run_claude("Create created.txt")
    assert run.returncode == 0, run.stderr
    assert run.result["result"] == "Created it."
    assert run.result["num_turns"] == 2
    assert (repo / "created.txt").read_text() == "made-by-bash\n"
    first, second = main_requests(server)
    assert (first["step"], second["step"]) == (0, 1)
    assert second["messages"] > first["messages"]
    [tool_result] = second["tool_results"]
    assert tool_result["is_error"] is False


@pytest.mark.scenario([[
    {"tool_use": "Write", "input": {"file_path": "notes/todo.md", "content": "- [ ] alpha\n"}},
    {"tool_use": "Edit", "input": {"file_path": "notes/todo.md", "old_string": "[ ] alpha", "new_string": "[x] alpha"}},
    {"text": "Wrote and ticked it."},
]])
def test_write_and_edit_tool_uses_really_run(run_claude: RunClaude, server: ModelServer, repo: Path) -> None:
    run = run_claude("Write the notes")
    assert run.returncode == 0, run.stderr
    assert run.result["result"] == "Wrote and ticked it."
    assert (repo / "notes" / "todo.md").read_text() == "- [x] alpha\n"
    assert [r["step"] for r in main_requests(server)] == [0, 1, 2]
    assert all(not t["is_error"] for r in main_requests(server) for t in r["tool_results"])


# --- episodes --------------------------------------------------------------------------------------------------------


@pytest.mark.scenario([
    [{"tool_use": "Bash", "input": {"command": "touch one.txt", "description": "First file"}}, {"text": "first"}],
    [{"text": "second", "usage": {"input_tokens": 1000, "output_tokens": 100}}],
])
def test_each_run_is_a_new_episode(run_claude: RunClaude, server: ModelServer, repo: Path) -> None:
    first = run_claude("Do the first thing")
    assert server.episode_count == 1
    second = run_claude("Do the first thing")  # the same prompt: a new session is still a new conversation
    assert (first.result["result"], second.result["result"]) == ("first", "second")
    assert first.result["session_id"] != second.result["session_id"]
    assert second.result["total_cost_usd"] == pytest.approx(0.0075)
    assert (repo / "one.txt").exists()
    assert server.episode_count == 2
    assert [(r["episode"], r["step"]) for r in main_requests(server)] == [(0, 0), (0, 1), (1, 0)]
    assert not server.exhausted


@pytest.mark.scenario([[{"text": "one"}], [{"text": "two"}]])
def test_continued_session_starts_the_next_episode(run_claude: RunClaude, server: ModelServer) -> None:
    first = run_claude("start")
    second = run_claude("go on", "--continue")
    assert first.result["session_id"] == second.result["session_id"]
    assert second.result["result"] == "two"
    assert [(r["episode"], r["step"]) for r in main_requests(server)] == [(0, 0), (1, 0)]


# --- errors and retries ----------------------------------------------------------------------------------------------


@pytest.mark.scenario([[
    {"error": {"status": 429, "type": "rate_limit_error", "message": "Slow down, scripted", "retry_after": 1}},
]])
def test_rate_limit_error_is_reported_after_retries(
    run_claude: RunClaude, server: ModelServer, claude_env: dict[str, str],
) -> None:
    run = run_claude("Anything")
    result = run.result
    assert run.returncode == 1
    assert result["is_error"] is True
    assert result["api_error_status"] == 429
    assert "429" in result["result"] and "Slow down, scripted" in result["result"]
    requests = main_requests(server)
    retries = int(claude_env["CLAUDE_CODE_MAX_RETRIES"])
    assert len(requests) == 1 + retries
    assert [(r["episode"], r["step"], r["status"]) for r in requests] == [(0, 0, 429)] * (1 + retries)
    assert [r["retry"] for r in requests] == [False] + [True] * retries
    assert server.episode_count == 1


@pytest.mark.scenario([[
    {"error": {"status": 429, "type": "rate_limit_error", "message": "once", "retry_after": 1}, "times": 1},
    {"text": "recovered"},
]])
def test_error_served_once_then_the_retry_gets_the_next_step(run_claude: RunClaude, server: ModelServer) -> None:
    run = run_claude("Anything", output_format="stream-json")
    assert run.returncode == 0, run.stderr
    assert run.result["result"] == "recovered"
    assert any(e.get("subtype") == "api_retry" and e.get("error_status") == 429 for e in run.events)
    assert [(r["episode"], r["step"], r["retry"]) for r in main_requests(server)] == [(0, 0, False), (0, 1, True)]
    assert server.episode_count == 1


# --- stream-json -----------------------------------------------------------------------------------------------------


@pytest.mark.scenario([[
    {"text": "Let me look.", "tool_use": "Bash", "input": {"command": "git status --short", "description": "Status"}},
    {"text": "All clean.", "usage": {"input_tokens": 1000, "output_tokens": 100}},
]])
def test_stream_json_run_ends_with_a_result_event(run_claude: RunClaude, server: ModelServer) -> None:
    run = run_claude("Check the tree", output_format="stream-json")
    assert run.returncode == 0, run.stderr
    assert run.events[0]["type"] == "system" and run.events[0]["subtype"] == "init"
    assert run.events[0]["claude_code_version"] == "2.1.197"
    assert run.events[-1]["type"] == "result"
    assert run.events[-1]["result"] == "All clean."
    tool_uses = [b for e in run.events if e["type"] == "assistant" for b in e["message"]["content"]
                 if b["type"] == "tool_use"]
    assert [t["name"] for t in tool_uses] == ["Bash"]
    tool_results = [b for e in run.events if e["type"] == "user" for b in e["message"]["content"]
                    if isinstance(b, dict) and b.get("type") == "tool_result"]
    assert len(tool_results) == 1 and not tool_results[0].get("is_error")
    assert len(main_requests(server)) == 2


# --- the server on its own (no CLI) ----------------------------------------------------------------------------------


def post(server: ModelServer, path: str, body: dict[str, Any]) -> tuple[int, str]:
    request = urllib.request.Request(server.url + path, data=json.dumps(body).encode(),
                                     headers={"content-type": "application/json"}, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def test_auxiliary_requests_consume_no_step() -> None:
    prompt = [{"role": "user", "content": "hi"}]
    tools = [{"name": "Bash", "input_schema": {"type": "object"}}]
    with ModelServer([[{"text": "main answer"}]]) as server:
        status, body = post(server, "/v1/messages", {"model": "m", "max_tokens": 100, "messages": prompt})
        assert status == 200 and json.loads(body)["content"][0]["text"] == "OK"
        status, _ = post(server, "/v1/messages", {"model": "m", "max_tokens": 1, "stream": True, "tools": tools,
                                                  "messages": prompt})
        assert status == 200
        status, _ = post(server, "/v1/messages", {
            "model": "m", "max_tokens": 100, "stream": True, "tools": tools, "messages": prompt,
            "system": [{"type": "text", "text": "x-anthropic-billing-header: cc_version=2.1.197"},
                       {"type": "text", "text": "Generate a concise, sentence-case title (3-7 words)"}]})
        assert status == 200
        status, body = post(server, "/v1/messages/count_tokens", {"model": "m", "messages": prompt})
        assert status == 200 and json.loads(body)["input_tokens"] >= 1
        assert server.episode_count == 0
        status, body = post(server, "/v1/messages?beta=true", {"model": "m", "max_tokens": 100, "stream": True,
                                                               "tools": tools, "messages": prompt})
        assert status == 200 and "main answer" in body and "event: message_stop" in body
        assert [r["kind"] for r in server.requests] == ["aux", "aux", "aux", "count_tokens", "main"]
        assert server.episode_count == 1 and not server.exhausted


def test_a_request_past_the_script_is_answered_and_flagged(tmp_path: Path) -> None:
    tools = [{"name": "Bash", "input_schema": {"type": "object"}}]
    with ModelServer([]) as server:
        status, body = post(server, "/v1/messages", {"model": "m", "max_tokens": 100, "stream": True, "tools": tools,
                                                     "messages": [{"role": "user", "content": "hi"}]})
        assert status == 200 and "has no episode 0" in body
        assert server.exhausted
        server.dump(tmp_path / "records.json")
    assert json.loads((tmp_path / "records.json").read_text())[0]["exhausted"] is True


@pytest.mark.parametrize("bad", [
    [{"text": "not in an episode"}],
    [[{"say": "unknown kind"}]],
    [[{"error": {"status": "429"}}]],
    [[{"text": "fine"}, {"delay": 1}]],
])
def test_malformed_scenarios_are_rejected(bad: Any) -> None:
    with pytest.raises(ScenarioError):
        ModelServer(bad)
