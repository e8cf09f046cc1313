"""`aider`: aider with the prompt in a message file; plain text on stdout (the status block is read from it), stderr
empty even on errors.

Flags: `--yes --no-pretty --no-stream` (with streaming aider counts tokens itself instead of taking the API's),
`--no-gitignore` (else it appends `.aider*` to .gitignore and leaves that uncommitted), `--map-tokens 0` (no
`.aider.tags.cache.v4/` in the repository), and its history files under `.dun/cache/aider/`, which dun ignores: the
work tree stays clean. It edits the files in its chat and commits them itself; it never runs shell commands under
`--yes`. The mission file is added to the chat; aider asks (and `--yes` answers) for others the model names.

Cost: its `Tokens: 1.2k sent, 100 received. Cost: $0.0032 message, $0.0032 session.` line (the last session figure
is the call's total); without a price for the model it prints tokens only, priced by the configured rates. API
errors exit 0, as `litellm.RateLimitError: ...` lines on stdout: read from there."""

from __future__ import annotations

import io
import re
from typing import Any, BinaryIO

from dun.agents.base import AgentAdapter, AgentRequest, Invocation, binary, project_env
from dun.agents.events import add_tokens
from dun.answer.transcript import ParseResult, parse_stream
from dun.engine.hookspecs import hookimpl
from dun.store.layout import CACHE

MISSION = "MISSION.md"
MAX_LINE = 64 << 10
_TOKENS = re.compile(r"^Tokens: (?P<parts>.+?)\.(?: Cost: \$(?P<message>[\d.]+) message, \$(?P<session>[\d.]+) "
                     r"session\.)?\s*$")
_PART = re.compile(r"([\d.]+)([kKmM]?) (sent|received|cache write|cache hit)")
_ERROR = re.compile(r"^litellm\.(\w+Error): (.*)$")
_STATUS = re.compile(r"\b(?:status(?: code)?:?|Error code:) ?([1-5]\d\d)\b")


def build(req: AgentRequest) -> Invocation:
    cfg = req.config
    history = (req.state_dir or req.root / CACHE) / "aider"
    history.mkdir(parents=True, exist_ok=True)
    argv = [*binary(cfg, "aider"), "--message-file", str(req.prompt_file), "--yes", "--no-pretty", "--no-stream",
            "--no-gitignore", "--map-tokens", "0", "--no-check-update", "--no-analytics", "--no-show-release-notes",
            "--chat-history-file", str(history / "chat.history.md"),
            "--input-history-file", str(history / "input.history")]
    if cfg.model:
        argv += ["--model", cfg.model]
    if req.read_only:
        argv += ["--dry-run", "--no-auto-commits"]
    argv += list(cfg.extra_args)
    if not req.read_only and (req.root / MISSION).is_file():
        argv.append(MISSION)
    return Invocation(argv=argv, env=project_env(req), redact=[req.prompt])


def tokens(text: str) -> int:
    number, scale = float(text[:-1] if text[-1:].isalpha() else text), text[-1:].lower()
    return round(number * {"k": 1e3, "m": 1e6}.get(scale, 1))


class Lines(io.RawIOBase):
    """Passes a stream through unchanged and hands each complete line (up to MAX_LINE) to `on_line`."""

    def __init__(self, stream: BinaryIO, on_line: Any) -> None:
        self.stream, self.on_line = stream, on_line
        self.partial = b""

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        view = memoryview(buffer).cast("B")
        data = self.stream.read(len(view))
        view[: len(data)] = data
        *complete, rest = (self.partial + data).split(b"\n") if data else [*self.partial.split(b"\n"), b""]
        for line in complete:
            if len(line) <= MAX_LINE:
                self.on_line(line.decode("utf-8", "replace").rstrip("\r"))
        self.partial = rest if len(rest) <= MAX_LINE else b""
        return len(data)


class Facts:
    def __init__(self) -> None:
        self.agent: dict[str, object] = {}

    def line(self, text: str) -> None:
        a = self.agent
        found = _TOKENS.match(text)
        if found:
            parts = {kind: tokens(n + scale) for n, scale, kind in _PART.findall(found["parts"])}
            add_tokens(a, parts.get("sent", 0) + parts.get("cache write", 0), parts.get("cache hit", 0),
                       parts.get("received", 0))
            if found["session"]:
                a["cost_usd"] = float(found["session"])  # the session so far: the last one is the call's total
            return
        error = _ERROR.match(text)
        if error:
            a["is_error"] = True
            a["error"] = text[:1000]
            status = _STATUS.search(text)
            if status:
                a["api_error_status"] = int(status[1])
            elif error[1] in ("RateLimitError", "AuthenticationError"):
                a["api_error_status"] = 429 if error[1] == "RateLimitError" else 401


def parse(stream: BinaryIO) -> ParseResult:
    facts = Facts()
    result = parse_stream(io.BufferedReader(Lines(stream, facts.line)))
    result.agent.update(facts.agent)
    if result.agent.get("is_error") and result.block is not None:
        del result.agent["is_error"]  # an error it recovered from: the answer came after it
    return result


@hookimpl
def dun_agents() -> list[AgentAdapter]:
    return [AgentAdapter("aider", "aider --message-file --yes --no-stream", build, parse=parse)]
