"""A scripted loopback model server speaking enough of the Anthropic Messages API to drive the real Claude Code CLI.

Standard library only. It plays a *scenario*: a list of episodes, each a list of steps. A new conversation (a main
request whose messages hold only the first user prompt: no assistant turn, no tool result) begins the next episode and
gets its first step; each further main request of that conversation gets the next step. A retried request (same
session and same messages as the previous main request) replays the step it had, so retries neither consume steps nor
start episodes. A later prompt in the same session (``--continue``/``--resume``) gets the episode's next step if one
is scripted, and otherwise starts the next episode.

Step schema (every step may also carry ``"usage": {"input_tokens": N, "output_tokens": M, ...}`` and
``"delay": seconds``, slept before answering):

    {"text": "final answer"}                                   -> text block, stop_reason end_turn
    {"tool_use": "Bash", "input": {"command": "...", "description": "..."}}
    {"tool_use": "Write", "input": {"file_path": "...", "content": "..."}}
    {"tool_use": "Edit", "input": {"file_path": "...", "old_string": "...", "new_string": "..."}}
                                                               -> tool_use block, stop_reason tool_use
                                                                  (a "text" next to "tool_use" is sent before it)
    {"error": {"status": 429, "type": "rate_limit_error", "message": "...", "retry_after": 1}, "times": N}
                                                               -> HTTP error; served to the request and all its
                                                                  retries, or only N times when "times" is given
                                                                  (the next retry then gets the next step)
    {"delay": seconds}                                         -> alone: adds its delay to the following step

Requests that are not part of the main agent conversation (non-streaming calls, ``max_tokens`` <= 1 probes, calls
without tools such as title or summary generation) are *auxiliary*: they get a minimal answer and consume no step.

Run by hand: ``python tests/e2e/model_server.py --scenario scenario.json --port 8123 [--log requests.jsonl]``.
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
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import Any

Step = dict[str, Any]
Scenario = list[list[Step]]

DEFAULT_USAGE = {"input_tokens": 10, "output_tokens": 5}
STEP_KINDS = ("text", "tool_use", "error")
# How the system prompts of the CLI's side queries begin (session titles and names, conversation compaction,
# command-prefix extraction, web search), as found in the 2.1.197 binary. Such requests consume no step.
AUX_SYSTEM_PREFIXES = (
    "generate a ", "you are a helpful ai assistant tasked with summarizing", "your task is to process",
    "you are an assistant for performing a web search", "summarize", "summarise", "extract",
)
BILLING_HEADER = "x-anthropic-billing-header"


class ScenarioError(ValueError):
    """The scenario does not follow the step schema."""


def normalise_scenario(scenario: Scenario) -> Scenario:
    """Validate the scenario and fold standalone ``{"delay": s}`` steps into the step after them."""
    if not isinstance(scenario, list):
        raise ScenarioError("a scenario is a list of episodes")
    episodes: Scenario = []
    for e, episode in enumerate(scenario):
        if not isinstance(episode, list):
            raise ScenarioError(f"episode {e}: an episode is a list of steps")
        steps: list[Step] = []
        pending_delay = 0.0
        for s, raw in enumerate(episode):
            where = f"episode {e} step {s}"
            if not isinstance(raw, dict):
                raise ScenarioError(f"{where}: a step is an object")
            step = copy.deepcopy(raw)
            kinds = [k for k in STEP_KINDS if k in step]
            if not kinds:
                if set(step) == {"delay"}:
                    pending_delay += float(step["delay"])
                    continue
                raise ScenarioError(f"{where}: needs one of {', '.join(STEP_KINDS)} (or only 'delay')")
            if "error" in step and len(kinds) > 1:
                raise ScenarioError(f"{where}: an error step cannot also send text or a tool_use")
            if "tool_use" in step and not isinstance(step.get("input", {}), dict):
                raise ScenarioError(f"{where}: 'input' must be an object")
            if "error" in step:
                err = step["error"]
                if not isinstance(err, dict) or not isinstance(err.get("status"), int):
                    raise ScenarioError(f"{where}: 'error' needs an integer 'status'")
            unknown = set(step) - {"text", "tool_use", "input", "error", "times", "delay", "usage"}
            if unknown:
                raise ScenarioError(f"{where}: unknown keys {sorted(unknown)}")
            step["delay"] = float(step.get("delay", 0)) + pending_delay
            pending_delay = 0.0
            steps.append(step)
        if pending_delay:
            raise ScenarioError(f"episode {e}: a trailing 'delay' step has no step after it")
        episodes.append(steps)
    return episodes


def _system_text(body: dict[str, Any]) -> str:
    """The system prompt as text, without the billing-header block the CLI puts first."""
    system = body.get("system")
    if isinstance(system, str):
        return system
    if isinstance(system, list):
        texts = [str(b.get("text", "")) for b in system if isinstance(b, dict)]
        return "\n".join(t for t in texts if not t.startswith(BILLING_HEADER))
    return ""


def _blocks(message: dict[str, Any]) -> list[dict[str, Any]]:
    content = message.get("content")
    if isinstance(content, list):
        return [b for b in content if isinstance(b, dict)]
    return []


def is_first_turn(messages: list[dict[str, Any]]) -> bool:
    """True when the conversation holds no assistant turn and no tool result yet (the CLI also sends system-role
    messages among them, which do not count)."""
    for message in messages:
        if message.get("role") == "assistant":
            return False
        if any(b.get("type") == "tool_result" for b in _blocks(message)):
            return False
    return True


def ends_with_prompt(messages: list[dict[str, Any]]) -> bool:
    """True when the last user-or-assistant message is a user prompt rather than a tool result."""
    for message in reversed(messages):
        if message.get("role") == "system":
            continue
        return message.get("role") == "user" and not any(b.get("type") == "tool_result" for b in _blocks(message))
    return False


def last_tool_results(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The tool results carried by the last user message, flattened to text."""
    for message in reversed(messages):
        if message.get("role") != "user":
            continue
        results = []
        for block in _blocks(message):
            if block.get("type") != "tool_result":
                continue
            content = block.get("content")
            if isinstance(content, list):
                content = "".join(str(c.get("text", "")) for c in content if isinstance(c, dict))
            results.append({"tool_use_id": block.get("tool_use_id"), "is_error": bool(block.get("is_error")),
                            "content": content if isinstance(content, str) else json.dumps(content)})
        return results
    return []


def classify(path: str, body: dict[str, Any]) -> str:
    """``main`` for the agent conversation, ``aux`` for side calls, ``count_tokens`` for token counting."""
    route = path.split("?", 1)[0]
    if route.endswith("/count_tokens"):
        return "count_tokens"
    if not route.endswith("/v1/messages"):
        return "other"
    if not body.get("stream") or int(body.get("max_tokens") or 0) <= 1 or not body.get("tools"):
        return "aux"
    if _system_text(body).strip().lower().startswith(AUX_SYSTEM_PREFIXES):
        return "aux"
    return "main"


class _State:
    """The scenario cursor, shared by the handler threads under one lock."""

    def __init__(self, scenario: Scenario) -> None:
        self.scenario = normalise_scenario(scenario)
        self.lock = threading.Lock()
        self.requests: list[dict[str, Any]] = []
        self.episode = -1  # index of the current episode; -1 before the first conversation
        self.step = -1  # index of the step last served in the current episode
        self.last_fingerprint: str | None = None
        self.served_times = 0  # how often the current step has been served (for error steps with "times")

    def pick(self, fingerprint: str, messages: list[dict[str, Any]]) -> tuple[int, int, Step | None, bool]:
        """Choose the step for a main request: (episode, step index, step or None when none is left, is_retry)."""
        retry = fingerprint == self.last_fingerprint
        if retry:
            current = self._current()
            times = current.get("times") if current else None
            if current is not None and "error" in current and times is not None and self.served_times >= int(times):
                self._advance()  # the error has been served often enough: this retry gets the next step
        elif is_first_turn(messages) or self.episode < 0:
            self._new_episode()
        else:
            self._advance()
            if self._current() is None and ends_with_prompt(messages):
                # A later prompt in the same conversation (--continue, --resume) after the episode's last step.
                self._new_episode()
        self.last_fingerprint = fingerprint
        self.served_times += 1
        return self.episode, self.step, self._current(), retry

    def _new_episode(self) -> None:
        self.episode += 1
        self.step = 0
        self.served_times = 0

    def _advance(self) -> None:
        self.step += 1
        self.served_times = 0

    def _current(self) -> Step | None:
        if 0 <= self.episode < len(self.scenario) and 0 <= self.step < len(self.scenario[self.episode]):
            return self.scenario[self.episode][self.step]
        return None


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        if self.server.verbose:
            sys.stderr.write("model_server: " + (format % args) + "\n")

    # --- plumbing ---------------------------------------------------------------------------------------------------

    def _send_json(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.send_header("request-id", "req_" + uuid.uuid4().hex[:24])
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)

    def _read_body(self) -> dict[str, Any]:
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw or b"{}")
        except json.JSONDecodeError:
            return {}
        return body if isinstance(body, dict) else {}

    def do_GET(self) -> None:
        # The CLI warms its connection with ``GET /``; anything answering will do.
        self.server.record({"method": "GET", "path": self.path, "kind": "other", "status": 200})
        self._send_json(200, {"ok": True})

    def do_HEAD(self) -> None:
        self.server.record({"method": "HEAD", "path": self.path, "kind": "other", "status": 200})
        self.send_response(200)
        self.send_header("content-length", "0")
        self.end_headers()

    def do_POST(self) -> None:
        body = self._read_body()
        self.server.log_body(self.path, dict(self.headers), body)
        kind = classify(self.path, body)
        raw_messages = body.get("messages")
        messages: list[dict[str, Any]] = (
            [m for m in raw_messages if isinstance(m, dict)] if isinstance(raw_messages, list) else [])
        record: dict[str, Any] = {
            "method": "POST", "path": self.path, "kind": kind, "model": body.get("model"),
            "stream": bool(body.get("stream")), "max_tokens": body.get("max_tokens"),
            "messages": len(messages), "tools": len(body.get("tools") or []),
            "session_id": self.headers.get("x-claude-code-session-id"),
            "retry_count_header": self.headers.get("x-stainless-retry-count"),
            "episode": None, "step": None, "retry": False, "time": time.time(),
        }
        if kind == "count_tokens":
            tokens = max(1, len(json.dumps(messages)) // 4)
            record["status"] = 200
            self.server.record(record)
            self._send_json(200, {"input_tokens": tokens})
            return
        if kind == "other":
            record["status"] = 404
            self.server.record(record)
            self._send_json(404, {"type": "error", "error": {"type": "not_found_error", "message": "no such route"}})
            return
        if kind == "aux":
            record["status"] = 200
            record["system"] = _system_text(body)[:200]
            self.server.record(record)
            self._answer({"text": self.server.aux_text, "usage": {"input_tokens": 1, "output_tokens": 1}},
                         body, stream=bool(body.get("stream")))
            return

        fingerprint = hashlib.sha256(json.dumps([record["session_id"], messages], sort_keys=True).encode()).hexdigest()
        with self.server.state.lock:
            episode, index, step, retry = self.server.state.pick(fingerprint, messages)
        record.update(episode=episode, step=index, retry=retry, tool_results=last_tool_results(messages))
        if step is None:
            record["exhausted"] = True
            where = f"the scenario has no episode {episode}" if episode >= len(self.server.state.scenario) \
                else f"episode {episode} has no step {index}"
            step = {"text": f"model_server: {where}", "delay": 0.0}
        if step.get("delay"):
            time.sleep(float(step["delay"]))
        if "error" in step:
            err = step["error"]
            record["status"] = int(err["status"])
            self.server.record(record)
            headers = {}
            if err.get("retry_after") is not None:
                headers["retry-after"] = str(err["retry_after"])
            if err.get("headers"):
                headers.update({str(k): str(v) for k, v in err["headers"].items()})
            self._send_json(int(err["status"]), {"type": "error", "error": {
                "type": err.get("type", "api_error"), "message": err.get("message", "scripted error")}}, headers)
            return
        record["status"] = 200
        record["reply"] = "tool_use" if "tool_use" in step else "text"
        self.server.record(record)
        self._answer(step, body, stream=True)

    # --- answers ----------------------------------------------------------------------------------------------------

    def _content(self, step: Step) -> tuple[list[dict[str, Any]], str]:
        blocks: list[dict[str, Any]] = []
        if step.get("text") is not None:
            blocks.append({"type": "text", "text": str(step["text"])})
        if step.get("tool_use"):
            blocks.append({"type": "tool_use", "id": "toolu_" + uuid.uuid4().hex[:24], "name": str(step["tool_use"]),
                           "input": step.get("input", {})})
            return blocks, "tool_use"
        return blocks, "end_turn"

    def _answer(self, step: Step, body: dict[str, Any], stream: bool) -> None:
        blocks, stop_reason = self._content(step)
        usage = {**DEFAULT_USAGE, **(step.get("usage") or {})}
        model = body.get("model") or "claude-scripted"
        message_id = "msg_" + uuid.uuid4().hex[:24]
        if not stream:
            self._send_json(200, {"id": message_id, "type": "message", "role": "assistant", "model": model,
                                  "content": blocks, "stop_reason": stop_reason, "stop_sequence": None,
                                  "usage": usage})
            return
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("connection", "close")
        self.send_header("request-id", "req_" + uuid.uuid4().hex[:24])
        self.end_headers()
        self.close_connection = True
        start_usage = {k: v for k, v in usage.items() if k != "output_tokens"}
        start_usage["output_tokens"] = 1
        self._event("message_start", {"type": "message_start", "message": {
            "id": message_id, "type": "message", "role": "assistant", "model": model, "content": [],
            "stop_reason": None, "stop_sequence": None, "usage": start_usage}})
        for index, block in enumerate(blocks):
            if block["type"] == "text":
                self._event("content_block_start", {"type": "content_block_start", "index": index,
                                                    "content_block": {"type": "text", "text": ""}})
                self._event("content_block_delta", {"type": "content_block_delta", "index": index,
                                                    "delta": {"type": "text_delta", "text": block["text"]}})
            else:
                self._event("content_block_start", {"type": "content_block_start", "index": index, "content_block": {
                    "type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}})
                self._event("content_block_delta", {"type": "content_block_delta", "index": index, "delta": {
                    "type": "input_json_delta", "partial_json": json.dumps(block["input"])}})
            self._event("content_block_stop", {"type": "content_block_stop", "index": index})
        self._event("message_delta", {"type": "message_delta",
                                      "delta": {"stop_reason": stop_reason, "stop_sequence": None},
                                      "usage": {"output_tokens": usage["output_tokens"]}})
        self._event("message_stop", {"type": "message_stop"})

    def _event(self, name: str, data: dict[str, Any]) -> None:
        self.wfile.write(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())
        self.wfile.flush()


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, port: int, state: _State, body_log: Path | None, verbose: bool, aux_text: str) -> None:
        super().__init__(("127.0.0.1", port), _Handler)
        self.state = state
        self.body_log = body_log
        self.verbose = verbose
        self.aux_text = aux_text
        self._log_lock = threading.Lock()

    def record(self, entry: dict[str, Any]) -> None:
        with self.state.lock:
            self.state.requests.append(entry)
        if self.verbose:
            shown = {k: entry.get(k) for k in ("path", "kind", "model", "episode", "step", "retry", "status")}
            sys.stderr.write(f"model_server: {json.dumps(shown)}\n")

    def log_body(self, path: str, headers: dict[str, str], body: dict[str, Any]) -> None:
        if self.body_log is None:
            return
        headers = {k: ("<redacted>" if k.lower() in ("x-api-key", "authorization") else v) for k, v in headers.items()}
        line = json.dumps({"time": time.time(), "path": path, "headers": headers, "body": body})
        with self._log_lock, self.body_log.open("a", encoding="utf-8") as fh:
            fh.write(line + "\n")


class ModelServer:
    """Serve ``scenario`` on a free loopback port while the context is open.

    ``requests`` lists one record per request (path, kind main/aux/count_tokens/other, model, episode, step, retry,
    message count, status, the tool results the request carried). ``body_log`` appends every full request as JSONL.
    """

    def __init__(self, scenario: Scenario, *, port: int = 0, body_log: str | Path | None = None,
                 verbose: bool = False, aux_text: str = "OK") -> None:
        self._state = _State(scenario)
        self._server = _Server(port, self._state, Path(body_log) if body_log else None, verbose, aux_text)
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def requests(self) -> list[dict[str, Any]]:
        with self._state.lock:
            return [dict(r) for r in self._state.requests]

    @property
    def main_requests(self) -> list[dict[str, Any]]:
        return [r for r in self.requests if r["kind"] == "main"]

    @property
    def episode_count(self) -> int:
        """How many episodes (conversations) have started."""
        with self._state.lock:
            return self._state.episode + 1

    @property
    def exhausted(self) -> bool:
        """True when some main request found no scripted step left."""
        return any(r.get("exhausted") for r in self.requests)

    def to_json(self) -> str:
        return json.dumps(self.requests, indent=2)

    def dump(self, path: str | Path) -> None:
        Path(path).write_text(self.to_json() + "\n", encoding="utf-8")

    def start(self) -> ModelServer:
        if self._thread is None:
            self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,), name="model-server",
                                            daemon=True)
            self._thread.start()
        return self

    def stop(self) -> None:
        if self._thread is not None:
            self._server.shutdown()
            self._thread.join(timeout=5)
            self._thread = None
        self._server.server_close()

    def __enter__(self) -> ModelServer:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return iter(self.requests)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Scripted Anthropic Messages API server for Claude Code.")
    parser.add_argument("--scenario", required=True, help="JSON file: a list of episodes, each a list of steps")
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (0: any free port)")
    parser.add_argument("--log", help="append every full request body to this JSONL file")
    parser.add_argument("--dump", help="on exit, write the request records to this JSON file")
    parser.add_argument("--quiet", action="store_true", help="do not print one line per request")
    args = parser.parse_args(argv)
    scenario = json.loads(Path(args.scenario).read_text(encoding="utf-8"))
    server = ModelServer(scenario, port=args.port, body_log=args.log, verbose=not args.quiet)
    stop = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: stop.set())
    with server:
        print(f"ANTHROPIC_BASE_URL={server.url}", flush=True)
        stop.wait()
    if args.dump:
        server.dump(args.dump)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
