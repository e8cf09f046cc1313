"""Reading an agent's answer in every shape (dun.answer.transcript): raw text, Claude Code json and stream-json, Codex
JSONL, Gemini json; the agent's own facts; bad input; bounded memory on huge answers.

tests/corpus/ holds one realistic answer per file, written from the agents' documented output formats; CORPUS below
says what each must parse to.
"""

from __future__ import annotations

import io
import json
import resource
import tracemalloc
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from dun.answer.block import END, STATUSES, StatusBlock
from dun.answer.transcript import ParseResult, parse_stream, parse_text

CORPUS_DIR = Path(__file__).parents[1] / "corpus"
OUTCOMES = {"parsed", "no_status_block", "parse_error"}
SHAPES = {"text", "claude-json", "claude-stream-json", "codex-jsonl", "gemini-json", "jsonl", "json"}
SID = "9f1c2b7e-4d3a-4c51-9a0e-2f6b8d4e1a73"
MIB = 1 << 20

BLOCK = """\
---DUN_STATUS---
TASK_COMPLETED: lint-ruff
STATUS: {status}
FILES_MODIFIED: 2
EXIT_SIGNAL: {exit}
NEXT_RECOMMENDATION: run the docs checks
---END_DUN_STATUS---"""


def block(status: str = "COMPLETE", exit_signal: str = "false") -> str:
    return BLOCK.format(status=status, exit=exit_signal)


def check_invariants(result: ParseResult) -> None:
    """What holds for every result, whatever the input."""
    assert result.outcome in OUTCOMES
    assert result.shape in SHAPES
    assert (result.block is not None) == (result.outcome == "parsed")
    assert (result.error is not None) == (result.outcome == "parse_error")
    json.dumps(result.to_dict())  # always serialisable


# --- answer shapes --------------------------------------------------------------------------------------------------

def claude_json(text: str, **facts: Any) -> str:
    obj = {"type": "result", "subtype": "success", "is_error": False, "api_error_status": None, "duration_ms": 3190,
           "num_turns": 2, "result": text, "stop_reason": "end_turn", "session_id": SID, "total_cost_usd": 0.0125,
           "usage": {"input_tokens": 2000, "output_tokens": 100}, "permission_denials": [],
           "terminal_reason": "completed", **facts}
    return json.dumps(obj)


def stream_event(kind: str, **body: Any) -> str:
    return json.dumps({"type": kind, **body, "session_id": SID})


def init_event() -> str:
    return stream_event("system", subtype="init", cwd="/repo", tools=["Bash", "Read", "Edit"],
                        model="claude-sonnet-4-5", claude_code_version="2.1.197")


def assistant_text(text: str) -> str:
    return stream_event("assistant", message={"role": "assistant", "content": [{"type": "text", "text": text}]},
                        parent_tool_use_id=None)


def tool_result(text: str) -> str:
    return stream_event("user", message={"role": "user", "content": [
        {"tool_use_id": "toolu_01", "type": "tool_result", "content": text}]}, parent_tool_use_id=None)


def result_event(text: str, **facts: Any) -> str:
    return json.dumps({**json.loads(claude_json(text)), **facts})


def stream(*lines: str) -> str:
    return "".join(line + "\n" for line in lines)


def codex(*messages: str, usages: tuple[dict[str, int], ...] = ({"input_tokens": 100, "cached_input_tokens": 20,
                                                                    "output_tokens": 30},)) -> str:
    events: list[dict[str, Any]] = [{"type": "thread.started", "thread_id": "0199a213-81c0-7800-8aa1-bbab2a035a53"}]
    for i, usage in enumerate(usages):
        events.append({"type": "turn.started"})
        if i == len(usages) - 1:
            events += [{"type": "item.completed", "item": {"id": f"item_{n}", "type": "agent_message", "text": m}}
                       for n, m in enumerate(messages)]
        events.append({"type": "turn.completed", "usage": usage})
    return "".join(json.dumps(e) + "\n" for e in events)


def gemini(response: str | None, error: dict[str, Any] | None = None, indent: int | None = 2) -> str:
    obj: dict[str, Any] = {}
    if response is not None:
        obj["response"] = response
        obj["stats"] = {"models": {"gemini-2.5-pro": {"tokens": {"prompt": 10, "candidates": 5, "total": 15}}}}
    if error is not None:
        obj["error"] = error
    return json.dumps(obj, indent=indent)


# --- the corpus -----------------------------------------------------------------------------------------------------

@dataclass
class Expect:
    outcome: str
    shape: str
    status: dict[str, Any] | None = None  # a subset of block.to_dict()
    agent: dict[str, Any] = field(default_factory=dict)  # a subset of result.agent
    absent: tuple[str, ...] = ()  # agent keys that must not be there
    error: str | None = None  # a substring of result.error
    notes: tuple[str, ...] = ()  # substrings, each in some note
    earlier: int = 0


R429 = ("API Error: Request rejected (429) · This request would exceed the rate limit for your organization of "
        "50,000 input tokens per minute. Please retry after the limit resets.")

CORPUS: dict[str, Expect] = {
    "binary_garbage.bin": Expect("no_status_block", "text", agent={}),
    "empty.txt": Expect("no_status_block", "text", notes=("empty answer",)),
    "claude_json_complete.json": Expect(
        "parsed", "claude-json",
        {"task_completed": "lint-ruff", "status": "COMPLETE", "files_modified": 2, "exit_signal": False,
         "next_recommendation": "run the docs checks next (2 broken links in README.md)", "extra": {}},
        {"cost_usd": 0.18342, "session_id": SID, "is_error": False, "num_turns": 7, "subtype": "success",
         "permission_denials": [{"tool_name": "Bash", "tool_use_id": "toolu_01Xq3vYbPpZ8kJ2mN5rT7wQe",
                                 "tool_input": {"command": "git push origin main"}}]}),
    "claude_json_pretty_in_progress.json": Expect(
        "parsed", "claude-json",
        {"task_completed": "docs-links@README.md:41", "status": "IN_PROGRESS", "files_modified": 1,
         "exit_signal": False, "next_recommendation": "find the new URLs of the 3 moved pages"},
        {"cost_usd": 0.0731, "num_turns": 4, "permission_denials": [], "is_error": False}),
    "claude_json_429.json": Expect(
        "no_status_block", "claude-json", None,
        {"is_error": True, "api_error_status": 429, "result_excerpt": R429, "cost_usd": 0.0,
         "session_id": "0c7d5e21-8b4f-4a3e-9c62-7e1f0a9b3d58"}),
    "claude_json_max_turns.json": Expect(
        "no_status_block", "claude-json", None,
        {"is_error": True, "subtype": "error_max_turns", "num_turns": 21, "cost_usd": 1.0421,
         "terminal_reason": "max_turns"}, absent=("result_excerpt",)),
    "claude_json_truncated.json": Expect("no_status_block", "text", agent={}),
    "claude_stream_json_complete.jsonl": Expect(
        "parsed", "claude-stream-json",
        {"task_completed": "lint-ruff", "status": "COMPLETE", "files_modified": 2, "exit_signal": True,
         "next_recommendation": "none, every check passes"},
        {"session_id": SID, "model": "claude-sonnet-4-5", "claude_code_version": "2.1.197", "cost_usd": 0.2417,
         "num_turns": 4, "is_error": False, "permission_denials": [],
         "rate_limit": {"status": "allowed_warning", "resetsAt": 1767225600, "rateLimitType": "five_hour",
                        "utilization": 0.82}}),
    "claude_stream_killed_no_result.jsonl": Expect(
        "parsed", "claude-stream-json",
        {"task_completed": "tests-integration", "status": "BLOCKED", "files_modified": 1, "exit_signal": False,
         "next_recommendation": "investigate the 30 s timeout in test_sync.py"},
        {"session_id": SID, "model": "claude-sonnet-4-5"}, absent=("is_error", "cost_usd", "result_excerpt")),
    "codex_exec.jsonl": Expect(
        "parsed", "codex-jsonl",
        {"task_completed": "docs-docstrings@src/greet.py:12", "status": "COMPLETE", "files_modified": 2,
         "exit_signal": False, "next_recommendation": "add type hints to src/cli.py (mypy reports 4 errors)"},
        {"session_id": "0199a213-81c0-7800-8aa1-bbab2a035a53",
         "usage": {"input_tokens": 24763, "cached_input_tokens": 24448, "output_tokens": 1122}},
        absent=("is_error",)),
    "codex_turn_failed.jsonl": Expect(
        "no_status_block", "codex-jsonl", None,
        {"is_error": True, "session_id": "0199a3f0-2b11-7c22-9d33-4e5f60718293",
         "error": "stream disconnected before completion: You exceeded your current quota, please check your plan "
                  "and billing details."}),
    "gemini_complete.json": Expect(
        "parsed", "gemini-json",
        {"task_completed": "docs-changelog@CHANGELOG.md:5", "status": "COMPLETE", "files_modified": 1,
         "exit_signal": True, "next_recommendation": "nothing left; all checks pass"},
        absent=("is_error",)),
    "gemini_error.json": Expect(
        "no_status_block", "gemini-json", None,
        {"is_error": True, "error": "[API Error: You have exhausted your capacity on this model. Your quota will "
                                    "reset after 2h13m.]"}),
    "gemini_error_with_stats.json": Expect(
        "no_status_block", "gemini-json", None,
        {"is_error": True, "error": "Reached max session turns for this session."}),
    "text_complete_but_exit_false.md": Expect(
        "parsed", "text",
        {"task_completed": "mission-boxes@MISSION.md:2", "status": "COMPLETE", "files_modified": 3,
         "exit_signal": False, "next_recommendation": "document the parser in README.md"}),
    "text_crlf.txt": Expect(
        "parsed", "text",
        {"task_completed": "refactor-helpers@MISSION.md:12", "status": "COMPLETE", "files_modified": 2,
         "exit_signal": False, "next_recommendation": "update docs/usage.md for the new helper name"}),
    "text_fenced_bold.md": Expect(
        "parsed", "text",
        {"task_completed": "cli-argparse@MISSION.md:7", "status": "COMPLETE", "files_modified": 3,
         "exit_signal": True, "next_recommendation": "nothing left in MISSION.md", "extra": {}}),
    "text_interleaved_blocks.md": Expect(
        "parsed", "text", {"status": "COMPLETE", "exit_signal": True, "files_modified": 4},
        notes=("the earlier one is discarded",)),
    "text_invalid_status.md": Expect("parse_error", "text", None, error="STATUS: invalid value 'MAYBE'"),
    "text_missing_end_marker.md": Expect("parse_error", "text", None, error=END, notes=(END,)),
    "text_multiple_blocks.md": Expect(
        "parsed", "text", {"status": "COMPLETE", "exit_signal": True, "files_modified": 2}, earlier=1),
    "text_prose_signals_no_block.md": Expect("no_status_block", "text"),
    "text_quoted_example_then_real.md": Expect(
        "parsed", "text",
        {"task_completed": "typecheck-mypy@src/config.py:88", "status": "IN_PROGRESS", "exit_signal": False,
         "files_modified": 1}, earlier=1),
    "text_template_echo_only.txt": Expect("no_status_block", "text", notes=("template",)),
    "text_template_then_real.md": Expect(
        "parsed", "text", {"task_completed": "release-check", "status": "BLOCKED", "files_modified": 0,
                           "exit_signal": False}, notes=("template",)),
    "text_unknown_fields.md": Expect(
        "parsed", "text", {"status": "COMPLETE", "exit_signal": False, "files_modified": 1,
                           "extra": {"TESTS_ADDED": "6", "CONFIDENCE": "high"}}),
}

CORPUS_BUGS: dict[str, str] = {}


def test_every_corpus_file_has_an_expectation() -> None:
    files = sorted(p.name for p in CORPUS_DIR.iterdir())
    assert files == sorted(CORPUS)
    assert len(files) >= 12


@pytest.mark.parametrize("name", [
    pytest.param(name, marks=pytest.mark.xfail(strict=True, reason=CORPUS_BUGS[name])) if name in CORPUS_BUGS
    else name for name in sorted(CORPUS)])
def test_corpus(name: str) -> None:
    path = CORPUS_DIR / name
    expect = CORPUS[name]
    with path.open("rb") as fh:
        result = parse_stream(fh)
    check_invariants(result)
    assert result.bytes_read == path.stat().st_size
    assert (result.outcome, result.shape) == (expect.outcome, expect.shape)
    if expect.status is None:
        assert result.block is None
    else:
        assert result.block is not None
        got = result.block.to_dict()
        assert {k: got[k] for k in expect.status} == expect.status
    assert {k: result.agent.get(k, "<absent>") for k in expect.agent} == expect.agent
    assert not set(expect.absent) & set(result.agent)
    if expect.shape == "text":
        assert result.agent == {}
    if expect.error is None:
        assert result.error is None
    else:
        assert result.error is not None and expect.error in result.error
    for note in expect.notes:
        assert any(note in n for n in result.notes), result.notes
    assert len(result.earlier_blocks) == expect.earlier
    assert parse_text(path.read_bytes()).to_dict() == result.to_dict()


# --- known failures of other loops ----------------------------------------------------------------------------------

def test_every_field_is_read_not_only_exit_signal() -> None:
    result = parse_text("Work done.\n" + block("BLOCKED", "false"))
    assert result.block == StatusBlock(status="BLOCKED", exit_signal=False, task_completed="lint-ruff",
                                       files_modified=2, next_recommendation="run the docs checks")


@pytest.mark.parametrize("wrap", [
    lambda t: t,
    lambda t: claude_json(t),
    lambda t: stream(init_event(), assistant_text(t), result_event(t)),
    lambda t: stream(init_event(), assistant_text(t)),
    lambda t: codex(t),
    lambda t: gemini(t),
], ids=["text", "claude-json", "stream-json", "stream-json-killed", "codex", "gemini"])
def test_status_complete_does_not_win_over_exit_signal_false(wrap: Any) -> None:
    result = parse_text(wrap("All green.\n" + block("COMPLETE", "false") + "\n"))
    assert result.outcome == "parsed"
    assert result.block is not None and result.block.status == "COMPLETE" and result.block.exit_signal is False


@pytest.mark.parametrize("prose", [
    "Done.", "The task is complete!", "EXIT_SIGNAL: true", "STATUS: COMPLETE\nEXIT_SIGNAL: true",
    "**EXIT_SIGNAL:** true — all done, complete.",
])
@pytest.mark.parametrize("wrap", [lambda t: t, claude_json, lambda t: stream(init_event(), assistant_text(t)),
                                  lambda t: codex(t), gemini], ids=["text", "claude-json", "stream", "codex", "gemini"])
def test_signal_words_in_prose_are_not_a_block(prose: str, wrap: Any) -> None:
    result = parse_text(wrap(f"I fixed it.\n{prose}\nBye.\n"))
    check_invariants(result)
    assert result.outcome == "no_status_block"
    assert result.block is None


def test_block_inside_the_claude_json_result_field_is_found() -> None:
    result = parse_text(claude_json("Fixed.\n\n" + block("COMPLETE", "true")))
    assert (result.outcome, result.shape) == ("parsed", "claude-json")
    assert result.block is not None and result.block.exit_signal is True
    assert result.agent["cost_usd"] == 0.0125 and result.agent["session_id"] == SID


def test_block_in_tool_output_or_user_messages_is_not_the_answer() -> None:
    """A block the agent merely read (a file, the prompt) in a tool result is not its answer."""
    result = parse_text(stream(init_event(), tool_result("cat PROMPT.md\n" + block("COMPLETE", "true")),
                               assistant_text("Still working on it."), result_event("Still working on it.")))
    assert result.outcome == "no_status_block"


def test_codex_reasoning_items_are_not_the_answer() -> None:
    lines = codex("No block in my final message.").splitlines()
    reasoning = {"id": "r", "type": "reasoning", "text": "I will write\n" + block("COMPLETE", "true")}
    lines.insert(2, json.dumps({"type": "item.completed", "item": reasoning}))
    result = parse_text("\n".join(lines) + "\n")
    assert result.outcome == "no_status_block"


# --- several blocks -------------------------------------------------------------------------------------------------

def test_last_block_wins_and_earlier_ones_are_recorded() -> None:
    result = parse_text(block("IN_PROGRESS", "false") + "\nthen\n" + block("COMPLETE", "true") + "\n")
    assert result.block is not None and result.block.status == "COMPLETE"
    assert [b["STATUS"] for b in result.earlier_blocks] == ["IN_PROGRESS"]


def test_quoted_example_earlier_in_the_text_does_not_beat_the_final_block() -> None:
    quoted = "\n".join("> " + line for line in block("COMPLETE", "true").splitlines())
    for wrap in (lambda t: t, claude_json, gemini):
        result = parse_text(wrap("Example:\n" + quoted + "\n\nMine:\n" + block("IN_PROGRESS", "false") + "\n"))
        assert result.block is not None
        assert (result.block.status, result.block.exit_signal) == ("IN_PROGRESS", False)


def test_template_echo_alone_is_not_a_block() -> None:
    template = (CORPUS_DIR / "text_template_echo_only.txt").read_text()
    for wrap in (lambda t: t, claude_json, lambda t: codex(t)):
        result = parse_text(wrap(template))
        assert result.outcome == "no_status_block"
        assert any("template" in note for note in result.notes)


def test_stream_json_block_repeated_in_the_result_event_is_one_block() -> None:
    text = "Done.\n" + block("COMPLETE", "true")
    result = parse_text(stream(init_event(), assistant_text(text), result_event(text)))
    assert result.outcome == "parsed"
    assert result.earlier_blocks == []


def test_stream_json_block_of_an_earlier_message_is_recorded_when_the_final_one_differs() -> None:
    final = "Finished.\n" + block("COMPLETE", "true")
    result = parse_text(stream(init_event(), assistant_text("Progress:\n" + block("IN_PROGRESS", "false")),
                               tool_result("ok"), assistant_text(final), result_event(final)))
    assert result.block is not None and result.block.status == "COMPLETE"
    assert [b["STATUS"] for b in result.earlier_blocks] == ["IN_PROGRESS"]


def test_interleaved_blocks_b_wins_and_a_note_says_a_was_discarded() -> None:
    text = ("---DUN_STATUS---\nTASK_COMPLETED: A\nSTATUS: BLOCKED\n"
            "---DUN_STATUS---\nTASK_COMPLETED: B\nSTATUS: COMPLETE\nEXIT_SIGNAL: true\n---END_DUN_STATUS---\n")
    result = parse_text(text)
    assert result.block is not None and result.block.task_completed == "B"
    assert result.earlier_blocks == []
    assert any("earlier one is discarded" in note for note in result.notes)


# --- errors ---------------------------------------------------------------------------------------------------------

def test_invalid_value_is_a_parse_error_with_the_reason() -> None:
    result = parse_text(block("MAYBE", "false"))
    assert result.outcome == "parse_error"
    assert result.block is None
    assert result.error == "STATUS: invalid value 'MAYBE' (expected COMPLETE, IN_PROGRESS or BLOCKED)"


def test_last_block_invalid_is_a_parse_error_even_after_a_valid_one() -> None:
    result = parse_text(block("COMPLETE", "true") + "\n" + block("COMPLETE", "perhaps") + "\n")
    assert result.outcome == "parse_error"
    assert result.error is not None and result.error.startswith("EXIT_SIGNAL: invalid value 'perhaps'")
    assert len(result.earlier_blocks) == 1


def test_unknown_fields_are_kept() -> None:
    result = parse_text(block().replace("EXIT_SIGNAL", "RISK: low\nEXIT_SIGNAL"))
    assert result.block is not None and result.block.extra == {"RISK": "low"}


def test_missing_end_marker_is_a_parse_error_naming_the_marker() -> None:
    result = parse_text("Fixed.\n" + block().replace(END, "") + "\n")
    assert result.outcome == "parse_error"
    assert result.error == f"status block without its end marker {END}"
    assert any(END in note for note in result.notes)


def test_missing_end_marker_after_a_complete_block_keeps_the_complete_block() -> None:
    result = parse_text(block("IN_PROGRESS") + "\nmore\n" + block("COMPLETE").replace(END, ""))
    assert result.outcome == "parsed"
    assert result.block is not None and result.block.status == "IN_PROGRESS"
    assert any(END in note for note in result.notes)


def test_missing_block_is_an_outcome_not_an_exception() -> None:
    result = parse_text("I looked at the code and changed nothing.\n")
    assert (result.outcome, result.block, result.error) == ("no_status_block", None, None)


# --- bad input ------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("data", [b"", "", b"   \n\n", b"\n" * 10_000])
def test_empty_answer(data: str | bytes) -> None:
    result = parse_text(data)
    check_invariants(result)
    assert result.outcome == "no_status_block"
    if not data:
        assert result.notes == ["empty answer"]
        assert result.bytes_read == 0


@pytest.mark.parametrize("data", [
    b"\x00" * 5000,
    bytes(range(256)) * 40,
    b"\xff\xfe\xfd\n\xc3\x28\n\xa0\xa1\n\xed\xa0\x80\n",
    b"{\x00\xff\n\x00",
    b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + b"\x00" * 100,
])
def test_binary_garbage(data: bytes) -> None:
    result = parse_text(data)
    check_invariants(result)
    assert result.outcome == "no_status_block"
    assert result.bytes_read == len(data)


def test_invalid_utf8_inside_a_block_value_is_replaced_not_fatal() -> None:
    data = block().encode().replace(b"run the docs checks", b"run the \xff\xfe docs checks")
    result = parse_text(b"\x00\x01 garbage\n" + data)
    assert result.block is not None
    assert result.block.next_recommendation == "run the \ufffd\ufffd docs checks"


@pytest.mark.parametrize("cut", [1, 10, 0.5, 0.9, -1])
def test_truncated_claude_json(cut: float) -> None:
    full = claude_json("Fixed.\n\n" + block("COMPLETE", "true"))
    data = full[: int(len(full) * cut) if isinstance(cut, float) else cut]
    result = parse_text(data)
    check_invariants(result)
    assert result.outcome == "no_status_block"
    assert result.block is None


def test_truncated_stream_json_keeps_the_facts_of_the_complete_lines() -> None:
    text = "Done.\n" + block("COMPLETE", "true")
    data = stream(init_event(), assistant_text(text), result_event(text))
    result = parse_text(data[:-40])  # the result event cut: the assistant message still carries the block
    assert result.outcome == "parsed"
    assert result.agent["session_id"] == SID
    assert "cost_usd" not in result.agent


def test_claude_json_is_error_429() -> None:
    msg = "API Error: Request rejected (429) · Number of request tokens has exceeded your per-minute rate limit"
    result = parse_text(claude_json(msg, is_error=True, api_error_status=429, total_cost_usd=0, num_turns=1))
    assert (result.outcome, result.shape) == ("no_status_block", "claude-json")
    assert result.agent["is_error"] is True
    assert result.agent["api_error_status"] == 429
    assert result.agent["result_excerpt"] == msg
    assert result.agent["cost_usd"] == 0.0


def test_claude_401_and_long_results_are_excerpted() -> None:
    result = parse_text(claude_json("Invalid API key · Fix external API key", is_error=True))
    assert result.agent["result_excerpt"] == "Invalid API key · Fix external API key"
    result = parse_text(claude_json("x" * 5000 + "\n" + block()))
    assert len(result.agent["result_excerpt"]) == 1000
    assert result.outcome == "parsed"


def test_deeply_nested_json_is_not_an_exception() -> None:
    for data in ("{" * 200_000, '{"a":' * 100_000 + "1" + "}" * 100_000, "[" * 100_000):
        check_invariants(parse_text(data))


# --- agent facts ----------------------------------------------------------------------------------------------------

def test_claude_facts() -> None:
    denial = {"tool_name": "Bash", "tool_use_id": "toolu_9", "tool_input": {"command": "rm -rf build"}}
    result = parse_text(claude_json(block(), total_cost_usd=0.5, num_turns=9, permission_denials=[denial] * 25,
                                    subtype="error_max_budget_usd"))
    agent = result.agent
    assert agent["cost_usd"] == 0.5 and isinstance(agent["cost_usd"], float)
    assert agent["session_id"] == SID
    assert agent["is_error"] is False
    assert agent["num_turns"] == 9
    assert agent["subtype"] == "error_max_budget_usd"
    assert agent["permission_denials"] == [denial] * 20  # capped
    assert agent["usage"] == {"input_tokens": 2000, "output_tokens": 100}


def test_claude_integer_cost_is_a_float() -> None:
    result = parse_text(claude_json("x", total_cost_usd=2))
    assert result.agent["cost_usd"] == 2.0 and isinstance(result.agent["cost_usd"], float)


def test_claude_stream_init_facts_and_result_session_wins() -> None:
    result = parse_text(stream(init_event(), json.dumps({**json.loads(result_event("x")), "session_id": "other"})))
    assert result.agent["session_id"] == "other"
    assert result.agent["model"] == "claude-sonnet-4-5"


def test_rate_limit_event_is_recorded() -> None:
    event = json.dumps({"type": "rate_limit_event", "rate_limit_info": {"status": "rejected", "resetsAt": 1767225600,
                                                                       "rateLimitType": "seven_day"}})
    result = parse_text(stream(init_event(), event))
    assert result.agent["rate_limit"] == {"status": "rejected", "resetsAt": 1767225600, "rateLimitType": "seven_day"}
    flat = json.dumps({"type": "rate_limit_event", "status": "allowed", "resetsAt": 1})
    assert parse_text(stream(init_event(), flat)).agent["rate_limit"] == {"status": "allowed", "resetsAt": 1}


def test_codex_sums_usage_over_turns_and_takes_the_thread_id() -> None:
    usages = ({"input_tokens": 100, "cached_input_tokens": 20, "output_tokens": 30},
              {"input_tokens": 1000, "cached_input_tokens": 500, "output_tokens": 7, "reasoning_output_tokens": 4})
    result = parse_text(codex(block(), usages=usages))
    assert result.shape == "codex-jsonl"
    assert result.agent["session_id"] == "0199a213-81c0-7800-8aa1-bbab2a035a53"
    assert result.agent["usage"] == {"input_tokens": 1100, "cached_input_tokens": 520, "output_tokens": 37,
                                     "reasoning_output_tokens": 4}
    assert result.outcome == "parsed"


def test_codex_last_agent_message_block_wins() -> None:
    result = parse_text(codex("First:\n" + block("IN_PROGRESS"), "Final:\n" + block("COMPLETE", "true")))
    assert result.block is not None and result.block.status == "COMPLETE"
    assert len(result.earlier_blocks) == 1


def test_codex_fatal_error_event() -> None:
    lines = codex("partial").splitlines()[:-1]  # no turn.completed: the stream ends with the error
    lines.append(json.dumps({"type": "error", "message": "unexpected status 401 Unauthorized"}))
    result = parse_text("\n".join(lines) + "\n")
    assert result.agent["is_error"] is True
    assert result.agent["error"] == "unexpected status 401 Unauthorized"
    assert result.outcome == "no_status_block"


def test_gemini_facts() -> None:
    result = parse_text(gemini("Done.\n" + block("COMPLETE", "true")))
    assert (result.outcome, result.shape) == ("parsed", "gemini-json")
    assert result.agent["stats"]["models"]["gemini-2.5-pro"]["tokens"]["total"] == 15
    assert "is_error" not in result.agent
    result = parse_text(gemini("", {"type": "ApiError", "message": "Quota exceeded", "code": 429}))
    assert result.agent["is_error"] is True
    assert result.agent["error"] == "Quota exceeded"
    assert result.outcome == "no_status_block"


def test_parse_result_to_dict() -> None:
    data = claude_json(block())
    result = parse_text(data)
    out = result.to_dict()
    assert set(out) == {"outcome", "shape", "status", "error", "agent", "earlier_blocks", "notes", "bytes_read"}
    assert out["status"]["status"] == "COMPLETE"
    assert out["bytes_read"] == len(data.encode())
    assert parse_text(data.encode()).to_dict() == out


# --- very large answers: bounded memory -----------------------------------------------------------------------------

FILLER = (b"2025-05-21 10:41:07 INFO  tests/test_sync.py::test_resume_after_disconnect PASSED   [ 38%] "
          b"(0.42s) - reconnect ok\n")


class LazyAnswer(io.RawIOBase):
    """`size` bytes of filler made on demand from one shared chunk, then `tail`: nothing else is ever held."""

    def __init__(self, size: int, tail: bytes, head: bytes = b"", line: bytes = FILLER) -> None:
        self._chunk = line * max(1, MIB // len(line))
        self._left = size
        self._pending = [head] if head else []
        self._tail = tail
        self._view = memoryview(b"")

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        if not self._view:
            if self._pending:
                self._view = memoryview(self._pending.pop())
            elif self._left > 0:
                take = min(self._left, len(self._chunk))
                self._view = memoryview(self._chunk)[:take]
                self._left -= take
            elif self._tail:
                self._view, self._tail = memoryview(self._tail), b""
            else:
                return 0
        n = min(len(buffer), len(self._view))
        buffer[:n] = self._view[:n]
        self._view = self._view[n:]
        return n


@pytest.fixture
def traced() -> Iterator[None]:
    tracemalloc.start()
    try:
        yield
    finally:
        tracemalloc.stop()


def peak_while(fn: Any) -> tuple[ParseResult, int]:
    tracemalloc.reset_peak()
    base = tracemalloc.get_traced_memory()[0]
    result = fn()
    return result, tracemalloc.get_traced_memory()[1] - base


def test_lazy_answer_yields_what_it_promises() -> None:
    data = io.BufferedReader(LazyAnswer(3 * MIB + 5, b"TAIL", head=b"HEAD")).read()
    assert data.startswith(b"HEAD" + FILLER) and data.endswith(b"TAIL")
    assert len(data) == 4 + 3 * MIB + 5 + 4


@pytest.mark.usefixtures("traced")
def test_300_mb_text_answer_parses_in_bounded_memory() -> None:
    size = 300 * MIB
    tail = b"\n" + block("COMPLETE", "true").encode() + b"\nbye\n"
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    result, peak = peak_while(lambda: parse_stream(io.BufferedReader(LazyAnswer(size, tail), MIB)))
    rss_growth = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss_before) * 1024
    assert result.outcome == "parsed"
    assert result.block is not None and result.block.exit_signal is True
    assert result.bytes_read == size + len(tail)
    assert peak < 16 * MIB, f"traced peak {peak / MIB:.1f} MiB for a {size // MIB} MiB answer"
    assert rss_growth < 64 * MIB, f"max RSS grew by {rss_growth / MIB:.1f} MiB"


@pytest.mark.usefixtures("traced")
def test_100_mb_stream_json_answer_parses_in_bounded_memory() -> None:
    size = 100 * MIB
    line = (tool_result("x" * 700) + "\n" + assistant_text("Looking at the next file. " * 20) + "\n").encode()
    text = "Done.\n" + block("COMPLETE", "true")
    tail = (assistant_text(text) + "\n" + result_event(text) + "\n").encode()
    head = (init_event() + "\n").encode()
    result, peak = peak_while(lambda: parse_stream(io.BufferedReader(LazyAnswer(size, tail, head, line), MIB)))
    assert (result.outcome, result.shape) == ("parsed", "claude-stream-json")
    assert result.earlier_blocks == []
    assert result.agent["cost_usd"] == 0.0125
    assert peak < 16 * MIB, f"peak {peak / MIB:.1f} MiB"


@pytest.mark.usefixtures("traced")
def test_bug_text_answer_starting_with_a_brace_parses_in_bounded_memory() -> None:
    tail = b"\n" + block().encode() + b"\n"
    result, peak = peak_while(lambda: parse_stream(io.BufferedReader(LazyAnswer(72 * MIB, tail, b"{\n"), MIB)))
    assert result.outcome == "parsed"
    assert peak < 16 * MIB, f"peak {peak / MIB:.1f} MiB"


@pytest.mark.usefixtures("traced")
def test_bug_answer_without_newlines_parses_in_bounded_memory() -> None:
    tail = b"\n" + block().encode() + b"\n"
    line = bytes(range(11, 256)) * 16  # no b"\n"
    result, peak = peak_while(lambda: parse_stream(io.BufferedReader(LazyAnswer(70 * MIB, tail, line=line), MIB)))
    assert result.outcome == "parsed"
    assert peak < 16 * MIB, f"peak {peak / MIB:.1f} MiB"


# --- other bugs found: each asserts the correct behaviour -----------------------------------------------------------

def test_bug_str_with_lone_surrogates_does_not_raise() -> None:
    result = parse_text("agent output \udcff\udcfe\n" + block())
    check_invariants(result)
    assert result.outcome == "parsed"


def test_bug_text_answer_whose_first_line_is_json_still_finds_the_block() -> None:
    result = parse_text('{"ok": true, "tests": 14}\nThat is the output of the health check.\n\n' + block() + "\n")
    assert result.outcome == "parsed"


@pytest.mark.parametrize("data", [
    '{"type":"assistant","message":"---DUN_STATUS---"}\n',
    '{"type":"assistant","message":["dun_status"]}\n',
    '{"type":"item.completed","item":"---DUN_STATUS---"}\n',
    '{"type":"item.completed","item":[1, "dun_status"]}\n',
    '{\n  "type": "assistant",\n  "message": 5\n}\n',
    '{\n  "type": "item.completed",\n  "item": "text"\n}\n',
])
def test_bug_json_events_with_unexpected_types_do_not_raise(data: str) -> None:
    result = parse_text(data)
    check_invariants(result)
    assert result.outcome == "no_status_block"


def test_bug_stream_json_final_result_without_a_block_is_not_answered_by_an_earlier_message() -> None:
    final = "Tests still fail (3 errors); I will continue in the next run."
    data = stream(init_event(), assistant_text("Looks done:\n" + block("COMPLETE", "true")),
                  tool_result("3 failed, 11 passed"), assistant_text(final), result_event(final))
    result = parse_text(data)
    assert result.outcome == "no_status_block"
    assert result.block is None


def test_bug_stream_json_two_blocks_in_the_final_message_are_recorded_once() -> None:
    final = block("IN_PROGRESS") + "\nActually finished:\n" + block("COMPLETE", "true")
    result = parse_text(stream(init_event(), assistant_text(final), result_event(final)))
    assert result.block is not None and result.block.status == "COMPLETE"
    assert [b["STATUS"] for b in result.earlier_blocks] == ["IN_PROGRESS"]


def test_bug_missing_end_marker_followed_by_a_long_tail_is_a_parse_error() -> None:
    result = parse_text(block().replace(END, "") + "\n" + "More notes about the change.\n" * 70)
    assert result.outcome == "parse_error"
    assert result.error is not None and END in result.error


def test_bug_codex_transient_error_before_a_completed_turn_is_not_an_agent_error() -> None:
    reconnect = json.dumps({"type": "error", "message": "Reconnecting... 1/5 (stream disconnected before completion: "
                                                        "error sending request for url)"})
    lines = codex("Fixed.\n" + block()).splitlines()
    lines.insert(2, reconnect)
    result = parse_text("\n".join(lines) + "\n")
    assert result.outcome == "parsed"
    assert result.agent.get("is_error") is not True


def test_bug_compact_gemini_json_error_is_recognised() -> None:
    result = parse_text(gemini("", {"type": "ApiError", "message": "Quota exceeded", "code": 429}, indent=None))
    assert result.shape == "gemini-json"
    assert result.agent.get("is_error") is True


# --- properties -----------------------------------------------------------------------------------------------------
# Text values start and end with a letter, digit or '_': a leading or trailing '*' or '`' is taken as markdown
# decoration by design.

_KNOWN = ("TASK_COMPLETED", "STATUS", "FILES_MODIFIED", "EXIT_SIGNAL", "NEXT_RECOMMENDATION")
_TEXT_CHARS = st.characters(blacklist_categories=("Cs", "Cc", "Zl", "Zp"))


def _plain_text(value: str) -> bool:
    return (bool(value) and (value[0].isalnum() or value[0] == "_") and (value[-1].isalnum() or value[-1] == "_")
            and "dun_status" not in value.lower())


texts = st.text(_TEXT_CHARS, min_size=1, max_size=60).filter(_plain_text)
task_texts = texts.filter(lambda v: v.lower() not in ("none", "n/a", "null"))
comments = st.text(st.sampled_from("abcdefghijklmnopqrstuvwxyz ABC0123456789.,:/-"), min_size=1, max_size=25)
extra_keys = st.from_regex(r"[A-Z][A-Z_]{0,10}[A-Z]", fullmatch=True).filter(
    lambda k: k not in _KNOWN and "DUN_STATUS" not in k)
prose_lines = st.one_of(
    st.sampled_from(["Done!", "The task is complete.", "EXIT_SIGNAL: true", "STATUS: COMPLETE", "FILES_MODIFIED: 9",
                     "**STATUS:** BLOCKED", "", "```", "> quoted prose", "- [x] item"]),
    st.text(_TEXT_CHARS, max_size=60).filter(lambda v: "dun_status" not in v.lower()))


@st.composite
def decorated_blocks(draw: st.DrawFn) -> tuple[str, StatusBlock]:
    """A block with random valid values, rendered with random tolerated decorations; and the block it means."""
    status = draw(st.sampled_from(STATUSES))
    exit_signal = draw(st.booleans())
    files = draw(st.none() | st.integers(0, 10**6))
    task = draw(st.none() | task_texts)
    nxt = draw(st.none() | texts)
    extra = draw(st.dictionaries(extra_keys, texts, max_size=2))

    status_words = [status, status.lower(), status.title()]
    if status == "IN_PROGRESS":
        status_words += ["IN PROGRESS", "in-progress", "In Progress"]
    bool_words = {True: ["true", "True", "TRUE", "yes", "Yes"], False: ["false", "False", "FALSE", "no", "No"]}

    def comment() -> str:
        return draw(st.sampled_from(["", "", "  # {}", " ({})", ", {}", " -- {}"])).format(draw(comments))

    def value_decor(value: str, quotes: bool = False) -> str:
        choices = ["{}", "**{}**", "`{}`"] + (['"{}"'] if quotes else [])
        return draw(st.sampled_from(choices)).format(value)

    values: dict[str, str] = {
        "STATUS": value_decor(draw(st.sampled_from(status_words))) + comment(),
        "EXIT_SIGNAL": value_decor(draw(st.sampled_from(bool_words[exit_signal]))) + comment(),
    }
    if files is not None:
        values["FILES_MODIFIED"] = value_decor(str(files)) + draw(st.sampled_from(["", " (a.py, b.py)", "  # new",
                                                                                   " files"]))
    if task is not None:
        values["TASK_COMPLETED"] = value_decor(task, quotes=True)
    if nxt is not None:
        values["NEXT_RECOMMENDATION"] = value_decor(nxt, quotes=True)
    for key, value in extra.items():
        values[key] = value_decor(value)

    key_case = draw(st.sampled_from([str.upper, str.lower, str.title]))
    key_spaces = draw(st.booleans())
    bold_keys = draw(st.sampled_from(["{k}: ", "**{k}:** ", "**{k}**: ", "{k} : ", "{k}:\t", "{k}:   "]))
    bullet = draw(st.sampled_from(["", "- ", "* "]))
    indent = draw(st.sampled_from(["", "  ", "\t"]))
    trailing = draw(st.sampled_from(["", " ", "  \t"]))
    markers = draw(st.sampled_from([("---DUN_STATUS---", "---END_DUN_STATUS---"),
                                    ("---dun_status---", "---end_dun_status---"),
                                    ("**---DUN_STATUS---**", "**---END_DUN_STATUS---**"),
                                    ("### ---DUN_STATUS---", "### ---END_DUN_STATUS---"),
                                    ("--- DUN_STATUS ---", "--- END_DUN_STATUS ---")]))
    lines = [indent + markers[0] + trailing]
    for key in draw(st.permutations(list(values))):
        shown = key_case(key.replace("_", " ") if key_spaces else key)
        lines.append(indent + bullet + bold_keys.format(k=shown) + values[key] + trailing)
    lines.append(indent + markers[1] + trailing)
    fence = draw(st.sampled_from([None, "```", "```text", "~~~"]))
    if fence:
        lines = [fence, *lines, "```" if fence.startswith("`") else "~~~"]
    if draw(st.booleans()):
        lines = ["> " + line for line in lines]
    lines = draw(st.lists(prose_lines, max_size=4)) + lines + draw(st.lists(prose_lines, max_size=4))
    newline = draw(st.sampled_from(["\n", "\r\n"]))
    text = newline.join(lines) + draw(st.sampled_from(["", newline]))
    expected = StatusBlock(status=status, exit_signal=exit_signal, task_completed=task, files_modified=files,
                           next_recommendation=nxt, extra={k: v for k, v in extra.items()})
    return text, expected


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(decorated_blocks())
def test_decorated_blocks_are_read_exactly(case: tuple[str, StatusBlock]) -> None:
    text, expected = case
    result = parse_text(text)
    assert (result.outcome, result.error) == ("parsed", None), result.to_dict()
    assert result.block == expected
    assert result.shape == "text"


def _embeddings(text: str, ascii_only: bool) -> dict[str, str]:
    def dumps(obj: Any, **kw: Any) -> str:
        return json.dumps(obj, ensure_ascii=ascii_only, **kw)

    assistant = dumps({"type": "assistant", "message": {"role": "assistant",
                                                        "content": [{"type": "text", "text": text}]}})
    result = dumps({"type": "result", "subtype": "success", "is_error": False, "result": text, "session_id": SID,
                    "total_cost_usd": 0.01, "num_turns": 1})
    return {
        "claude-json": result + "\n",
        "claude-stream-json": stream(init_event(), assistant, result),
        "claude-stream-json-killed": stream(init_event(), tool_result("ok"), assistant),
        "codex-jsonl": "".join(dumps(e) + "\n" for e in [
            {"type": "thread.started", "thread_id": "t1"}, {"type": "turn.started"},
            {"type": "item.completed", "item": {"id": "item_1", "type": "agent_message", "text": text}},
            {"type": "turn.completed", "usage": {"input_tokens": 1, "cached_input_tokens": 0, "output_tokens": 1}}]),
        "gemini-json": dumps({"response": text, "stats": {"models": {}}}, indent=2) + "\n",
    }


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(decorated_blocks(), st.booleans())
def test_the_same_block_in_every_shape_gives_the_same_status(case: tuple[str, StatusBlock], ascii_only: bool) -> None:
    text, expected = case
    assert parse_text(text).block == expected
    for shape, data in _embeddings(text, ascii_only).items():
        result = parse_text(data)
        assert result.shape == shape.removesuffix("-killed"), shape
        assert result.outcome == "parsed", (shape, result.to_dict())
        assert result.block == expected, shape
        assert result.earlier_blocks == [], shape


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.binary(max_size=3000), st.text(max_size=2000)))
def test_arbitrary_input_never_raises(data: str | bytes) -> None:
    result = parse_text(data)
    check_invariants(result)
    assert result.bytes_read == len(data.encode() if isinstance(data, str) else data)


_VOCAB = st.sampled_from([
    "---DUN_STATUS---", "---END_DUN_STATUS---", "> ---DUN_STATUS---", "**---END_DUN_STATUS---**", "STATUS: COMPLETE",
    "STATUS: in progress", "STATUS: MAYBE", "STATUS: COMPLETE | BLOCKED", "EXIT_SIGNAL: true", "EXIT_SIGNAL: no",
    "EXIT_SIGNAL: <bool>", "FILES_MODIFIED: 3 (a.py)", "FILES_MODIFIED: many", "TASK_COMPLETED: none", "X: y", "",
    "```", "{", "}", "[", '{"type":"result"', '{"type": "system"}', '{"response": 1}', "\r", "\x00", "\udcff",
])


@st.composite
def json_events(draw: st.DrawFn) -> str:
    text = "\n".join(draw(st.lists(st.one_of(_VOCAB, st.text(max_size=20)), max_size=8)))
    kind = draw(st.sampled_from(["result", "assistant", "system", "rate_limit_event", "thread.started",
                                 "turn.completed", "turn.failed", "item.completed", "error", "gemini", "user"]))
    scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5)
    anything = st.recursive(scalars, lambda inner: st.lists(inner, max_size=3)
                            | st.dictionaries(st.text(max_size=5), inner, max_size=3), max_leaves=6)
    obj: dict[str, Any]
    if kind == "result":
        obj = {"type": "result", "result": text, "is_error": draw(st.booleans()), "total_cost_usd": draw(anything),
               "permission_denials": draw(anything), "session_id": draw(anything), "usage": draw(anything)}
    elif kind == "assistant":
        obj = {"type": "assistant", "message": {"content": [{"type": "text", "text": text}, draw(anything)]}}
    elif kind == "item.completed":
        obj = {"type": "item.completed", "item": {"type": draw(st.sampled_from(["agent_message", "reasoning"])),
                                                  "text": text}}
    elif kind == "turn.completed":
        obj = {"type": kind, "usage": draw(st.dictionaries(st.text(max_size=5), anything, max_size=3))}
    elif kind == "gemini":
        obj = {"response": text, "stats": draw(anything), "error": draw(anything)}
    else:
        obj = {"type": kind, "error": draw(anything), "message": draw(anything) if kind == "error" else None,
               "thread_id": draw(anything), "rate_limit_info": draw(anything), "text": text}
    return json.dumps(obj, ensure_ascii=draw(st.booleans()), indent=draw(st.sampled_from([None, None, 2])))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.one_of(_VOCAB, json_events(), st.text(max_size=30)), max_size=25),
       st.sampled_from(["\n", "\r\n"]))
def test_structured_noise_never_raises(parts: list[str], newline: str) -> None:
    text = newline.join(parts)
    assume(not any(ch.isdigit() and not ch.isdecimal() for ch in text))  # test_bug_superscript_digit_...
    data = text.encode("utf-8", "surrogateescape" if "\udcff" in text else "strict")
    result = parse_text(data)
    check_invariants(result)
    if result.outcome == "parsed":
        assert result.block is not None and result.block.status in STATUSES
