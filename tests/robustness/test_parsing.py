"""Answers built to make the status parser slow or hungry, at sizes a test affords (the 300 MB figures come from
bench/parse_adversarial.py and are in docs/benchmarks.md). The bounds are generous: the quadratic parser this
replaces took minutes on each of these, the linear one takes a second or less."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import time
from pathlib import Path

from dun.answer.block import MAX_BLOCKS, MAX_NOTES
from dun.answer.transcript import ParseResult, parse_stream


def timed(data: bytes) -> tuple[ParseResult, float]:
    start = time.perf_counter()
    result = parse_stream(io.BytesIO(data))
    return result, time.perf_counter() - start


def block(i: int) -> bytes:
    return (b"---DUN_STATUS---\nTASK_COMPLETED: task-%d\nSTATUS: IN_PROGRESS\nEXIT_SIGNAL: false\n"
            b"---END_DUN_STATUS---\n" % i)


def test_sixty_thousand_distinct_blocks_keep_the_last_and_a_bounded_context() -> None:
    result, seconds = timed(b"".join(block(i) for i in range(60_000)))
    assert result.outcome == "parsed" and result.block is not None
    assert result.block.task_completed == "task-59999"
    assert len(result.earlier_blocks) <= MAX_BLOCKS
    assert seconds < 20


def test_start_markers_only_leave_bounded_notes() -> None:
    result, seconds = timed(b"---DUN_STATUS---\n" * 200_000)
    assert result.outcome == "parse_error"
    assert len(result.notes) <= MAX_NOTES + 2
    assert seconds < 20


def test_a_megabyte_field_line_without_a_colon_is_linear() -> None:
    result, seconds = timed(b"---DUN_STATUS---\nSTATUS: COMPLETE\nEXIT_SIGNAL: true\na" + b" _" * 400_000
                            + b"\n---END_DUN_STATUS---\n")
    assert result.outcome == "parsed"
    assert seconds < 5


def test_a_long_jsonl_line_full_of_matches_is_walked_once() -> None:
    line = b'{"type":"system","x":{' + b'"type":"result","error":1,' * 400_000 + b'"z":0}}\n'
    answer = line + json.dumps({"type": "result", "result": block(7).decode(), "total_cost_usd": 0.5}).encode()
    result, seconds = timed(answer + b"\n")
    assert (result.outcome, result.shape) == ("parsed", "claude-stream-json")
    assert seconds < 10


def test_forty_megabytes_of_start_markers_in_bounded_memory(tmp_path: Path) -> None:
    answer = tmp_path / "answer.txt"
    answer.write_bytes(b"---DUN_STATUS---\n" * 2_400_000)
    # VmHWM, not ru_maxrss: that one starts from the RSS of the process the child was forked from
    child = ("import sys\nfrom dun.answer.transcript import parse_stream\n"
             "r = parse_stream(open(sys.argv[1], 'rb'))\n"
             "hwm = [int(l.split()[1]) for l in open('/proc/self/status') if l.startswith('VmHWM:')][0]\n"
             "print(r.outcome, len(r.notes), hwm // 1024)")
    out = subprocess.run([sys.executable, "-c", child, str(answer)], capture_output=True, text=True, timeout=120,
                         check=True)
    outcome, notes, peak_mib = out.stdout.split()
    assert outcome == "parse_error" and int(notes) <= MAX_NOTES + 2
    assert int(peak_mib) < 100  # the interpreter and dun take about 20 MiB; the old parser kept a note per line
