"""The agent's output as `dun watch` and `dun logs -f` show it, from the recorded output of each CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dun.agents.stream import TAIL_BYTES, output_tail, readable

TESTS = Path(__file__).resolve().parents[1]


def shown(name: str) -> list[str]:
    return readable((TESTS / name).read_bytes())


def test_claude_stream_json_shows_the_text_the_tools_and_the_result() -> None:
    lines = shown("corpus/claude_stream_json_complete.jsonl")
    assert lines[0] == "(session started: claude-sonnet-4-5)"
    assert "I'll start by running the linter." in lines
    assert "> Bash: ruff check ." in lines and "> Edit: /home/dev/helix/src/greet.py" in lines
    assert "(rate limit: allowed_warning)" in lines
    assert lines[-1] == "(done: success, $0.2417)"
    assert not any(line.startswith("{") for line in lines), "an event was shown raw"


@pytest.mark.parametrize(("name", "expected"), [
    ("corpus/codex_exec.jsonl", ["> $ bash -lc 'sed -n 1,40p src/greet.py'",
                                 "> edit: src/greet.py, tests/test_greet.py",
                                 "Added the missing docstring and a test for `greet()` with an empty name."]),
    ("corpus/codex_turn_failed.jsonl", ["(error: stream disconnected before completion: You exceeded your current "
                                        "quota, please check your plan and billing details.)"]),
    ("e2e/corpus/opencode_1.18.33_ok_stdout.jsonl", ["Ticked box x in MISSION.md and committed it."]),
    ("e2e/corpus/pi_0.73.1_ok_stdout.jsonl", ["> bash: sed -i 's/^- \\[ \\] x$/- [x] x/' MISSION.md && git add "
                                              "MISSION.md && git commit -q -m 'Tick box x'",
                                              "Ticked box x in MISSION.md and committed it."]),
    ("e2e/corpus/pi_0.73.1_429_stdout.jsonl", ["(error: 429 Rate limit reached for requests. Please try again in "
                                               "20s.)"]),
    ("e2e/corpus/gemini_0.61.0_stream_ok_stdout.jsonl", ["> run_shell_command: sed -i 's/^- \\[ \\] x$/- [x] x/' "
                                                         "MISSION.md && git add MISSION.md && git commit -q -m 'Tick "
                                                         "box x'", "Ticked box x in MISSION.md and committed it.",
                                                         "(done: success)"]),
    ("e2e/corpus/gemini_0.61.0_stream_429_stdout.jsonl", ["(error: [API Error: Rate limit reached for requests. "
                                                          "Please try again in 20s.])"]),
    ("corpus/gemini_complete.json", ["I rewrote the CHANGELOG entry for 0.4.0 and fixed the two broken anchors."]),
    ("corpus/gemini_error.json", ["(error: [API Error: You have exhausted your capacity on this model. Your quota "
                                  "will reset after 2h13m.])"]),
])
def test_each_cli_reads_as_lines_a_person_follows(name: str, expected: list[str]) -> None:
    lines = shown(name)
    for line in expected:
        assert line in lines, (line, lines)
    assert not any(line.lstrip().startswith(("{", '"')) for line in lines), lines


def test_a_text_agents_lines_show_as_they_are_without_terminal_codes() -> None:
    data = b"\x1b[1mApplied edit to app.py\x1b[0m\r\n\nCommit 3f2a1 Fix the parser\n"
    assert readable(data) == ["Applied edit to app.py", "Commit 3f2a1 Fix the parser"]


def test_the_tail_of_a_large_output_leaves_out_the_cut_line_and_the_line_still_being_written(tmp_path: Path) -> None:
    out = tmp_path / "iteration-1.out"
    events = [json.dumps({"type": "assistant", "message": {"content": [{"type": "text", "text": f"step {i}"}]}})
              for i in range(3000)]
    out.write_text("\n".join(events) + "\n" + '{"type": "assistant", "mess', encoding="utf-8")
    assert out.stat().st_size > TAIL_BYTES
    tail = output_tail(out, 5)
    assert tail == [f"step {i}" for i in range(2995, 3000)]
    assert all(line.startswith("step ") for line in output_tail(out, 10_000)), "a cut event was shown raw"
    assert output_tail(tmp_path / "missing.out", 5) == []
