"""The scripted servers of agent_servers.py on their own, spoken to with urllib as the CLIs speak to them: the wire
formats, the shell placeholder, side requests, errors and retries. No agent CLI is needed; each test takes
milliseconds."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

import pytest

from .agent_servers import (
    SHELL,
    ChatServer,
    GeminiServer,
    ResponsesServer,
    current_turn,
    expand_shell_steps,
    json_from_schema,
)
from .model_server import Scenario

BASH_TOOL = {"type": "function", "function": {"name": "bash", "parameters": {
    "type": "object", "properties": {"command": {"type": "string"}, "description": {"type": "string"}}}}}


def post(url: str, body: dict[str, Any]) -> tuple[int, dict[str, str], str]:
    request = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST",
                                     headers={"content-type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=10) as resp:
            return resp.status, dict(resp.headers), resp.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, dict(err.headers), err.read().decode()


def sse_data(text: str) -> list[Any]:
    out = []
    for line in text.splitlines():
        if line.startswith("data: ") and line[6:].strip() != "[DONE]":
            out.append(json.loads(line[6:]))
    return out


def test_shell_steps_become_the_placeholder_tool() -> None:
    assert expand_shell_steps([[{"shell": "ls", "usage": {"input_tokens": 3}}, {"text": "ok"}]]) == [
        [{"tool_use": SHELL, "input": {"command": "ls"}, "usage": {"input_tokens": 3}}, {"text": "ok"}]]


def test_current_turn_starts_at_the_last_prompt() -> None:
    canned = [{"role": "user", "content": [{"type": "text", "text": "example"}]},
              {"role": "assistant", "content": [{"type": "text", "text": "Ok."}]},
              {"role": "user", "content": [{"type": "text", "text": "the task"}]}]
    assert current_turn(canned) == canned[2:]
    result = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "1", "content": ""}]}
    call = {"role": "assistant", "content": [{"type": "tool_use", "id": "1"}]}
    assert current_turn([*canned, call, result]) == [canned[2], call, result]


def test_json_from_schema_fills_required_shapes() -> None:
    schema = {"type": "OBJECT", "properties": {"reasoning": {"type": "STRING"}, "score": {"type": "INTEGER"},
                                               "next_speaker": {"type": "string", "enum": ["user", "model"]}}}
    assert json_from_schema(schema) == {"reasoning": "OK", "score": 1, "next_speaker": "user"}


# --- Chat Completions ------------------------------------------------------------------------------------------------


def test_chat_streams_a_shell_call_then_text_with_usage() -> None:
    scenario: Scenario = [[{"shell": "echo hi", "usage": {"input_tokens": 100, "output_tokens": 7}},
                           {"text": "done"}]]
    with ChatServer(scenario) as server:
        first: dict[str, Any] = {
            "model": "m", "stream": True, "stream_options": {"include_usage": True}, "tools": [BASH_TOOL],
            "messages": [{"role": "system", "content": "You are opencode"}, {"role": "user", "content": "go"}]}
        status, headers, text = post(server.base_url + "/chat/completions", first)
        assert status == 200 and headers["content-type"] == "text/event-stream"
        assert text.rstrip().endswith("data: [DONE]")
        chunks = sse_data(text)
        [call] = [c["choices"][0]["delta"]["tool_calls"][0] for c in chunks
                  if c["choices"] and "tool_calls" in c["choices"][0]["delta"]]
        assert call["function"]["name"] == "bash"
        assert json.loads(call["function"]["arguments"]) == {"command": "echo hi",
                                                               "description": "Run the scripted command"}
        assert [c["choices"][0]["finish_reason"] for c in chunks if c["choices"]][-1] == "tool_calls"
        assert chunks[-1]["choices"] == [] and chunks[-1]["usage"]["prompt_tokens"] == 100
        second = {**first, "messages": [*first["messages"],
                                        {"role": "assistant", "content": None, "tool_calls": [call]},
                                        {"role": "tool", "tool_call_id": call["id"], "content": "hi"}]}
        _, _, text = post(server.base_url + "/chat/completions", {**second, "stream": False})
        answer = json.loads(text)
        assert answer["choices"][0]["message"]["content"] == "done"
        assert answer["usage"] == {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
        assert [(r["step"], r["tool_results"]) for r in server.main_requests] == [
            (0, []), (1, [{"tool_use_id": call["id"], "is_error": False, "content": "hi"}])]


def test_chat_side_requests_use_no_step_and_errors_carry_retry_headers() -> None:
    scenario: Scenario = [[{"error": {"status": 429, "message": "slow down", "retry_after": 2}, "times": 1},
                           {"text": "ok"}]]
    with ChatServer(scenario, aux_text="A title") as server:
        title = {"model": "m", "messages": [{"role": "system", "content": "You are a title generator."},
                                            {"role": "user", "content": "x"}]}
        _, _, text = post(server.base_url + "/chat/completions", title)
        assert json.loads(text)["choices"][0]["message"]["content"] == "A title"
        body = {"model": "m", "messages": [{"role": "user", "content": "go"}]}
        status, headers, text = post(server.base_url + "/chat/completions", body)
        assert status == 429 and headers["retry-after"] == "2" and headers["retry-after-ms"] == "2000"
        assert json.loads(text)["error"] == {"message": "slow down", "type": "rate_limit_exceeded", "param": None,
                                             "code": "rate_limit_exceeded"}
        _, _, text = post(server.base_url + "/chat/completions", body)  # the retry gets the next step
        assert json.loads(text)["choices"][0]["message"]["content"] == "ok"
        assert [(r["kind"], r["retry"]) for r in server.requests] == [("aux", False), ("main", False),
                                                                       ("main", True)]


# --- Responses API ---------------------------------------------------------------------------------------------------


def responses_body(tools: list[dict[str, Any]], items: list[dict[str, Any]]) -> dict[str, Any]:
    return {"model": "m", "stream": True, "tools": tools, "input": [
        {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "You are Codex"}]},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "go"}]}, *items]}


def events(text: str) -> list[dict[str, Any]]:
    return [e for e in sse_data(text) if isinstance(e, dict)]


def test_responses_shell_call_uses_exec_command_when_offered() -> None:
    with ResponsesServer([[{"shell": "ls", "usage": {"input_tokens": 40, "output_tokens": 4}}]]) as server:
        tools = [{"type": "function", "name": "exec_command", "parameters": {}}]
        _, _, text = post(server.base_url + "/responses", responses_body(tools, []))
    evs = events(text)
    assert [e["type"] for e in evs] == ["response.created", "response.in_progress", "response.output_item.added",
                                        "response.output_item.done", "response.completed"]
    item = evs[3]["item"]
    assert (item["type"], item["name"], json.loads(item["arguments"])) == ("function_call", "exec_command",
                                                                            {"cmd": "ls"})
    assert evs[-1]["response"]["usage"]["input_tokens"] == 40


def test_responses_shell_call_goes_through_the_javascript_exec_tool_in_code_mode() -> None:
    scenario = [[{"shell": "ls"}, {"text": "listed"}]]
    with ResponsesServer(scenario) as server:
        code_mode = {"type": "additional_tools", "role": "developer", "tools": [
            {"type": "namespace", "name": "functions", "tools": [{"type": "custom", "name": "exec"}]}]}
        body = responses_body([], [])
        body["input"].insert(0, code_mode)
        _, _, text = post(server.base_url + "/responses", body)
        item = events(text)[3]["item"]
        assert item["type"] == "custom_tool_call" and item["name"] == "exec"
        assert 'tools.exec_command({cmd: "ls"})' in item["input"]
        output = {"type": "custom_tool_call_output", "call_id": item["call_id"], "output": "a\nb"}
        body["input"] += [item, output]
        _, _, text = post(server.base_url + "/responses", body)
        done = events(text)[-1]["response"]
        assert done["output"][0]["content"][0]["text"] == "listed"
        assert server.main_requests[1]["tool_results"][0]["content"] == "a\nb"


# --- Gemini ----------------------------------------------------------------------------------------------------------


def test_gemini_streams_function_calls_and_answers_side_queries_with_json() -> None:
    scenario = [[{"shell": "ls", "usage": {"input_tokens": 9, "output_tokens": 2}}]]
    with GeminiServer(scenario) as server:
        router = {"contents": [{"role": "user", "parts": [{"text": "go"}]}], "generationConfig": {
            "responseMimeType": "application/json",
            "responseJsonSchema": {"type": "OBJECT", "properties": {"complexity_score": {"type": "INTEGER"}}}}}
        _, _, text = post(server.url + "/v1beta/models/flash-lite:generateContent", router)
        assert json.loads(json.loads(text)["candidates"][0]["content"]["parts"][0]["text"]) == {"complexity_score": 1}
        tools = [{"functionDeclarations": [{"name": "run_shell_command", "parametersJsonSchema": {
            "type": "object", "properties": {"command": {}, "description": {}}}}]}]
        main = {"contents": [{"role": "user", "parts": [{"text": "go"}]}], "tools": tools}
        _, _, text = post(server.url + "/v1beta/models/pro:streamGenerateContent?alt=sse", main)
        _, _, counted = post(server.url + "/v1beta/models/pro:countTokens", main)
    [chunk] = sse_data(text)
    assert chunk["candidates"][0]["content"]["parts"] == [
        {"functionCall": {"name": "run_shell_command", "args": {"command": "ls",
                                                                "description": "Run the scripted command"}}}]
    assert chunk["usageMetadata"] == {"promptTokenCount": 9, "candidatesTokenCount": 2, "totalTokenCount": 11}
    assert json.loads(counted)["totalTokens"] > 0
    assert [(r["kind"], r["model"]) for r in server.requests] == [("aux", "flash-lite"), ("main", "pro"),
                                                                   ("count_tokens", "pro")]


@pytest.mark.parametrize(("status", "google_status"), [(429, "RESOURCE_EXHAUSTED"), (401, "UNAUTHENTICATED")])
def test_gemini_errors_use_google_error_bodies(status: int, google_status: str) -> None:
    with GeminiServer([[{"error": {"status": status, "message": "no"}}]]) as server:
        code, _, text = post(server.url + "/v1beta/models/pro:streamGenerateContent?alt=sse",
                             {"contents": [{"role": "user", "parts": [{"text": "go"}]}], "tools": [{}]})
    assert code == status
    assert json.loads(text) == {"error": {"code": status, "message": "no", "status": google_status}}
