"""The scripted fake agent speaks each CLI's shapes, does real work in a git repo, and misbehaves on demand."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import git, write
from fake_agent import (
    FAKE_AGENT,
    FAKE_COMMAND,
    SCENARIO_ERROR,
    alive,
    block,
    calls,
    child_pid,
    render_block,
    scenario_env,
    wait_for_calls,
    write_scenario,
)

from dun.answer.transcript import parse_text

CORPUS = Path(__file__).parent / "corpus"
FORMATS = ["claude-json", "claude-stream-json", "codex", "gemini", "text"]
SHAPES = {"claude-json": "claude-json", "claude-stream-json": "claude-stream-json", "codex": "codex-jsonl",
          "gemini": "gemini-json", "text": "text"}


def run(scenario: Path, cwd: Path, *args: str, stdin: Any = subprocess.DEVNULL, input: str | None = None,
        env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    if input is not None:
        stdin = None
    return subprocess.run([*FAKE_COMMAND, *args], cwd=cwd, env={**os.environ, **scenario_env(scenario), **(env or {})},
                          stdin=stdin, input=input, capture_output=True, text=True, timeout=20)


def one(tmp_path: Path, cwd: Path, step: dict[str, Any], *args: str) -> subprocess.CompletedProcess[str]:
    return run(write_scenario(tmp_path / "sc", [step]), cwd, *args)


def test_fake_agent_is_an_executable_script(tmp_path: Path) -> None:
    assert os.access(FAKE_AGENT, os.X_OK)
    assert FAKE_AGENT.read_text().startswith("#!/usr/bin/env python3\n")
    scenario = write_scenario(tmp_path, [{"status": block(task="direct")}])
    done = subprocess.run([str(FAKE_AGENT), "-p", "x"], cwd=tmp_path, env={**os.environ, **scenario_env(scenario)},
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=20)
    assert parse_text(done.stdout).block.task_completed == "direct"  # type: ignore[union-attr]
    assert calls(scenario)[0]["argv0"] == str(FAKE_AGENT)


def test_block_helper_renders_what_the_status_parser_reads() -> None:
    text = render_block(block(task="lint-ruff", status="IN_PROGRESS", files=3, exit=True, next="docs"))
    assert text.splitlines() == ["---DUN_STATUS---", "TASK_COMPLETED: lint-ruff", "STATUS: IN_PROGRESS",
                                 "FILES_MODIFIED: 3", "EXIT_SIGNAL: true", "NEXT_RECOMMENDATION: docs",
                                 "---END_DUN_STATUS---"]
    assert "TASK_COMPLETED" not in render_block(block(task=None))


@pytest.mark.parametrize("fmt", FORMATS)
def test_each_format_parses_to_the_scripted_block_and_facts(tmp_path: Path, fmt: str) -> None:
    step = {"format": fmt, "text": "Fixed the lint finding.", "cost_usd": 0.25,
            "usage": {"input_tokens": 1234, "output_tokens": 56},
            "status": block(task="lint-ruff", status="IN_PROGRESS", files=2, exit=False, next="run the docs check")}
    done = one(tmp_path, tmp_path, step, "-p", "the prompt")
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    result = parse_text(done.stdout)
    assert result.outcome == "parsed", result.notes
    assert result.shape == SHAPES[fmt]
    assert result.block is not None
    assert result.block.to_dict() == {"task_completed": "lint-ruff", "status": "IN_PROGRESS", "files_modified": 2,
                                      "exit_signal": False, "next_recommendation": "run the docs check",
                                      "extra": {}}
    agent = result.agent
    if fmt.startswith("claude"):
        assert agent["cost_usd"] == 0.25
        assert agent["is_error"] is False
        assert agent["api_error_status"] is None
        assert agent["usage"]["input_tokens"] == 1234
    elif fmt == "codex":
        assert agent["usage"] == {"input_tokens": 1234, "cached_input_tokens": 0, "output_tokens": 56}
        assert not agent.get("is_error")
    elif fmt == "gemini":
        assert agent["stats"]["models"]["gemini-2.5-pro"]["tokens"]["prompt"] == 1234
        assert not agent.get("is_error")


def test_claude_json_is_one_compact_line_with_the_real_keys_in_order(tmp_path: Path) -> None:
    done = one(tmp_path, tmp_path, {"status": block(), "cost_usd": 0, "text": "Wrote «naïve» ✓"})
    assert done.stdout.endswith("}\n") and done.stdout.count("\n") == 1
    obj = json.loads(done.stdout)
    assert done.stdout == json.dumps(obj, ensure_ascii=False, separators=(",", ":")) + "\n"
    real = json.loads((CORPUS / "claude_json_complete.json").read_text(encoding="utf-8"))
    assert list(obj) == list(real)
    assert '"total_cost_usd":0,' in done.stdout  # as JSON.stringify prints it, not 0.0


def test_stream_formats_emit_the_real_event_sequences(tmp_path: Path) -> None:
    actions = [{"write": "a.txt", "content": "a\n"}, {"run": "true"}]
    stream = one(tmp_path, tmp_path, {"format": "claude-stream-json", "actions": actions, "status": block()},
                 "--permission-mode", "acceptEdits")
    events = [json.loads(line) for line in stream.stdout.splitlines()]
    assert [e["type"] for e in events] == ["system", "assistant", "user", "assistant", "user", "assistant", "result"]
    assert events[0]["subtype"] == "init" and events[0]["permissionMode"] == "acceptEdits"
    assert events[1]["message"]["content"][0]["name"] == "Write"
    assert {e["session_id"] for e in events} == {events[0]["session_id"]}
    assert events[-1]["num_turns"] == 3

    codex = one(tmp_path, tmp_path, {"format": "codex", "actions": actions, "status": block()})
    events = [json.loads(line) for line in codex.stdout.splitlines()]
    assert [e["type"] for e in events] == ["thread.started", "turn.started", "item.completed", "item.started",
                                          "item.completed", "item.completed", "turn.completed"]
    assert [e["item"]["type"] for e in events if e["type"] == "item.completed"] == [
        "file_change", "command_execution", "agent_message"]

    gemini = one(tmp_path, tmp_path, {"format": "gemini", "status": block()})
    doc = json.loads(gemini.stdout)
    assert gemini.stdout == json.dumps(doc, ensure_ascii=False, indent=2) + "\n"  # JSON.stringify(doc, null, 2)
    assert list(doc) == ["session_id", "response", "stats"]


def test_a_stale_block_in_an_earlier_message_loses_to_the_final_answer(tmp_path: Path) -> None:
    stale = render_block(block(task="old", status="BLOCKED"))
    for fmt in ("claude-stream-json", "codex", "text"):
        done = one(tmp_path, tmp_path, {"format": fmt, "messages": [stale], "status": block(task="new")})
        result = parse_text(done.stdout)
        assert result.block is not None and result.block.task_completed == "new", fmt


@pytest.mark.parametrize(("fmt", "error", "status", "text"), [
    ("claude-json", {"kind": "rate_limit"}, 429, "API Error: Request rejected (429) · Rate limited"),
    ("claude-stream-json", {"kind": "rate_limit"}, 429, "API Error: Request rejected (429) · Rate limited"),
    ("claude-json", {"kind": "usage_limit"}, 429, "You've hit your limit · resets 9pm (Europe/London)"),
    ("claude-stream-json", {"kind": "usage_limit", "message": "Claude AI usage limit reached|1767225600",
                            "api_error_status": None}, None, "Claude AI usage limit reached|1767225600"),
    ("claude-json", {"kind": "auth"}, 401, "Invalid API key · Fix external API key"),
])
def test_claude_api_errors(tmp_path: Path, fmt: str, error: dict[str, Any], status: int | None, text: str) -> None:
    done = one(tmp_path, tmp_path, {"format": fmt, "error": error, "status": block()})
    assert done.returncode == 1
    result = parse_text(done.stdout)
    assert result.outcome == "no_status_block"
    assert result.agent["is_error"] is True
    assert result.agent["api_error_status"] == status
    assert result.agent["result_excerpt"] == text
    assert result.agent["subtype"] == "success"
    assert result.agent["cost_usd"] == 0
    if fmt == "claude-stream-json" and error["kind"] == "usage_limit":
        assert result.agent["rate_limit"]["status"] == "rejected"


def test_claude_max_turns_permission_denials_and_explicit_exit(tmp_path: Path) -> None:
    done = one(tmp_path, tmp_path, {"error": {"kind": "max_turns"}, "cost_usd": 1.5})
    obj = json.loads(done.stdout)
    assert (done.returncode, obj["subtype"], obj["is_error"], "result" in obj) == (1, "error_max_turns", True, False)

    done = one(tmp_path, tmp_path, {"error": {"kind": "permission_denied", "tools": ["Bash", "WebFetch"]},
                                    "status": block()})
    result = parse_text(done.stdout)
    assert done.returncode == 0 and result.outcome == "parsed" and result.agent["is_error"] is False
    assert [d["tool_name"] for d in result.agent["permission_denials"]] == ["Bash", "WebFetch"]

    assert one(tmp_path, tmp_path, {"status": block(), "exit": 5}).returncode == 5
    assert one(tmp_path, tmp_path, {"error": {"kind": "rate_limit"}, "exit": 0}).returncode == 0


def test_crash_prints_no_json(tmp_path: Path) -> None:
    for fmt in ("claude-stream-json", "codex"):
        done = one(tmp_path, tmp_path, {"format": fmt, "status": block(),
                                        "error": {"kind": "crash", "exit": 3, "stderr": "TypeError: boom\n"}})
        assert (done.returncode, done.stdout, done.stderr) == (3, "", "TypeError: boom\n"), fmt


@pytest.mark.parametrize(("fmt", "error", "code", "fragment"), [
    ("codex", {"kind": "rate_limit"}, 1, "429 Too Many Requests"),
    ("codex", {"kind": "usage_limit"}, 1, "You've hit your usage limit"),
    ("codex", {"kind": "auth"}, 1, "401 Unauthorized"),
    ("gemini", {"kind": "rate_limit"}, 1, "429"),
    ("gemini", {"kind": "usage_limit", "message": "quota resets after 1h"}, 1, "quota resets after 1h"),
    ("gemini", {"kind": "auth"}, 41, "API key not valid"),
    ("gemini", {"kind": "max_turns"}, 53, "Reached max session turns"),
])
def test_codex_and_gemini_errors(tmp_path: Path, fmt: str, error: dict[str, Any], code: int, fragment: str) -> None:
    done = one(tmp_path, tmp_path, {"format": fmt, "error": error, "status": block()})
    assert done.returncode == code
    result = parse_text(done.stdout)
    assert result.outcome == "no_status_block"
    assert result.agent["is_error"] is True
    assert fragment in result.agent["error"]


def test_text_errors_go_to_stdout_with_exit_1(tmp_path: Path) -> None:
    done = one(tmp_path, tmp_path, {"format": "text",
                                    "error": {"kind": "usage_limit", "message": "out of extra usage"}})
    assert (done.returncode, done.stdout) == (1, "out of extra usage\n")


def test_actions_change_and_commit_files_in_a_real_repo(tmp_path: Path, repo: Path) -> None:
    write(repo, "TODO.md", "# Tasks\n- [ ] add the parser\n- [ ] write docs\n  * [x] old item\n")
    write(repo, "junk.txt", "x\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "tasks")
    step = {"status": block(files=3), "actions": [
        {"write": "src/parser.py", "content": "def parse():\n    return 1\n"},
        {"append": "README.md", "content": "More.\n"},
        {"tick": "TODO.md", "box": "docs"},
        {"untick": "TODO.md", "box": "old item"},
        {"delete": "junk.txt"},
        {"run": "echo ran > ran.txt"},
        {"commit": "Add the parser"},
        {"write": "dirty.txt", "content": "left uncommitted\n"},
    ]}
    done = one(tmp_path, repo, step)
    assert done.returncode == 0, done.stderr
    assert (repo / "src/parser.py").read_text() == "def parse():\n    return 1\n"
    assert (repo / "README.md").read_text() == "# demo\nMore.\n"
    assert (repo / "TODO.md").read_text() == "# Tasks\n- [ ] add the parser\n- [x] write docs\n  * [ ] old item\n"
    assert not (repo / "junk.txt").exists()
    assert git(repo, "log", "-1", "--format=%s|%an|%cn").strip() == "Add the parser|fake-agent|fake-agent"
    assert sorted(git(repo, "show", "--name-only", "--format=", "HEAD").split()) == [
        "README.md", "TODO.md", "junk.txt", "ran.txt", "src/parser.py"]
    assert git(repo, "status", "--porcelain").strip() == "?? dirty.txt"


def test_scenario_mistakes_fail_loudly(tmp_path: Path, repo: Path) -> None:
    done = one(tmp_path, repo, {"actions": [{"tick": "README.md", "box": "nothing"}]})
    assert done.returncode == SCENARIO_ERROR
    assert "no unticked box containing 'nothing'" in done.stderr
    assert one(tmp_path, repo, {"actions": [{"commit": "nothing to commit"}]}).returncode == SCENARIO_ERROR
    assert one(tmp_path, repo, {"actions": [{"commit": "empty", "allow_empty": True}]}).returncode == 0
    assert one(tmp_path, repo, {"actions": [{"run": "exit 4", "check": True}]}).returncode == SCENARIO_ERROR
    assert one(tmp_path, repo, {"actions": [{"run": "exit 4"}]}).returncode == 0
    missing = subprocess.run(FAKE_COMMAND, env={k: v for k, v in os.environ.items() if k != "DUN_FAKE_SCENARIO"},
                             stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=20)
    assert missing.returncode == SCENARIO_ERROR and "DUN_FAKE_SCENARIO" in missing.stderr


def test_counter_advances_and_calls_past_the_end_reuse_a_step(tmp_path: Path) -> None:
    scenario = write_scenario(tmp_path, [{"status": block(task=t)} for t in "abc"])
    tasks = [parse_text(run(scenario, tmp_path).stdout).block.task_completed for _ in range(5)]  # type: ignore[union-attr]
    assert tasks == ["a", "b", "c", "c", "c"]
    assert [c["call"] for c in calls(scenario)] == [0, 1, 2, 3, 4]
    assert [c["step"] for c in calls(scenario)] == [0, 1, 2, 2, 2]
    assert (tmp_path / "scenario.count").read_text() == "5\n"

    scenario = write_scenario(tmp_path, [{"repeat": True, "text": "again"}, {"text": "once"}], name="rep")
    assert [run(scenario, tmp_path, "--output-format", "text").stdout for _ in range(4)] != []
    assert [c["step"] for c in calls(scenario)] == [0, 1, 0, 0]

    state = tmp_path / "elsewhere.count"
    state.write_text("1\n")
    scenario = write_scenario(tmp_path, [{"text": "first"}, {"text": "second"}], name="st")
    run(scenario, tmp_path, env={"DUN_FAKE_STATE": str(state)})
    assert calls(scenario)[0]["step"] == 1 and state.read_text() == "2\n"


def test_calls_record_argv_prompt_stdin_and_environment(tmp_path: Path) -> None:
    scenario = write_scenario(tmp_path, [{"status": block(), "repeat": True}])
    prompt_file = write(tmp_path, "iteration-1.prompt.md", "prompt from a file\n")
    run(scenario, tmp_path, "-p", "do the work\nplease", "--output-format", "json", "--allowedTools", "Bash",
        env={"CLAUDECODE": "1", "TERM": "dumb"})
    run(scenario, tmp_path, "exec", "--json", "--skip-git-repo-check", "--full-auto", "codex prompt")
    run(scenario, tmp_path, "--message-file", str(prompt_file), "--yes")
    run(scenario, tmp_path, "--json", str(prompt_file))
    run(scenario, tmp_path, "--json", input="prompt on stdin")
    subprocess.run(["sh", "-c", 'exec "$0" "$1" -p closed <&-', *FAKE_COMMAND], cwd=tmp_path, check=True,
                   env={**os.environ, **scenario_env(scenario)}, capture_output=True, timeout=20)
    proc = subprocess.Popen([*FAKE_COMMAND, "-p", "grouped"], cwd=tmp_path, start_new_session=True,
                            env={**os.environ, **scenario_env(scenario)}, stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL)
    assert proc.wait(timeout=20) == 0

    recorded = calls(scenario)
    assert [(c["prompt"], c["prompt_source"]) for c in recorded] == [
        ("do the work\nplease", "argv"), ("codex prompt", "argv-positional"),
        ("prompt from a file\n", "message-file"), ("prompt from a file\n", "file-arg"),
        ("prompt on stdin", "stdin"), ("closed", "argv"), ("grouped", "argv")]
    first = recorded[0]
    assert first["argv"][:2] == ["-p", "do the work\nplease"]
    assert (first["claudecode"], first["term"], first["env"]["TERM"]) == (True, "dumb", "dumb")
    assert first["cwd"] == str(tmp_path) and first["stdout"] == "pipe"
    assert (first["stdin"], first["stdin_empty"]) == ("devnull", True)
    assert recorded[1]["claudecode"] is False
    assert (recorded[4]["stdin"], recorded[4]["stdin_bytes"], recorded[4]["stdin_eof"]) == ("pipe", 15, True)
    assert recorded[5]["stdin"] == "closed"
    assert recorded[6]["pid"] == recorded[6]["pgid"] == proc.pid


def test_format_auto_follows_the_argv(tmp_path: Path) -> None:
    scenario = write_scenario(tmp_path, [{"format": "auto", "status": block(), "repeat": True}])
    assert parse_text(run(scenario, tmp_path, "-p", "x", "--output-format", "stream-json", "--verbose").stdout
                      ).shape == "claude-stream-json"
    assert parse_text(run(scenario, tmp_path, "exec", "--json", "x").stdout).shape == "codex-jsonl"
    assert parse_text(run(scenario, tmp_path, "-p", "x", "--output-format", "json").stdout).shape == "claude-json"


@pytest.mark.parametrize(("fmt", "filler"), [(f, "native") for f in FORMATS] + [("text", "raw")])
def test_stdout_mb_adds_filler_and_keeps_the_answer(tmp_path: Path, fmt: str, filler: str) -> None:
    done = one(tmp_path, tmp_path, {"format": fmt, "stdout_mb": 0.5, "filler": filler, "status": block(task="big")})
    assert len(done.stdout.encode()) > 1 << 19
    result = parse_text(done.stdout)
    assert result.block is not None and result.block.task_completed == "big"
    assert result.shape == SHAPES[fmt]


def _start(scenario: Path, cwd: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen([*FAKE_COMMAND, "-p", "x"], cwd=cwd, env={**os.environ, **scenario_env(scenario)},
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, start_new_session=True)


def _kill(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=10)
    if proc.stdout is not None:
        proc.stdout.close()


def _gone(pid: int, timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def test_a_short_hang_delays_the_answer(tmp_path: Path) -> None:
    start = time.monotonic()
    done = one(tmp_path, tmp_path, {"hang": 0.3, "status": block()})
    assert time.monotonic() - start >= 0.3
    assert parse_text(done.stdout).outcome == "parsed"


def test_sigterm_ends_a_hung_agent_and_leaves_a_partial_stream(tmp_path: Path) -> None:
    scenario = write_scenario(tmp_path, [{"format": "claude-stream-json", "hang": 60, "status": block(),
                                          "actions": [{"write": "started.txt", "content": "yes\n"}]}])
    proc = _start(scenario, tmp_path)
    try:
        assert proc.stdout is not None
        seen = [proc.stdout.readline() for _ in range(3)]  # init, the Write tool_use, its tool_result: now hung
        assert [json.loads(line)["type"] for line in seen] == ["system", "assistant", "user"]
        os.killpg(proc.pid, signal.SIGTERM)
        assert proc.wait(timeout=10) == -signal.SIGTERM
        partial = parse_text(b"".join(seen) + proc.stdout.read())
        assert partial.outcome == "no_status_block" and partial.shape == "claude-stream-json"
        assert (tmp_path / "started.txt").read_text() == "yes\n"  # work before the hang is done
    finally:
        _kill(proc)


def test_ignore_sigterm_and_spawn_child_need_sigkill_on_the_group(tmp_path: Path) -> None:
    scenario = write_scenario(tmp_path, [{"hang": 60, "ignore_sigterm": True, "spawn_child": True,
                                          "child_sleep": 60, "status": block()}])
    proc = _start(scenario, tmp_path)
    try:
        recorded = wait_for_calls(scenario, 1)  # recorded only after the trap and the child are in place
        assert len(recorded) == 1
        child = child_pid(scenario)
        assert child is not None and child == recorded[0]["child_pid"]
        assert os.getpgid(child) == proc.pid == recorded[0]["pgid"]
        os.killpg(proc.pid, signal.SIGTERM)
        with pytest.raises(subprocess.TimeoutExpired):
            proc.wait(timeout=0.3)  # SIGTERM is trapped: still running
        assert alive(child)
        os.killpg(proc.pid, signal.SIGKILL)
        assert proc.wait(timeout=10) == -signal.SIGKILL
        assert _gone(child)
    finally:
        _kill(proc)
        pid = child_pid(scenario)
        if pid is not None and alive(pid):
            os.kill(pid, signal.SIGKILL)
