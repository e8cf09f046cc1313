"""Scripted loopback model servers for the other agent CLIs: the OpenAI Responses API (Codex), OpenAI Chat Completions
(opencode, aider, pi) and the Gemini API (Gemini CLI). Standard library only.

They play the same scenarios as ``model_server.py`` (episodes of steps, one step per main request, retries replaying
their step, side requests answered without using a step) and reuse its scenario cursor, request records and body
log: only the wire format differs. See model_server.py for the step schema; on top of it a step may be

    {"shell": "command line"}   -> a call of the CLI's own shell tool, whatever it is named in the request's tools
                                   (Codex ``exec_command``, or its JavaScript ``exec`` tool for models in code mode;
                                   opencode and pi ``bash``; Gemini ``run_shell_command``)

``usage`` keeps the Anthropic names (``input_tokens``, ``output_tokens``, optional ``cache_read_input_tokens``) and
is translated for each API. An ``error`` step may also carry ``"code"`` (the API's error code string).

Run by hand: ``python tests/e2e/agent_servers.py --api chat|responses|gemini --scenario scenario.json --port 8123``.
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import json
import signal
import sys
import threading
import time
import uuid
from pathlib import Path
from typing import Any, Self

try:
    from .model_server import DEFAULT_USAGE, ModelServer, Scenario, Step, _Handler
except ImportError:  # run as a script
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from model_server import (  # type: ignore[no-redef,import-not-found]
        DEFAULT_USAGE,
        ModelServer,
        Scenario,
        Step,
        _Handler,
    )

Message = dict[str, Any]
SHELL = "$shell"  # the placeholder tool name a {"shell": ...} step becomes
# Side requests recognised by their system prompt (titles, commit messages, summaries, routing), as seen from
# opencode 1.18.33, aider 0.86.2 and the Gemini CLI 0.61.0. They consume no step.
AUX_SYSTEM_MARKERS = (
    "title generator", "generate a title", "commit message", "summarize", "summarise", "task routing",
)
OPENAI_ERROR_TYPES = {400: "invalid_request_error", 401: "invalid_request_error", 403: "permission_error",
                      404: "not_found_error", 429: "rate_limit_exceeded", 500: "server_error", 503: "server_error"}
OPENAI_ERROR_CODES = {401: "invalid_api_key", 429: "rate_limit_exceeded"}
GOOGLE_STATUSES = {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 404: "NOT_FOUND",
                   429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 503: "UNAVAILABLE"}


def expand_shell_steps(scenario: Scenario) -> Scenario:
    """Turn ``{"shell": cmd}`` steps into tool_use steps of the placeholder tool, before the usual validation."""
    if not isinstance(scenario, list):
        return scenario
    out: Scenario = []
    for episode in scenario:
        if not isinstance(episode, list):
            out.append(episode)
            continue
        steps = []
        for raw in episode:
            step = copy.deepcopy(raw)
            if isinstance(step, dict) and "shell" in step:
                step["tool_use"] = SHELL
                step["input"] = {"command": str(step.pop("shell"))}
            steps.append(step)
        out.append(steps)
    return out


def current_turn(messages: list[Message]) -> list[Message]:
    """The conversation from its last user prompt on. Agent CLIs put canned exchanges (aider's examples, Codex's
    environment context) before the prompt, so "no assistant turn yet" is judged from the last prompt only."""
    for i in range(len(messages) - 1, -1, -1):
        message = messages[i]
        content = message.get("content")
        blocks = content if isinstance(content, list) else []
        if message.get("role") == "user" and not any(b.get("type") == "tool_result" for b in blocks):
            return messages[i:]
    return messages


def usage_of(step: Step) -> dict[str, int]:
    return {**DEFAULT_USAGE, **(step.get("usage") or {})}


def json_from_schema(schema: Any) -> Any:
    """A small value that satisfies a JSON schema: what a side query asking for JSON (routing, next speaker) gets."""
    if not isinstance(schema, dict):
        return "OK"
    if schema.get("enum"):
        return schema["enum"][0]
    kind = str(schema.get("type", "object")).lower()
    if kind == "object":
        props = schema.get("properties") or {}
        return {key: json_from_schema(sub) for key, sub in props.items()}
    if kind == "array":
        return []
    if kind in ("integer", "number"):
        return max(1, int(schema.get("minimum", 1)))
    if kind == "boolean":
        return False
    return "OK"


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, str):
                parts.append(part)
            elif isinstance(part, dict):
                parts.append(str(part.get("text") or part.get("output") or part.get("content") or ""))
        return "".join(parts)
    if content is None:
        return ""
    return json.dumps(content)


class ApiHandler(_Handler):
    """One wire format. The scenario plumbing is shared: subclasses say how a request is routed, how its conversation
    reads as Anthropic-style messages, and how a step, a side answer and an error are written."""

    api = "base"
    server: Any

    # --- what subclasses provide -------------------------------------------------------------------------------------

    def route(self, body: dict[str, Any]) -> str:
        """``main``, ``aux``, ``count_tokens`` or ``other``."""
        raise NotImplementedError

    def conversation(self, body: dict[str, Any]) -> list[Message]:
        raise NotImplementedError

    def answer(self, step: Step, body: dict[str, Any]) -> None:
        raise NotImplementedError

    def answer_aux(self, body: dict[str, Any]) -> None:
        raise NotImplementedError

    def send_error_step(self, err: dict[str, Any], headers: dict[str, str]) -> None:
        raise NotImplementedError

    def count_tokens(self, body: dict[str, Any]) -> None:
        self._send_json(200, {"input_tokens": max(1, len(json.dumps(body)) // 4)})

    def session_id(self) -> str | None:
        return None

    # --- shared ------------------------------------------------------------------------------------------------------

    def do_POST(self) -> None:
        body = self._read_body()
        self.server.log_body(self.path, dict(self.headers), body)
        kind = self.route(body)
        messages = self.conversation(body) if kind == "main" else []
        record: dict[str, Any] = {
            "method": "POST", "path": self.path, "kind": kind, "api": self.api, "model": self.model_of(body),
            "stream": self.is_stream(body), "messages": len(messages), "tools": len(self.tool_names(body)),
            "session_id": self.session_id(), "episode": None, "step": None, "retry": False, "time": time.time(),
        }
        if kind == "other":
            record["status"] = 404
            self.server.record(record)
            self._send_json(404, {"error": {"message": f"no such route: {self.path}", "code": 404}})
            return
        if kind == "count_tokens":
            record["status"] = 200
            self.server.record(record)
            self.count_tokens(body)
            return
        if kind == "aux":
            record["status"] = 200
            record["system"] = self.system_text(body)[:200]
            self.server.record(record)
            self.answer_aux(body)
            return
        fingerprint = hashlib.sha256(json.dumps([record["session_id"], messages], sort_keys=True).encode()).hexdigest()
        with self.server.state.lock:
            episode, index, step, retry = self.server.state.pick(fingerprint, current_turn(messages))
        record.update(episode=episode, step=index, retry=retry, tool_results=self.tool_results(messages))
        if step is None:
            record["exhausted"] = True
            where = f"the scenario has no episode {episode}" if episode >= len(self.server.state.scenario) \
                else f"episode {episode} has no step {index}"
            step = {"text": f"agent_servers: {where}", "delay": 0.0}
        if step.get("delay"):
            time.sleep(float(step["delay"]))
        if "error" in step:
            err = step["error"]
            record["status"] = int(err["status"])
            self.server.record(record)
            headers: dict[str, str] = {}
            if err.get("retry_after") is not None:
                # both spellings: opencode (via the AI SDK) prefers the milliseconds one
                headers["retry-after"] = str(err["retry_after"])
                headers["retry-after-ms"] = str(int(float(err["retry_after"]) * 1000))
            if err.get("headers"):
                headers.update({str(k): str(v) for k, v in err["headers"].items()})
            self.send_error_step(err, headers)
            return
        record["status"] = 200
        record["reply"] = "tool_use" if "tool_use" in step else "text"
        self.server.record(record)
        self.answer(step, body)

    def model_of(self, body: dict[str, Any]) -> str | None:
        model = body.get("model")
        return str(model) if model else None

    def is_stream(self, body: dict[str, Any]) -> bool:
        return bool(body.get("stream"))

    def tool_names(self, body: dict[str, Any]) -> list[str]:
        return []

    def system_text(self, body: dict[str, Any]) -> str:
        return ""

    def is_aux_system(self, body: dict[str, Any]) -> bool:
        head = self.system_text(body)[:400].lower()
        return any(marker in head for marker in AUX_SYSTEM_MARKERS)

    @staticmethod
    def tool_results(messages: list[Message]) -> list[dict[str, Any]]:
        if not messages:
            return []
        last = messages[-1]
        content = last.get("content")
        blocks = content if isinstance(content, list) else []
        return [{"tool_use_id": b.get("tool_use_id"), "is_error": bool(b.get("is_error")),
                 "content": str(b.get("content", ""))[:4000]} for b in blocks if b.get("type") == "tool_result"]

    def start_sse(self) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("connection", "close")
        self.end_headers()
        self.close_connection = True

    def sse(self, data: Any, event: str | None = None) -> None:
        head = f"event: {event}\n" if event else ""
        self.wfile.write(f"{head}data: {json.dumps(data)}\n\n".encode())
        self.wfile.flush()

    def openai_error(self, err: dict[str, Any], headers: dict[str, str]) -> None:
        status = int(err["status"])
        self._send_json(status, {"error": {
            "message": err.get("message", "scripted error"),
            "type": err.get("type", OPENAI_ERROR_TYPES.get(status, "api_error")),
            "param": None, "code": err.get("code", OPENAI_ERROR_CODES.get(status))}}, headers)


# --- OpenAI Chat Completions ---------------------------------------------------------------------------------------


class ChatHandler(ApiHandler):
    """``POST /v1/chat/completions``, streamed as ``chat.completion.chunk`` events when asked to."""

    api = "chat"

    def do_GET(self) -> None:
        if self.path.split("?", 1)[0].endswith("/models"):
            self.server.record({"method": "GET", "path": self.path, "kind": "other", "status": 200})
            self._send_json(200, {"object": "list", "data": [
                {"id": "scripted-model", "object": "model", "created": 0, "owned_by": "scripted"}]})
            return
        super().do_GET()

    def route(self, body: dict[str, Any]) -> str:
        if not self.path.split("?", 1)[0].endswith("/chat/completions"):
            return "other"
        return "aux" if not body.get("tools") and self.is_aux_system(body) else "main"

    def tool_names(self, body: dict[str, Any]) -> list[str]:
        return [str((t.get("function") or {}).get("name")) for t in body.get("tools") or [] if isinstance(t, dict)]

    def system_text(self, body: dict[str, Any]) -> str:
        for message in body.get("messages") or []:
            if isinstance(message, dict) and message.get("role") in ("system", "developer"):
                return _text_of(message.get("content"))
        return ""

    def conversation(self, body: dict[str, Any]) -> list[Message]:
        out: list[Message] = []
        for message in body.get("messages") or []:
            if not isinstance(message, dict):
                continue
            role = message.get("role")
            if role == "assistant":
                blocks: list[dict[str, Any]] = []
                if _text_of(message.get("content")):
                    blocks.append({"type": "text", "text": _text_of(message.get("content"))})
                for call in message.get("tool_calls") or []:
                    fn = call.get("function") or {}
                    blocks.append({"type": "tool_use", "id": call.get("id"), "name": fn.get("name"),
                                   "input": fn.get("arguments")})
                out.append({"role": "assistant", "content": blocks})
            elif role == "tool":
                result = {"type": "tool_result", "tool_use_id": message.get("tool_call_id"),
                          "content": _text_of(message.get("content"))}
                out.append({"role": "user", "content": [result]})
            elif role == "user":
                out.append({"role": "user", "content": [{"type": "text", "text": _text_of(message.get("content"))}]})
        return out

    def shell_call(self, body: dict[str, Any], command: str) -> tuple[str, dict[str, Any]]:
        """The CLI's shell tool and arguments: opencode's ``bash`` wants a description too, pi's only the command."""
        for tool in body.get("tools") or []:
            fn = tool.get("function") or {}
            if fn.get("name") in ("bash", "shell", "run_shell_command", "exec_command"):
                props = (fn.get("parameters") or {}).get("properties") or {}
                key = "cmd" if "cmd" in props and "command" not in props else "command"
                args: dict[str, Any] = {key: command}
                if "description" in props:
                    args["description"] = "Run the scripted command"
                return str(fn["name"]), args
        return "bash", {"command": command}

    def usage(self, step: Step) -> dict[str, Any]:
        u = usage_of(step)
        usage: dict[str, Any] = {"prompt_tokens": u["input_tokens"], "completion_tokens": u["output_tokens"],
                                 "total_tokens": u["input_tokens"] + u["output_tokens"]}
        if u.get("cache_read_input_tokens"):
            usage["prompt_tokens_details"] = {"cached_tokens": u["cache_read_input_tokens"]}
        return usage

    def answer(self, step: Step, body: dict[str, Any]) -> None:
        text = str(step["text"]) if step.get("text") is not None else None
        calls = []
        if step.get("tool_use"):
            name, args = (self.shell_call(body, step["input"]["command"]) if step["tool_use"] == SHELL
                          else (str(step["tool_use"]), dict(step.get("input") or {})))
            calls.append({"id": "call_" + uuid.uuid4().hex[:24], "type": "function",
                          "function": {"name": name, "arguments": json.dumps(args)}})
        finish = "tool_calls" if calls else "stop"
        self.reply(body, text, calls, finish, self.usage(step))

    def answer_aux(self, body: dict[str, Any]) -> None:
        self.reply(body, self.server.aux_text, [], "stop",
                   {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2})

    def reply(self, body: dict[str, Any], text: str | None, calls: list[dict[str, Any]], finish: str,
              usage: dict[str, Any]) -> None:
        cid = "chatcmpl-" + uuid.uuid4().hex[:24]
        model = self.model_of(body) or "scripted-model"
        created = int(time.time())
        if not body.get("stream"):
            message: dict[str, Any] = {"role": "assistant", "content": text}
            if calls:
                message["tool_calls"] = calls
            self._send_json(200, {"id": cid, "object": "chat.completion", "created": created, "model": model,
                                  "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                                  "usage": usage})
            return

        def chunk(delta: dict[str, Any], reason: str | None = None, **extra: Any) -> dict[str, Any]:
            return {"id": cid, "object": "chat.completion.chunk", "created": created, "model": model,
                    "choices": [{"index": 0, "delta": delta, "finish_reason": reason}], **extra}

        self.start_sse()
        self.sse(chunk({"role": "assistant", "content": ""}))
        if text:
            self.sse(chunk({"content": text}))
        for i, call in enumerate(calls):
            self.sse(chunk({"tool_calls": [{"index": i, **call}]}))
        include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
        if include_usage:
            self.sse(chunk({}, finish))
            self.sse({"id": cid, "object": "chat.completion.chunk", "created": created, "model": model,
                      "choices": [], "usage": usage})
        else:
            # without stream_options, put usage on the last chunk (as many compatible servers do) so clients that
            # look for it still find it
            self.sse(chunk({}, finish, usage=usage))
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()

    def send_error_step(self, err: dict[str, Any], headers: dict[str, str]) -> None:
        self.openai_error(err, headers)


# --- OpenAI Responses API ------------------------------------------------------------------------------------------


class ResponsesHandler(ApiHandler):
    """``POST /v1/responses`` over SSE, as the Codex CLI speaks it."""

    api = "responses"

    def session_id(self) -> str | None:
        return self.headers.get("session-id") or self.headers.get("session_id")

    def route(self, body: dict[str, Any]) -> str:
        route = self.path.split("?", 1)[0]
        if route.endswith("/responses"):
            return "main"
        if "/responses/" in route:  # compaction and other side calls
            return "aux"
        return "other"

    def _all_tools(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        tools = [t for t in body.get("tools") or [] if isinstance(t, dict)]
        for item in body.get("input") or []:
            if isinstance(item, dict) and item.get("type") == "additional_tools":
                tools += [t for t in item.get("tools") or [] if isinstance(t, dict)]
        flat: list[dict[str, Any]] = []
        for tool in tools:
            flat.append(tool)
            flat += [t for t in tool.get("tools") or [] if isinstance(t, dict)]  # namespaces
        return flat

    def tool_names(self, body: dict[str, Any]) -> list[str]:
        return [str(t.get("name") or t.get("type")) for t in self._all_tools(body) if t.get("type") != "namespace"]

    def system_text(self, body: dict[str, Any]) -> str:
        return str(body.get("instructions") or "")

    def conversation(self, body: dict[str, Any]) -> list[Message]:
        out: list[Message] = []
        items = body.get("input")
        if isinstance(items, str):
            items = [{"type": "message", "role": "user", "content": items}]
        for item in items or []:
            if not isinstance(item, dict):
                continue
            kind = item.get("type", "message")
            if kind == "message" and item.get("role") in ("user", "assistant"):
                out.append({"role": item["role"], "content": [{"type": "text", "text": _text_of(item.get("content"))}]})
            elif kind in ("function_call", "custom_tool_call", "local_shell_call"):
                out.append({"role": "assistant", "content": [{"type": "tool_use", "id": item.get("call_id"),
                                                              "name": item.get("name"),
                                                              "input": item.get("arguments") or item.get("input")}]})
            elif kind in ("function_call_output", "custom_tool_call_output", "local_shell_call_output"):
                out.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": item.get("call_id"),
                                                         "content": _text_of(item.get("output"))}]})
        return out

    def shell_item(self, body: dict[str, Any], command: str, call_id: str) -> dict[str, Any]:
        """Codex's shell tool differs by model: ``exec_command`` (``cmd``), ``shell_command`` (a string), ``shell``
        (an argv), or, for models in code mode, only a JavaScript ``exec`` tool that calls ``tools.exec_command``."""
        tools = {str(t.get("name")): t for t in self._all_tools(body) if t.get("name")}
        item_id = "fc_" + uuid.uuid4().hex[:24]
        for name, args in (("exec_command", {"cmd": command}), ("shell_command", {"command": command}),
                           ("shell", {"command": ["bash", "-lc", command]})):
            if name in tools and tools[name].get("type") == "function":
                return {"type": "function_call", "id": item_id, "call_id": call_id, "name": name,
                        "arguments": json.dumps(args), "status": "completed"}
        if "exec" in tools and tools["exec"].get("type") == "custom":
            script = (f"const r = await tools.exec_command({{cmd: {json.dumps(command)}}});\n"
                      "text(typeof r === 'string' ? r : JSON.stringify(r));\n")
            return {"type": "custom_tool_call", "id": "ctc_" + uuid.uuid4().hex[:24], "call_id": call_id,
                    "name": "exec", "input": script, "status": "completed"}
        return {"type": "function_call", "id": item_id, "call_id": call_id, "name": "shell",
                "arguments": json.dumps({"command": ["bash", "-lc", command]}), "status": "completed"}

    def usage(self, step: Step) -> dict[str, Any]:
        u = usage_of(step)
        return {"input_tokens": u["input_tokens"],
                "input_tokens_details": {"cached_tokens": int(u.get("cache_read_input_tokens", 0))},
                "output_tokens": u["output_tokens"], "output_tokens_details": {"reasoning_tokens": 0},
                "total_tokens": u["input_tokens"] + u["output_tokens"]}

    def answer(self, step: Step, body: dict[str, Any]) -> None:
        items: list[dict[str, Any]] = []
        if step.get("text") is not None:
            items.append({"type": "message", "id": "msg_" + uuid.uuid4().hex[:24], "role": "assistant",
                          "status": "completed",
                          "content": [{"type": "output_text", "text": str(step["text"]), "annotations": []}]})
        if step.get("tool_use"):
            call_id = "call_" + uuid.uuid4().hex[:24]
            if step["tool_use"] == SHELL:
                items.append(self.shell_item(body, str(step["input"]["command"]), call_id))
            else:
                items.append({"type": "function_call", "id": "fc_" + uuid.uuid4().hex[:24], "call_id": call_id,
                              "name": str(step["tool_use"]), "arguments": json.dumps(step.get("input") or {}),
                              "status": "completed"})
        self.reply(body, items, self.usage(step))

    def answer_aux(self, body: dict[str, Any]) -> None:
        item = {"type": "message", "id": "msg_" + uuid.uuid4().hex[:24], "role": "assistant", "status": "completed",
                "content": [{"type": "output_text", "text": self.server.aux_text, "annotations": []}]}
        self.reply(body, [item], self.usage({"usage": {"input_tokens": 1, "output_tokens": 1}}))

    def reply(self, body: dict[str, Any], items: list[dict[str, Any]], usage: dict[str, Any]) -> None:
        rid = "resp_" + uuid.uuid4().hex[:24]
        model = self.model_of(body) or "scripted-model"
        base = {"id": rid, "object": "response", "created_at": int(time.time()), "model": model}
        done = {**base, "status": "completed", "output": items, "usage": usage}
        if not body.get("stream"):
            self._send_json(200, done)
            return
        self.start_sse()
        seq = 0

        def event(name: str, **data: Any) -> None:
            nonlocal seq
            self.sse({"type": name, "sequence_number": seq, **data}, event=name)
            seq += 1

        event("response.created", response={**base, "status": "in_progress", "output": []})
        event("response.in_progress", response={**base, "status": "in_progress", "output": []})
        for index, item in enumerate(items):
            if item["type"] == "message":
                text = item["content"][0]["text"]
                event("response.output_item.added", output_index=index,
                      item={**item, "status": "in_progress", "content": []})
                event("response.content_part.added", item_id=item["id"], output_index=index, content_index=0,
                      part={"type": "output_text", "text": "", "annotations": []})
                event("response.output_text.delta", item_id=item["id"], output_index=index, content_index=0,
                      delta=text)
                event("response.output_text.done", item_id=item["id"], output_index=index, content_index=0,
                      text=text)
                event("response.content_part.done", item_id=item["id"], output_index=index, content_index=0,
                      part=item["content"][0])
            else:
                event("response.output_item.added", output_index=index, item=item)
            event("response.output_item.done", output_index=index, item=item)
        event("response.completed", response=done)

    def send_error_step(self, err: dict[str, Any], headers: dict[str, str]) -> None:
        self.openai_error(err, headers)


# --- Gemini API ------------------------------------------------------------------------------------------------------


class GeminiHandler(ApiHandler):
    """``POST /v1beta/models/MODEL:streamGenerateContent?alt=sse`` (the agent's turns), ``:generateContent`` (the Gemini
    CLI's side queries: routing, next-speaker and loop checks, which get a JSON answer fitting their schema) and
    ``:countTokens``."""

    api = "gemini"

    def _method(self) -> str:
        route = self.path.split("?", 1)[0]
        return route.rsplit(":", 1)[1] if ":" in route.rsplit("/", 1)[-1] else ""

    def model_of(self, body: dict[str, Any]) -> str | None:
        route = self.path.split("?", 1)[0]
        name = route.rsplit("/", 1)[-1]
        return name.split(":", 1)[0] or None

    def is_stream(self, body: dict[str, Any]) -> bool:
        return self._method() == "streamGenerateContent"

    def route(self, body: dict[str, Any]) -> str:
        method = self._method()
        if method == "countTokens":
            return "count_tokens"
        if method == "generateContent":
            return "aux"
        if method == "streamGenerateContent":
            return "aux" if not body.get("tools") and self.is_aux_system(body) else "main"
        return "other"

    def count_tokens(self, body: dict[str, Any]) -> None:
        self._send_json(200, {"totalTokens": max(1, len(json.dumps(body)) // 4)})

    def tool_names(self, body: dict[str, Any]) -> list[str]:
        return [str(f.get("name")) for t in body.get("tools") or [] if isinstance(t, dict)
                for f in t.get("functionDeclarations") or [] if isinstance(f, dict)]

    def system_text(self, body: dict[str, Any]) -> str:
        system = body.get("systemInstruction")
        if isinstance(system, dict):
            return _text_of(system.get("parts"))
        return _text_of(system)

    def conversation(self, body: dict[str, Any]) -> list[Message]:
        out: list[Message] = []
        for content in body.get("contents") or []:
            if not isinstance(content, dict):
                continue
            blocks: list[dict[str, Any]] = []
            for part in content.get("parts") or []:
                if not isinstance(part, dict) or part.get("thought"):
                    continue
                if "functionCall" in part:
                    call = part["functionCall"] or {}
                    blocks.append({"type": "tool_use", "id": call.get("id"), "name": call.get("name"),
                                   "input": call.get("args")})
                elif "functionResponse" in part:
                    resp = part["functionResponse"] or {}
                    blocks.append({"type": "tool_result", "tool_use_id": resp.get("id"),
                                   "content": json.dumps(resp.get("response"))})
                elif "text" in part:
                    blocks.append({"type": "text", "text": str(part["text"])})
            out.append({"role": "assistant" if content.get("role") == "model" else "user", "content": blocks})
        return out

    def shell_part(self, body: dict[str, Any], command: str) -> dict[str, Any]:
        args: dict[str, Any] = {"command": command}
        for tool in body.get("tools") or []:
            for fn in tool.get("functionDeclarations") or []:
                if fn.get("name") == "run_shell_command":
                    schema = fn.get("parametersJsonSchema") or fn.get("parameters") or {}
                    if "description" in (schema.get("properties") or {}):
                        args["description"] = "Run the scripted command"
        return {"functionCall": {"name": "run_shell_command", "args": args}}

    def usage(self, step: Step) -> dict[str, Any]:
        u = usage_of(step)
        meta = {"promptTokenCount": u["input_tokens"], "candidatesTokenCount": u["output_tokens"],
                "totalTokenCount": u["input_tokens"] + u["output_tokens"]}
        if u.get("cache_read_input_tokens"):
            meta["cachedContentTokenCount"] = u["cache_read_input_tokens"]
        return meta

    def answer(self, step: Step, body: dict[str, Any]) -> None:
        parts: list[dict[str, Any]] = []
        if step.get("text") is not None:
            parts.append({"text": str(step["text"])})
        if step.get("tool_use"):
            if step["tool_use"] == SHELL:
                parts.append(self.shell_part(body, str(step["input"]["command"])))
            else:
                parts.append({"functionCall": {"name": str(step["tool_use"]), "args": step.get("input") or {}}})
        self.reply(body, parts, self.usage(step))

    def answer_aux(self, body: dict[str, Any]) -> None:
        config = body.get("generationConfig") or {}
        schema = config.get("responseJsonSchema") or config.get("responseSchema")
        wants_json = schema is not None or config.get("responseMimeType") == "application/json"
        text = json.dumps(json_from_schema(schema)) if wants_json else self.server.aux_text
        self.reply(body, [{"text": text}], {"promptTokenCount": 1, "candidatesTokenCount": 1, "totalTokenCount": 2})

    def reply(self, body: dict[str, Any], parts: list[dict[str, Any]], usage: dict[str, Any]) -> None:
        payload = {"candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
                   "usageMetadata": usage, "modelVersion": self.model_of(body) or "scripted-model",
                   "responseId": uuid.uuid4().hex[:20]}
        if not self.is_stream(body):
            self._send_json(200, payload)
            return
        self.start_sse()
        self.wfile.write(f"data: {json.dumps(payload)}\r\n\r\n".encode())
        self.wfile.flush()

    def send_error_step(self, err: dict[str, Any], headers: dict[str, str]) -> None:
        status = int(err["status"])
        self._send_json(status, {"error": {"code": status, "message": err.get("message", "scripted error"),
                                           "status": err.get("type", GOOGLE_STATUSES.get(status, "UNKNOWN"))}},
                        headers)


# --- servers ---------------------------------------------------------------------------------------------------------


class AgentServer(ModelServer):
    """A ModelServer (same scenario cursor, records, body log, context manager) speaking another API."""

    handler: type[ApiHandler] = ApiHandler
    api_path = ""  # what the CLI's base URL needs after http://127.0.0.1:PORT

    def __init__(self, scenario: Scenario, *, port: int = 0, body_log: str | Path | None = None,
                 verbose: bool = False, aux_text: str = "OK") -> None:
        super().__init__(expand_shell_steps(scenario), port=port, body_log=body_log, verbose=verbose,
                         aux_text=aux_text)
        self._server.RequestHandlerClass = self.handler

    @property
    def base_url(self) -> str:
        return self.url + self.api_path

    def start(self) -> Self:
        super().start()
        return self

    def __enter__(self) -> Self:
        return self.start()


class ChatServer(AgentServer):
    handler = ChatHandler
    api_path = "/v1"


class ResponsesServer(AgentServer):
    handler = ResponsesHandler
    api_path = "/v1"


class GeminiServer(AgentServer):
    handler = GeminiHandler


SERVERS: dict[str, type[AgentServer]] = {"chat": ChatServer, "responses": ResponsesServer, "gemini": GeminiServer}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Scripted model server for the Codex, Gemini, opencode, aider and "
                                                 "pi CLIs.")
    parser.add_argument("--api", choices=sorted(SERVERS), required=True)
    parser.add_argument("--scenario", required=True, help="JSON file: a list of episodes, each a list of steps")
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (0: any free port)")
    parser.add_argument("--log", help="append every full request body to this JSONL file")
    parser.add_argument("--dump", help="on exit, write the request records to this JSON file")
    parser.add_argument("--quiet", action="store_true", help="do not print one line per request")
    args = parser.parse_args(argv)
    scenario = json.loads(Path(args.scenario).read_text(encoding="utf-8"))
    server = SERVERS[args.api](scenario, port=args.port, body_log=args.log, verbose=not args.quiet)
    stop = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: stop.set())
    with server:
        print(f"BASE_URL={server.base_url}", flush=True)
        stop.wait()
    if args.dump:
        server.dump(args.dump)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
