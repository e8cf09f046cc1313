#!/usr/bin/env python3
"""A scripted stand-in for the agent CLIs (Claude Code, Codex, Gemini, a plain text tool), for dun's tests.

Run as a program (stdlib only), it does the scripted work of one call in the current directory and prints its
answer in the shape the real CLI prints. Imported, it gives tests a small helper API (`write_scenario`, `calls`,
`block`, ...).

The scenario is a JSON file named by $DUN_FAKE_SCENARIO: `{"steps": [STEP, ...], ...options}` or a bare list of
steps. Call N (0, 1, 2, ...; counted in $DUN_FAKE_STATE, default `<scenario stem>.count` next to the scenario, bumped
under a lock at the start of each call) plays step N; calls past the end replay the last step marked
`"repeat": true`, else the last step. Every call appends one JSON line to `<stem>.calls.jsonl` (argv, cwd, pid,
pgid, stdin, environment, the prompt received) before it answers.

STEP keys (all optional):
  format          claude-json (default) | claude-stream-json | codex | gemini | text | auto (from argv)
  actions         work done before answering, in order, relative to the cwd:
                    {"write": path, "content": str}   {"append": path, "content": str}   {"delete": path}
                    {"tick": path, "box": substring}   {"untick": path, "box": substring}   (markdown checkboxes)
                    {"commit": message, "allow_empty": bool}   (git add -A; git commit as fake-agent)
                    {"run": shell command, "check": bool}   (output goes to stderr; check=true: failure is fatal)
                    {"sleep": seconds}   {"say": text}   (an assistant message streamed at that point)
                    {"wait_for": path, "timeout": seconds (default 30)}   (until the test creates the file: a test
                     steps the agent through what a watcher must see; a timeout is a scenario error)
  status          dict of status block fields (bools become true/false, None values are left out), a raw string
                  placed verbatim, or null/absent for no block
  text            prose before the block;  messages: earlier assistant messages (stream formats, text)
  cost_usd        Claude's total_cost_usd;  usage: token counts (input_tokens, output_tokens, cached_input_tokens)
  session_id, model, num_turns
  error           {"kind": rate_limit | usage_limit | auth | max_turns | max_budget | crash | permission_denied,
                   "message": str, "api_error_status": int|null, "tools": [..], "input": {..}, "exit": int,
                   "stderr": str}   (crash: no stdout at all, only `stderr` and `exit`, default 1)
  rate_limit_event  rate_limit_info dict for one stream-json rate_limit_event
  hang            seconds (true: an hour) to sleep after the actions, before answering
  ignore_sigterm  trap SIGTERM;   spawn_child: start a same-group grandchild that ignores SIGTERM, sleeps
                  `child_sleep` seconds (default 30) and writes its pid to `<stem>.child.pid`
                  (`child_stdout`: false gives it /dev/null instead of the shared stdout)
  stdout_mb       MB of filler before the answer (`filler`: "native" (inside the format's events, default) | "raw")
  stderr          text written to stderr at the end;  exit: the exit code (overrides every default)
Scenario options: session_id, model, record_env (more environment variables whose values are recorded).

Like codex, the fake reads stdin whatever its argv says (to record it, and as the prompt when argv has none); a stdin
that never reaches EOF costs $DUN_FAKE_STDIN_TIMEOUT seconds (default 5). SIGPIPE ends it, as it would a real CLI.

A scenario mistake (bad action, missing box, failed commit) prints `fake_agent: scenario error: ...` on stderr and
exits 97.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import select
import signal
import stat
import sys
import time
from pathlib import Path

TYPE_CHECKING = False  # typing, subprocess and contextlib are left out of start-up: every test spawns this script
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

FAKE_AGENT = Path(__file__).resolve()
FAKE_COMMAND = [sys.executable, str(FAKE_AGENT)]  # skips the `env python3` lookup (a pyenv shim doubles start-up)
SCENARIO_ENV = "DUN_FAKE_SCENARIO"
STATE_ENV = "DUN_FAKE_STATE"
SCENARIO_ERROR = 97
STDIN_TIMEOUT_S = float(os.environ.get("DUN_FAKE_STDIN_TIMEOUT", "5"))
MAX_RECORDED = 4 << 20
CLAUDE_VERSION = "2.1.197"
AGENT_IDENTITY = {"GIT_AUTHOR_NAME": "fake-agent", "GIT_AUTHOR_EMAIL": "fake-agent@example.invalid",
                  "GIT_COMMITTER_NAME": "fake-agent", "GIT_COMMITTER_EMAIL": "fake-agent@example.invalid"}
RECORDED_ENV = ("TERM", "CLAUDECODE", "CLAUDE_CODE_MAX_RETRIES", "CLAUDE_CODE_ENTRYPOINT", "NO_COLOR", "FORCE_COLOR",
                "CI", "HOME", "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE")


# --------------------------------------------------------------------------------------------------------------------
# Helper API for tests


def sidecar(scenario: Path, suffix: str) -> Path:
    """`<stem><suffix>` next to the scenario: `.count`, `.calls.jsonl`, `.child.pid`."""
    return scenario.with_name(scenario.stem + suffix)


def write_scenario(directory: Path, steps: list[dict[str, Any]], name: str = "scenario", **options: Any) -> Path:
    """Write a scenario (and forget any earlier run of it); returns its absolute path for $DUN_FAKE_SCENARIO."""
    directory = Path(directory).resolve()
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{name}.json"
    for suffix in (".count", ".count.lock", ".calls.jsonl", ".calls.jsonl.lock", ".child.pid"):
        sidecar(path, suffix).unlink(missing_ok=True)
    path.write_text(json.dumps({"steps": steps, **options}, indent=1) + "\n", encoding="utf-8")
    return path


def scenario_env(scenario: Path) -> dict[str, str]:
    """The environment entries that point the fake agent at `scenario`."""
    return {SCENARIO_ENV: str(scenario)}


def calls(scenario: Path) -> list[dict[str, Any]]:
    """The calls recorded so far, oldest first."""
    try:
        text = sidecar(Path(scenario), ".calls.jsonl").read_text(encoding="utf-8")
    except FileNotFoundError:
        return []
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def wait_for_calls(scenario: Path, count: int, timeout: float = 10.0) -> list[dict[str, Any]]:
    """Wait until `count` calls are recorded (a call is recorded once its signals and child are set up)."""
    deadline = time.monotonic() + timeout
    while True:
        recorded = calls(scenario)
        if len(recorded) >= count or time.monotonic() > deadline:
            return recorded
        time.sleep(0.01)


def child_pid(scenario: Path) -> int | None:
    try:
        return int(sidecar(Path(scenario), ".child.pid").read_text().strip())
    except (FileNotFoundError, ValueError):
        return None


def alive(pid: int) -> bool:
    """Whether `pid` runs (a zombie, dead but not yet reaped, does not count)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as fh:
            state = fh.read().rsplit(")", 1)[1].split()[0]
        return state not in ("Z", "X")
    except (FileNotFoundError, IndexError, ProcessLookupError):
        return False
    except OSError:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True


def block(task: str | None = "x", status: str = "COMPLETE", files: int | None = 1, exit: bool = False,
          next: str | None = "go on") -> dict[str, Any]:
    """Status block fields for a step's `status`."""
    return {"TASK_COMPLETED": task, "STATUS": status, "FILES_MODIFIED": files, "EXIT_SIGNAL": exit,
            "NEXT_RECOMMENDATION": next}


def render_block(fields: dict[str, Any] | str) -> str:
    if isinstance(fields, str):
        return fields
    lines = ["---DUN_STATUS---"]
    for key, value in fields.items():
        if value is None:
            continue
        lines.append(f"{key}: {str(value).lower() if isinstance(value, bool) else value}")
    lines.append("---END_DUN_STATUS---")
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------------------------------
# The fake agent


class ScenarioError(Exception):
    pass


def _probe_stdin() -> tuple[dict[str, Any], bytes]:
    """What fd 0 is, and what it holds. Runs before anything opens a file, so a closed fd 0 is seen as closed."""
    try:
        st = os.fstat(0)
    except OSError:
        os.open(os.devnull, os.O_RDONLY)  # takes fd 0, so no file opened later lands there
        return {"stdin": "closed", "stdin_bytes": None, "stdin_empty": None, "stdin_eof": None}, b""
    if stat.S_ISCHR(st.st_mode):
        if os.isatty(0):
            return {"stdin": "tty", "stdin_bytes": None, "stdin_empty": None, "stdin_eof": None}, b""
        kind = "devnull" if os.path.samestat(st, os.stat(os.devnull)) else "chardev"
    else:
        kind = ("pipe" if stat.S_ISFIFO(st.st_mode) else "file" if stat.S_ISREG(st.st_mode)
                else "socket" if stat.S_ISSOCK(st.st_mode) else "other")
    chunks: list[bytes] = []
    size, eof = 0, False
    deadline = time.monotonic() + STDIN_TIMEOUT_S
    while True:  # like codex, read stdin whatever the argv says; a stdin never closed costs only the timeout
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([0], [], [], left)[0]:
            break
        data = os.read(0, 1 << 16)
        if not data:
            eof = True
            break
        if size < MAX_RECORDED:
            chunks.append(data)
        size += len(data)
    return {"stdin": kind, "stdin_bytes": size, "stdin_empty": size == 0, "stdin_eof": eof}, b"".join(chunks)


_VALUE_FLAGS = {"--output-format", "--format", "--input-format", "--model", "-m", "--max-turns", "--max-budget-usd",
                "--permission-mode", "--append-system-prompt", "--system-prompt", "--system-prompt-file",
                "--settings", "--mcp-config", "--session-id", "--resume", "-r", "--fallback-model", "--effort",
                "--allowedTools", "--allowed-tools", "--disallowedTools", "--disallowed-tools", "--tools",
                "-s", "--sandbox", "-o", "--output-last-message", "--approval-mode", "-C", "--cd", "-c", "--config"}
_PROMPT_FLAGS = {"-p", "--print", "--prompt"}
_FILE_FLAGS = {"--message-file", "--prompt-file"}
_SUBCOMMANDS = {"exec", "run"}


def _read_prompt_file(path: str) -> str:
    with open(path, "rb") as fh:
        return fh.read(MAX_RECORDED).decode("utf-8", "replace")


def find_prompt(args: list[str], stdin_data: bytes) -> tuple[str | None, str | None, str | None]:
    """(prompt, source, file) from argv (`-p PROMPT`, `--message-file F`, the last positional) or stdin."""
    positionals: list[str] = []
    i, rest = 0, False
    while i < len(args):
        arg = args[i]
        i += 1
        if rest or arg == "-" or not arg.startswith("-"):
            positionals.append(arg)
            continue
        if arg == "--":
            rest = True
            continue
        name, eq, value = arg.partition("=") if arg.startswith("--") else (arg, "", "")
        if name in _FILE_FLAGS:
            path = value if eq else (args[i] if i < len(args) else "")
            return _read_prompt_file(path), "message-file", path
        if name in _PROMPT_FLAGS:
            if eq:
                return value, "argv", None
            if i < len(args) and (not args[i].startswith("-") or any(c.isspace() for c in args[i])):
                return args[i], "argv", None
            continue  # `-p` as a bare flag (claude -p --output-format json PROMPT)
        if name in _VALUE_FLAGS and not eq:
            i += 1
    if positionals and positionals[0] in _SUBCOMMANDS:
        positionals.pop(0)
    if positionals:
        last = positionals[-1]
        if "\n" not in last and len(last) < 4096 and os.path.isfile(last):
            return _read_prompt_file(last), "file-arg", last
        return last, "argv-positional", None
    if stdin_data:
        return stdin_data.decode("utf-8", "replace"), "stdin", None
    return None, None, None


def _locked(path: Path) -> Any:
    fh = open(path.with_name(path.name + ".lock"), "a")  # noqa: SIM115 - closed by the caller's with block
    fcntl.flock(fh, fcntl.LOCK_EX)
    return fh


def bump_counter(state: Path) -> int:
    """This call's number; the counter file holds how many calls have started."""
    with _locked(state):
        try:
            count = int(state.read_text().strip() or 0)
        except FileNotFoundError:
            count = 0
        tmp = state.with_name(f"{state.name}.{os.getpid()}.tmp")
        tmp.write_text(f"{count + 1}\n")
        os.replace(tmp, state)
    return count


def pick_step(steps: list[dict[str, Any]], index: int) -> tuple[int, dict[str, Any]]:
    if not steps:
        return -1, {}
    if index < len(steps):
        return index, steps[index]
    repeats = [i for i, step in enumerate(steps) if step.get("repeat")]
    chosen = repeats[-1] if repeats else len(steps) - 1
    return chosen, steps[chosen]


def _format(step: dict[str, Any], args: list[str]) -> str:
    fmt = step.get("format", "claude-json")
    if fmt != "auto":
        return str(fmt)
    joined = " ".join(args)
    if "stream-json" in joined:
        return "claude-stream-json"
    if "exec" in args and "--json" in args:
        return "codex"
    if re.search(r"--output-format[ =]text", joined):
        return "text"
    return "claude-json"


def _kind(fd: int) -> str:
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return "closed"
    if os.isatty(fd):
        return "tty"
    return "pipe" if stat.S_ISFIFO(mode) else "file" if stat.S_ISREG(mode) else "other"


_CHILD = """
import os, signal, sys, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
path, seconds, ready = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
with open(path + ".tmp", "w") as fh:
    fh.write(str(os.getpid()))
os.replace(path + ".tmp", path)
os.write(ready, b"1")
os.close(ready)
time.sleep(seconds)
"""


def spawn_child(scenario: Path, step: dict[str, Any]) -> int:
    """A grandchild in this process group that ignores SIGTERM; returns once it is set up."""
    import subprocess
    read_end, write_end = os.pipe()
    stdout = None if step.get("child_stdout", True) else subprocess.DEVNULL
    child = subprocess.Popen([sys.executable, "-c", _CHILD, str(sidecar(scenario, ".child.pid")),
                              str(float(step.get("child_sleep", 30))), str(write_end)],
                             pass_fds=(write_end,), stdin=subprocess.DEVNULL, stdout=stdout)
    os.close(write_end)
    os.read(read_end, 1)
    os.close(read_end)
    return child.pid


class Out:
    """stdout as bytes, flushed after each write so a reader sees every event as it happens."""

    def __init__(self) -> None:
        self.stream = sys.stdout.buffer

    def write(self, text: str) -> None:
        self.stream.write(text.encode("utf-8"))
        self.stream.flush()

    def event(self, obj: dict[str, Any]) -> None:
        self.write(json.dumps(obj, ensure_ascii=False, separators=(",", ":")) + "\n")


def _id(prefix: str, size: int = 24) -> str:
    alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
    return prefix + "".join(alphabet[b % 62] for b in os.urandom(size))


def _uuid4() -> str:
    """A random (version 4) UUID; the uuid module costs start-up time."""
    raw = bytearray(os.urandom(16))
    raw[6] = (raw[6] & 0x0F) | 0x40
    raw[8] = (raw[8] & 0x3F) | 0x80
    h = raw.hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def _number(value: Any) -> Any:
    return int(value) if isinstance(value, float) and value.is_integer() else value  # JSON.stringify prints 0, not 0.0


class Agent:
    def __init__(self, scenario: Path, options: dict[str, Any], step: dict[str, Any], call: int, fmt: str,
                 args: list[str]) -> None:
        self.scenario, self.step, self.call, self.fmt, self.args = scenario, step, call, fmt, args
        self.out = Out()
        self.started = time.monotonic()
        self.session = str(step.get("session_id") or options.get("session_id") or _uuid4())
        self.model = str(step.get("model") or options.get("model") or self._arg("--model") or {
            "codex": "gpt-5-codex", "gemini": "gemini-2.5-pro"}.get(fmt, "claude-sonnet-4-5"))
        self.error: dict[str, Any] = dict(step.get("error") or {})
        self.kind = self.error.get("kind")
        self.items = 0
        self.done: list[tuple[str, dict[str, Any], str]] = []  # (tool, input, result) per action
        self.lines = [0, 0]  # lines added, removed

    def _arg(self, flag: str) -> str | None:
        for i, arg in enumerate(self.args):
            if arg == flag and i + 1 < len(self.args):
                return self.args[i + 1]
            if arg.startswith(flag + "="):
                return arg.split("=", 1)[1]
        return None

    # ---- the answer text

    def answer(self) -> str:
        parts = []
        text = self.step.get("text")
        if text is None and self.step.get("status") is None:
            text = f"Scripted call {self.call} of the fake agent."
        if text:
            parts.append(str(text))
        if self.step.get("status") is not None:
            parts.append(render_block(self.step["status"]))
        return "\n\n".join(parts)

    def usage(self) -> dict[str, int]:
        usage = {"input_tokens": 2000, "cached_input_tokens": 0, "output_tokens": 100}
        usage.update(self.step.get("usage") or {})
        return usage

    # ---- actions

    def run_actions(self) -> None:
        for action in self.step.get("actions") or []:
            if not isinstance(action, dict):
                raise ScenarioError(f"action {action!r} is not an object")
            if "say" in action:  # an assistant message streamed now, between the actions
                self._say(str(action["say"]))
                continue
            tool, tool_input, result = self._action(action)
            self.done.append((tool, tool_input, result))
            if self.fmt == "claude-stream-json":
                tool_id = _id("toolu_01")
                self._assistant([{"type": "tool_use", "id": tool_id, "name": tool, "input": tool_input}], "tool_use")
                self._user_result(tool_id, result)
            elif self.fmt == "codex":
                self._codex_item(tool, tool_input, result)

    def _action(self, action: dict[str, Any]) -> tuple[str, dict[str, Any], str]:
        import subprocess
        if "write" in action or "append" in action:
            appending = "append" in action
            path = Path(action["append" if appending else "write"])
            content = str(action.get("content", ""))
            existed = path.exists()
            path.parent.mkdir(parents=True, exist_ok=True)
            with path.open("a" if appending else "w", encoding="utf-8") as fh:
                fh.write(content)
            self.lines[0] += content.count("\n")
            if appending:
                return "Edit", {"file_path": str(path.resolve()), "old_string": "", "new_string": content}, \
                    f"The file {path.resolve()} has been updated."
            verb = "updated" if existed else "created"
            return "Write", {"file_path": str(path.resolve()), "content": content}, \
                f"File {verb} successfully at: {path.resolve()}"
        if "tick" in action or "untick" in action:
            ticking = "tick" in action
            path = Path(action["tick" if ticking else "untick"])
            box = str(action.get("box", ""))
            text = path.read_text(encoding="utf-8")
            pattern = r"^([ \t]*(?:[-*+]|\d+[.)])[ \t]+)" + (r"\[ \]" if ticking else r"\[[xX]\]") + r"(.*)$"
            for match in re.finditer(pattern, text, re.M):
                if box in match.group(2):
                    old = match.group(0)
                    new = match.group(1) + ("[x]" if ticking else "[ ]") + match.group(2)
                    path.write_text(text[:match.start()] + new + text[match.end():], encoding="utf-8")
                    self.lines[0] += 1
                    self.lines[1] += 1
                    return "Edit", {"file_path": str(path.resolve()), "old_string": old, "new_string": new}, \
                        f"The file {path.resolve()} has been updated."
            state = "unticked" if ticking else "ticked"
            raise ScenarioError(f"{path}: no {state} box containing {box!r}")
        if "delete" in action:
            path = Path(action["delete"])
            path.unlink()
            return "Bash", {"command": f"rm {path}", "description": "Delete a file"}, ""
        if "commit" in action:
            env = {**os.environ, **AGENT_IDENTITY}
            add = subprocess.run(["git", "add", "-A"], env=env, capture_output=True, text=True)
            argv = ["git", "commit", "-q", "-m", str(action["commit"])]
            if action.get("allow_empty"):
                argv.append("--allow-empty")
            commit = subprocess.run(argv, env=env, capture_output=True, text=True) if add.returncode == 0 else add
            if commit.returncode != 0:
                raise ScenarioError(f"commit {action['commit']!r} failed: {(commit.stdout + commit.stderr).strip()}")
            return "Bash", {"command": f"git add -A && git commit -m {json.dumps(action['commit'])}",
                            "description": "Commit the changes"}, commit.stdout
        if "run" in action:
            done = subprocess.run(str(action["run"]), shell=True, capture_output=True, text=True)
            sys.stderr.write(done.stdout + done.stderr)
            sys.stderr.flush()
            if action.get("check") and done.returncode != 0:
                raise ScenarioError(f"run {action['run']!r} exited {done.returncode}")
            return "Bash", {"command": str(action["run"]), "description": "Run a command"}, \
                (done.stdout + done.stderr)[-4000:] or f"(exit code {done.returncode})"
        if "wait_for" in action:
            target, limit = Path(action["wait_for"]), float(action.get("timeout", 30))
            deadline = time.monotonic() + limit
            while not target.exists():
                if time.monotonic() > deadline:
                    raise ScenarioError(f"{target} did not appear within {limit:g}s")
                time.sleep(0.01)
            return "Bash", {"command": f"test -e {target}", "description": "Wait for the test"}, ""
        if "sleep" in action:
            time.sleep(float(action["sleep"]))
            return "Bash", {"command": f"sleep {action['sleep']}", "description": "Wait"}, ""
        raise ScenarioError(f"unknown action {action!r}")

    # ---- shared pieces of the stream formats

    def _assistant(self, content: list[dict[str, Any]], stop: str, model: str | None = None) -> None:
        self.out.event({"type": "assistant", "message": {
            "id": _id("msg_01"), "type": "message", "role": "assistant", "model": model or self.model,
            "content": content, "stop_reason": stop, "stop_sequence": None,
            "usage": {"input_tokens": 4, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0,
                      "output_tokens": 50}},
            "parent_tool_use_id": None, "session_id": self.session, "uuid": _uuid4()})

    def _user_result(self, tool_id: str, content: str) -> None:
        self.out.event({"type": "user", "message": {"role": "user", "content": [
            {"tool_use_id": tool_id, "type": "tool_result", "content": content, "is_error": False}]},
            "parent_tool_use_id": None, "session_id": self.session, "uuid": _uuid4()})

    def _codex_item(self, tool: str, tool_input: dict[str, Any], result: str) -> None:
        item_id = f"item_{self.items}"
        self.items += 1
        if tool == "Bash":
            command = f"bash -lc {json.dumps(tool_input['command'])}"
            self.out.event({"type": "item.started", "item": {"id": item_id, "type": "command_execution",
                                                             "command": command, "aggregated_output": "",
                                                             "exit_code": None, "status": "in_progress"}})
            self.out.event({"type": "item.completed", "item": {"id": item_id, "type": "command_execution",
                                                               "command": command, "aggregated_output": result,
                                                               "exit_code": 0, "status": "completed"}})
        else:
            kind = "add" if tool == "Write" and "created" in result else "update"
            self.out.event({"type": "item.completed", "item": {"id": item_id, "type": "file_change", "changes": [
                {"path": tool_input["file_path"], "kind": kind}], "status": "completed"}})

    def _codex_message(self, text: str) -> None:
        self.out.event({"type": "item.completed", "item": {"id": f"item_{self.items}", "type": "agent_message",
                                                           "text": text}})
        self.items += 1

    def opening(self) -> None:
        if self.fmt == "claude-stream-json":
            mode = "bypassPermissions" if "--dangerously-skip-permissions" in self.args else \
                self._arg("--permission-mode") or "default"
            self.out.event({"type": "system", "subtype": "init", "cwd": os.getcwd(), "session_id": self.session,
                            "tools": ["Task", "Bash", "Glob", "Grep", "Read", "Edit", "Write", "TodoWrite"],
                            "mcp_servers": [], "model": self.model, "permissionMode": mode, "slash_commands": [],
                            "apiKeySource": "none", "claude_code_version": CLAUDE_VERSION,
                            "output_style": "default", "agents": [], "skills": [], "plugins": [],
                            "uuid": _uuid4()})
            if self.step.get("rate_limit_event"):
                self._rate_limit_event(self.step["rate_limit_event"])
        elif self.fmt == "codex":
            self.out.event({"type": "thread.started", "thread_id": self.session})
            self.out.event({"type": "turn.started"})

    def _rate_limit_event(self, info: dict[str, Any]) -> None:
        self.out.event({"type": "rate_limit_event", "rate_limit_info": info, "session_id": self.session,
                        "uuid": _uuid4()})

    def earlier_messages(self) -> None:
        for message in self.step.get("messages") or []:
            self._say(str(message))

    def _say(self, message: str) -> None:
        """An assistant message, as the format streams it (the single-document formats have no place for it)."""
        if self.fmt == "claude-stream-json":
            self._assistant([{"type": "text", "text": message}], "end_turn")
        elif self.fmt == "codex":
            self._codex_message(message)
        elif self.fmt == "text":
            self.out.write(message + "\n\n")

    # ---- filler

    def filler(self) -> str:
        """Writes raw or event filler now; returns filler to put inside the answer (claude-json, gemini)."""
        size = int(float(self.step.get("stdout_mb") or 0) * (1 << 20))
        if size <= 0:
            return ""
        native = self.step.get("filler", "native") != "raw"
        if native and self.fmt in ("claude-json", "gemini"):
            return "".join(_filler_chunks(size))
        tool_id = _id("toolu_01")
        if native and self.fmt == "claude-stream-json":
            self._assistant([{"type": "tool_use", "id": tool_id, "name": "Bash",
                              "input": {"command": "cat build.log", "description": "Read the build log"}}],
                            "tool_use")
        for chunk in _filler_chunks(size):
            if not native or self.fmt == "text":
                self.out.write(chunk)
            elif self.fmt == "claude-stream-json":
                self._user_result(tool_id, chunk)
            else:
                self._codex_item("Bash", {"command": "cat build.log"}, chunk)
        return ""

    # ---- answers

    def finish(self, prefix: str) -> int:
        """Print the answer or the error; returns the exit code."""
        code = {"claude-json": self._claude, "claude-stream-json": self._claude, "codex": self._codex,
                "gemini": self._gemini, "text": self._text}[self.fmt](prefix)
        if self.step.get("stderr"):
            sys.stderr.write(str(self.step["stderr"]))
            sys.stderr.flush()
        return int(self.step["exit"]) if self.step.get("exit") is not None else code

    def _message(self, defaults: dict[str, str]) -> str:
        return str(self.error.get("message") or defaults.get(self.kind or "", f"fake error {self.kind}"))

    def _claude(self, prefix: str) -> int:
        ms = int((time.monotonic() - self.started) * 1000)
        usage = {"input_tokens": 2000, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0,
                 "output_tokens": 100, "server_tool_use": {"web_search_requests": 0}, "service_tier": "standard"}
        usage.update(self.step.get("usage") or {})
        cost = _number(self.step.get("cost_usd", 0.0125))
        subtype, terminal, is_error = "success", "completed", False
        stop: str | None = "end_turn"
        status: Any = None
        result: str | None = prefix + self.answer()
        denials: list[dict[str, Any]] = []
        code = 0
        if self.kind in ("rate_limit", "usage_limit", "auth"):
            defaults = {"rate_limit": "API Error: Request rejected (429) · Rate limited",
                        "usage_limit": "You've hit your limit · resets 9pm (Europe/London)",
                        "auth": "Invalid API key · Fix external API key"}
            result, is_error, stop, code = self._message(defaults), True, None, 1
            status = self.error.get("api_error_status", 401 if self.kind == "auth" else 429)
            cost, usage = 0, {k: 0 for k in ("input_tokens", "cache_creation_input_tokens",
                                             "cache_read_input_tokens", "output_tokens")}
            if self.fmt == "claude-stream-json":
                if self.kind == "usage_limit":
                    self._rate_limit_event({"status": "rejected", "resetsAt": int(time.time()) + 3600,
                                            "rateLimitType": "five_hour"})
                self._assistant([{"type": "text", "text": result}], "stop_sequence", model="<synthetic>")
        elif self.kind in ("max_turns", "max_budget"):
            subtype = "error_max_turns" if self.kind == "max_turns" else "error_max_budget_usd"
            terminal = "max_turns" if self.kind == "max_turns" else "max_budget_usd"
            result, is_error, stop, code = None, True, "tool_use", 1
        elif self.kind == "permission_denied":
            for tool in self.error.get("tools") or ["Bash"]:
                tool_input = self.error.get("input") or ({"command": "git push origin main"} if tool == "Bash"
                                                         else {})
                denials.append({"tool_name": tool, "tool_use_id": _id("toolu_01"), "tool_input": tool_input})
        if self.fmt == "claude-stream-json" and result is not None and not is_error:
            self._assistant([{"type": "text", "text": result}], "end_turn")
        obj: dict[str, Any] = {
            "type": "result", "subtype": subtype, "is_error": is_error, "api_error_status": status,
            "duration_ms": ms, "duration_api_ms": 0 if is_error and result is not None else ms,
            "num_turns": int(self.step.get("num_turns", len(self.done) + 1)), "result": result,
            "stop_reason": stop, "session_id": self.session, "total_cost_usd": cost, "usage": usage,
            "modelUsage": {} if cost == 0 else {self.model: {
                "inputTokens": usage.get("input_tokens", 0), "outputTokens": usage.get("output_tokens", 0),
                "cacheReadInputTokens": usage.get("cache_read_input_tokens", 0),
                "cacheCreationInputTokens": usage.get("cache_creation_input_tokens", 0),
                "webSearchRequests": 0, "costUSD": cost, "contextWindow": 200000}},
            "permission_denials": denials, "terminal_reason": terminal, "uuid": _uuid4()}
        if result is None:
            del obj["result"]  # the error subtypes carry no result text
        self.out.event(obj)
        return code

    def _codex(self, prefix: str) -> int:
        if self.kind in ("rate_limit", "usage_limit", "auth", "max_turns", "max_budget"):
            message = self._message({
                "rate_limit": "exceeded retry limit, last status: 429 Too Many Requests",
                "usage_limit": "You've hit your usage limit. Upgrade to Pro (https://openai.com/chatgpt/pricing) "
                               "or try again in 2 hours 13 minutes.",
                "auth": "unexpected status 401 Unauthorized: Missing bearer or basic authentication in header"})
            if self.kind == "rate_limit":
                for attempt in (1, 2):
                    self.out.event({"type": "error", "message": f"Reconnecting... {attempt}/5"})
            self.out.event({"type": "error", "message": message})
            self.out.event({"type": "turn.failed", "error": {"message": message}})
            return 1
        if self.kind == "permission_denied":
            for tool in self.error.get("tools") or ["Bash"]:
                command = "bash -lc 'git push origin main'" if tool == "Bash" else tool
                self.out.event({"type": "item.completed", "item": {
                    "id": f"item_{self.items}", "type": "command_execution", "command": command,
                    "aggregated_output": "", "exit_code": None, "status": "declined"}})
                self.items += 1
        self._codex_message(prefix + self.answer())
        usage = self.usage()
        self.out.event({"type": "turn.completed", "usage": {
            "input_tokens": usage.get("input_tokens", 0), "cached_input_tokens": usage.get("cached_input_tokens", 0),
            "output_tokens": usage.get("output_tokens", 0),
            **{k: v for k, v in usage.items() if k not in ("input_tokens", "cached_input_tokens", "output_tokens")}}})
        return 0

    def _gemini(self, prefix: str) -> int:
        usage = self.usage()
        tokens_in, tokens_out = usage.get("input_tokens", 0), usage.get("output_tokens", 0)
        cached = usage.get("cached_input_tokens", usage.get("cache_read_input_tokens", 0))
        ms = int((time.monotonic() - self.started) * 1000)
        rejected = len(self.error.get("tools") or ["Bash"]) if self.kind == "permission_denied" else 0
        calls_made = len(self.done) + rejected
        stats = {
            "models": {self.model: {
                "api": {"totalRequests": 1 + len(self.done), "totalErrors": 0, "totalLatencyMs": ms},
                "tokens": {"prompt": tokens_in, "candidates": tokens_out, "total": tokens_in + tokens_out,
                           "cached": cached, "thoughts": usage.get("thoughts", 0), "tool": usage.get("tool", 0)}}},
            "tools": {"totalCalls": calls_made, "totalSuccess": len(self.done), "totalFail": rejected,
                      "totalDurationMs": 0, "totalDecisions": {"accept": len(self.done), "reject": rejected,
                                                               "modify": 0, "auto_accept": 0}, "byName": {}},
            "files": {"totalLinesAdded": self.lines[0], "totalLinesRemoved": self.lines[1]}}
        errors = {"rate_limit": ("Error", "[API Error: Too Many Requests (429): Resource has been exhausted (e.g. "
                                          "check quota).]", 1),
                  "usage_limit": ("Error", "[API Error: You have exhausted your capacity on this model. Your quota "
                                           "will reset after 2h13m.]", 1),
                  "auth": ("FatalAuthenticationError", "API key not valid. Please pass a valid API key.", 41),
                  "max_turns": ("FatalTurnLimitedError", "Reached max session turns for this session.", 53),
                  "max_budget": ("Error", "Session budget exceeded.", 1)}
        if self.kind in errors:
            kind, default, code = errors[self.kind]
            doc: dict[str, Any] = {"session_id": self.session, "error": {
                "type": kind, "message": str(self.error.get("message") or default), "code": code}}
        else:
            doc, code = {"session_id": self.session, "response": prefix + self.answer(), "stats": stats}, 0
        self.out.write(json.dumps(doc, ensure_ascii=False, indent=2) + "\n")
        return code

    def _text(self, prefix: str) -> int:
        if self.kind in ("rate_limit", "usage_limit", "auth", "max_turns", "max_budget"):
            self.out.write(self._message({
                "rate_limit": "API Error: Request rejected (429) · Rate limited",
                "usage_limit": "You've hit your limit · resets 9pm (Europe/London)",
                "auth": "Invalid API key · Fix external API key",
                "max_turns": "Error: Reached max turns", "max_budget": "Error: Exceeded the budget"}) + "\n")
            return 1
        self.out.write(prefix + self.answer() + "\n")
        return 0


def _filler_chunks(size: int) -> Iterator[str]:
    """`size` bytes of numbered 100-byte lines, in chunks of about 64 KiB."""
    line_no, written = 0, 0
    while written < size:
        lines = []
        for _ in range(655):
            lines.append(f"filler {line_no:09d} ".ljust(99, "x") + "\n")
            line_no += 1
        chunk = "".join(lines)[: size - written]
        written += len(chunk)
        if written >= size and not chunk.endswith("\n"):
            chunk = chunk[:-1] + "\n"  # the answer starts on a line of its own
        yield chunk


def _record(scenario: Path, entry: dict[str, Any]) -> None:
    path = sidecar(scenario, ".calls.jsonl")
    with _locked(path), path.open("a", encoding="utf-8") as fh:
        fh.write(json.dumps(entry, ensure_ascii=False) + "\n")


def main(args: list[str]) -> int:
    stdin_info, stdin_data = _probe_stdin()
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # a reader that goes away ends us, as it would a real CLI
    if not os.environ.get(SCENARIO_ENV):
        raise ScenarioError(f"${SCENARIO_ENV} is not set")
    scenario = Path(os.environ[SCENARIO_ENV]).resolve()
    try:
        loaded = json.loads(scenario.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ScenarioError(f"cannot read the scenario {scenario}: {exc}") from exc
    options: dict[str, Any] = loaded if isinstance(loaded, dict) else {"steps": loaded}
    state = Path(os.environ.get(STATE_ENV) or sidecar(scenario, ".count"))
    call = bump_counter(state)
    index, step = pick_step(list(options.get("steps") or []), call)
    fmt = _format(step, args)
    if fmt not in ("claude-json", "claude-stream-json", "codex", "gemini", "text"):
        raise ScenarioError(f"unknown format {fmt!r}")
    if step.get("ignore_sigterm"):
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    child = spawn_child(scenario, step) if step.get("spawn_child") else None
    prompt, source, prompt_file = find_prompt(args, stdin_data)
    names = [*RECORDED_ENV, *(options.get("record_env") or [])]
    _record(scenario, {
        "call": call, "step": index, "format": fmt, "argv": args, "argv0": sys.argv[0], "cwd": os.getcwd(),
        "pid": os.getpid(), "ppid": os.getppid(), "pgid": os.getpgid(0), "sid": os.getsid(0),
        **stdin_info, "stdout": _kind(1), "claudecode": "CLAUDECODE" in os.environ,
        "term": os.environ.get("TERM"), "env": {name: os.environ.get(name) for name in names},
        "env_names": sorted(os.environ), "prompt": prompt, "prompt_source": source, "prompt_file": prompt_file,
        "child_pid": child, "time": time.time()})

    agent = Agent(scenario, options, step, call, fmt, args)
    crash = agent.kind == "crash"
    if not crash:
        agent.opening()
    agent.run_actions()
    if not crash:
        agent.earlier_messages()
    prefix = "" if crash else agent.filler()
    hang = step.get("hang")
    if hang:
        time.sleep(3600.0 if hang is True else float(hang))
    if crash:
        sys.stderr.write(str(agent.error.get("stderr", "fake_agent: crashed\n")))
        sys.stderr.flush()
        return int(step["exit"] if step.get("exit") is not None else agent.error.get("exit", 1))
    return agent.finish(prefix)


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except ScenarioError as exc:
        sys.stderr.write(f"fake_agent: scenario error: {exc}\n")
        sys.exit(SCENARIO_ERROR)
