"""Status parsing: `parse_stream` over a 200 MB agent answer, as raw text and as Claude stream-json.

The answers are generated in a temp dir with a fixed seed: the text one from realistic log, test-output, diff and
prose lines; the stream-json one from realistic events of 0.5-2 KB (assistant text and tool_use, user tool_result,
rate_limit_event), both with a valid status block near the end. Each run parses one file in a fresh interpreter,
which reports its parse time and its own peak RSS (VmHWM, so the parent's memory never counts).

Targets, per shape: median throughput >= 100 MB/s (MB = 10^6 bytes) and peak RSS <= 100 MiB (the worst run).
Run: .venv/bin/python bench/status_parse.py [--runs N] [--size-mb M]
"""

from __future__ import annotations

import json
import random
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import EXIT_BROKEN, EXIT_FAIL, EXIT_PASS, Run, broken, parser

TARGET_MB_S = 100.0
TARGET_RSS_MIB = 100.0
SIZE_MB = 200
SEED = 20261121
SID = "9f1c2b7e-4d3a-4c51-9a0e-2f6b8d4e1a73"
BLOCK = ("---DUN_STATUS---\nTASK_COMPLETED: lint-ruff@src/cli.py:27\nSTATUS: COMPLETE\nFILES_MODIFIED: 3\n"
         "EXIT_SIGNAL: true\nNEXT_RECOMMENDATION: none, every check passes\n---END_DUN_STATUS---")
EXPECTED_BLOCK = {"task_completed": "lint-ruff@src/cli.py:27", "status": "COMPLETE", "files_modified": 3,
                  "exit_signal": True, "next_recommendation": "none, every check passes", "extra": {}}

# Runs in a fresh interpreter per measurement: parse time, result, and this process's own peak RSS.
CHILD = r"""
import json, resource, sys, time
from dun.answer.transcript import parse_stream
start = time.perf_counter()
with open(sys.argv[1], "rb") as fh:
    result = parse_stream(fh)
seconds = time.perf_counter() - start
hwm_kb = None
try:
    with open("/proc/self/status", encoding="ascii") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                hwm_kb = int(line.split()[1])
except OSError:
    pass
if hwm_kb is None:  # no procfs: ru_maxrss (KiB on Linux, bytes on macOS)
    maxrss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    hwm_kb = maxrss // 1024 if sys.platform == "darwin" else maxrss
print(json.dumps({"seconds": seconds, "hwm_kb": hwm_kb, "outcome": result.outcome, "shape": result.shape,
                  "status": result.block.to_dict() if result.block else None, "bytes_read": result.bytes_read,
                  "error": result.error}))
"""

WORDS = ["the", "parser", "check", "config", "file", "test", "module", "function", "returns", "value", "error",
         "line", "branch", "cache", "index", "commit", "status", "block", "answer", "agent", "loop", "retry", "limit",
         "token", "budget", "run", "step", "item", "plan", "docs", "link", "coverage", "threshold", "import",
         "unused", "type", "hint", "timeout", "fixture"]
PATHS = ["src/cli.py", "src/greet.py", "src/store.py", "src/sync/client.py", "src/sync/retry.py", "tests/test_cli.py",
         "tests/test_sync.py", "tests/test_store.py", "docs/usage.md", "README.md", "pyproject.toml"]


def _sentence(rnd: random.Random, lo: int = 6, hi: int = 22) -> str:
    words = rnd.choices(WORDS, k=rnd.randint(lo, hi))
    return " ".join(words).capitalize() + rnd.choice([".", ".", ".", ":", "?"])


def _text_pool(rnd: random.Random) -> list[str]:
    """Lines an agent's text answer or a captured log is made of (none holds a status marker)."""
    pool: list[str] = []
    for _ in range(6000):
        path = rnd.choice(PATHS)
        kind = rnd.randrange(8)
        if kind == 0:
            outcome = rnd.choice(["PASSED", "PASSED", "PASSED", "FAILED", "SKIPPED"])
            pool.append(f"{path}::test_{rnd.choice(WORDS)}_{rnd.choice(WORDS)} {outcome}  [{rnd.randint(0, 100):3d}%]")
        elif kind == 1:
            pool.append(f"2025-11-21T{rnd.randint(0, 23):02d}:{rnd.randint(0, 59):02d}:{rnd.randint(0, 59):02d}Z "
                        f"{rnd.choice(['INFO', 'DEBUG', 'WARN'])} {rnd.choice(WORDS)}: {_sentence(rnd, 4, 12)}")
        elif kind == 2:
            pool.append(f"{rnd.choice('+- ')}    {rnd.choice(WORDS)} = {rnd.choice(WORDS)}({rnd.choice(WORDS)}, "
                        f"{rnd.randint(0, 999)})")
        elif kind == 3:
            pool.append(f"{path}:{rnd.randint(1, 400)}:{rnd.randint(1, 80)}: {rnd.choice(['F401', 'E501', 'B008'])} "
                        f"{_sentence(rnd, 3, 8)}")
        elif kind == 4:
            pool.append("")
        else:
            pool.append(" ".join(_sentence(rnd) for _ in range(rnd.randint(1, 4))))
    return [line + "\n" for line in pool]


def _event(kind: str, **body: Any) -> str:
    return json.dumps({"type": kind, **body, "session_id": SID}, separators=(",", ":")) + "\n"


def _assistant(rnd: random.Random, content: list[dict[str, Any]]) -> str:
    msg_id = "msg_01" + "".join(rnd.choices("ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz0123456789", k=22))
    return _event("assistant", message={"id": msg_id, "type": "message", "role": "assistant",
                                        "model": "claude-sonnet-4-5", "content": content,
                                        "stop_reason": None, "stop_sequence": None,
                                        "usage": {"input_tokens": rnd.randint(1, 9),
                                                  "cache_creation_input_tokens": rnd.randint(0, 3000),
                                                  "cache_read_input_tokens": rnd.randint(5000, 90000),
                                                  "output_tokens": rnd.randint(20, 900)}},
                  parent_tool_use_id=None, uuid=f"{rnd.getrandbits(128):032x}")


def _stream_pool(rnd: random.Random, text_lines: list[str]) -> list[str]:
    """stream-json events of about 0.5-2 KB each."""
    pool: list[str] = []
    for _ in range(3000):
        kind = rnd.randrange(10)
        tool_id = "toolu_01" + f"{rnd.getrandbits(96):024x}"
        if kind < 3:
            text = " ".join(_sentence(rnd) for _ in range(rnd.randint(3, 12)))
            pool.append(_assistant(rnd, [{"type": "text", "text": text}]))
        elif kind < 5:
            path = rnd.choice(PATHS)
            tool = rnd.choice([
                {"name": "Bash", "input": {"command": f"pytest -q {path} -k {rnd.choice(WORDS)}",
                                           "description": _sentence(rnd, 3, 6)}},
                {"name": "Read", "input": {"file_path": f"/home/dev/helix/{path}"}},
                {"name": "Edit", "input": {"file_path": f"/home/dev/helix/{path}",
                                           "old_string": "".join(rnd.choices(text_lines, k=rnd.randint(2, 5))),
                                           "new_string": "".join(rnd.choices(text_lines, k=rnd.randint(2, 5)))}},
            ])
            pool.append(_assistant(rnd, [{"type": "text", "text": _sentence(rnd)},
                                         {"type": "tool_use", "id": tool_id, **tool}]))
        elif kind < 9 or rnd.random() < 0.8:  # a rate_limit_event in about 2% of the events
            out = "".join(rnd.choices(text_lines, k=rnd.randint(4, 22)))[:1700]
            pool.append(_event("user", message={"role": "user", "content": [
                {"tool_use_id": tool_id, "type": "tool_result", "content": out, "is_error": rnd.random() < 0.1}]},
                parent_tool_use_id=None, uuid=f"{rnd.getrandbits(128):032x}"))
        else:
            pool.append(_event("rate_limit_event", rate_limit_info={
                "status": "allowed", "resetsAt": 1767225600 + rnd.randint(0, 9999), "rateLimitType": "five_hour",
                "utilization": round(rnd.random(), 2)}, uuid=f"{rnd.getrandbits(128):032x}"))
    return pool


def _write(path: Path, size: int, head: str, pool: list[str], tail: str, rnd: random.Random) -> None:
    """`head`, then lines drawn from `pool` until about `size` bytes, then `tail`."""
    target = size - len(tail.encode())
    with path.open("wb") as fh:
        written = fh.write(head.encode())
        while written < target:
            chunk = "".join(rnd.choices(pool, k=2000)).encode()[: target - written]
            cut = chunk.rfind(b"\n") + 1  # whole lines only
            if cut == 0:
                break
            written += fh.write(chunk[:cut])
        fh.write(tail.encode())


def generate(tmp: Path, size: int) -> dict[str, Path]:
    rnd = random.Random(SEED)
    lines = _text_pool(rnd)
    text_path = tmp / "answer.txt"
    tail_text = ("\nAll checks pass now; here is my summary of the run.\n\n" + BLOCK + "\n\n"
                 + "".join(rnd.choices(lines, k=5)))
    _write(text_path, size, "", lines, tail_text, rnd)

    stream_path = tmp / "answer.jsonl"
    head = _event("system", subtype="init", cwd="/home/dev/helix", tools=["Bash", "Read", "Edit", "Write"],
                  model="claude-sonnet-4-5", permissionMode="acceptEdits", claude_code_version="2.1.197",
                  uuid=f"{rnd.getrandbits(128):032x}")
    final = "Both ruff findings are fixed and the tests pass.\n\n" + BLOCK
    result = {"type": "result", "subtype": "success", "is_error": False, "api_error_status": None,
              "duration_ms": 3601722, "num_turns": 412, "result": final, "stop_reason": "end_turn",
              "session_id": SID, "total_cost_usd": 38.21, "usage": {"input_tokens": 81231, "output_tokens": 90211},
              "permission_denials": [], "terminal_reason": "completed", "uuid": f"{rnd.getrandbits(128):032x}"}
    tail_stream = (_assistant(rnd, [{"type": "text", "text": final}])
                   + json.dumps(result, separators=(",", ":")) + "\n")
    _write(stream_path, size, head, _stream_pool(rnd, lines), tail_stream, rnd)
    return {"text": text_path, "claude-stream-json": stream_path}


def parse_once(path: Path, shape: str) -> dict[str, Any]:
    proc = subprocess.run([sys.executable, "-c", CHILD, str(path)], stdin=subprocess.DEVNULL, capture_output=True)
    run = Run(0.0, proc.returncode, proc.stdout, proc.stderr)
    if proc.returncode != 0:
        broken(f"parsing {path.name} failed with exit code {proc.returncode}", run)
    out = json.loads(proc.stdout)
    if (out["outcome"], out["shape"], out["status"]) != ("parsed", shape, EXPECTED_BLOCK):
        broken(f"{path.name}: unexpected result {out}", run)
    if out["bytes_read"] != path.stat().st_size:
        broken(f"{path.name}: read {out['bytes_read']} of {path.stat().st_size} bytes", run)
    return out


def measure(path: Path, shape: str, runs: int, warmup: int = 1) -> list[dict[str, Any]]:
    samples = [parse_once(path, shape) for _ in range(warmup + runs)]
    return samples[warmup:]


def report(shape: str, path: Path, samples: list[dict[str, Any]], fmt: Callable[[float], str]) -> bool:
    size = path.stat().st_size
    seconds = [s["seconds"] for s in samples]
    median = statistics.median(seconds)
    throughput = size / 1e6 / median
    peak_mib = max(s["hwm_kb"] for s in samples) / 1024
    speed_ok = throughput >= TARGET_MB_S
    rss_ok = peak_mib <= TARGET_RSS_MIB
    print(f"== status parse: {shape} ({size / 1e6:.0f} MB)")
    print(f"  command   {Path(sys.executable).name} -c 'parse_stream(open(path, \"rb\"))' {path.name}")
    print(f"  runs      {', '.join(fmt(s) for s in seconds)}")
    print(f"  median    {fmt(median)}   {throughput:.1f} MB/s   target >= {TARGET_MB_S:g} MB/s   "
          f"{'PASS' if speed_ok else 'FAIL'}")
    print(f"  peak RSS  {peak_mib:.1f} MiB (worst of {len(samples)} runs, VmHWM of the child)   "
          f"target <= {TARGET_RSS_MIB:g} MiB   {'PASS' if rss_ok else 'FAIL'}")
    return speed_ok and rss_ok


def main() -> int:
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--size-mb", type=int, default=SIZE_MB, help=f"answer size in MB (default {SIZE_MB})")
    args = p.parse_args()
    if args.runs < 1 or args.size_mb < 1:
        print("--runs and --size-mb must be at least 1", file=sys.stderr)
        return EXIT_BROKEN

    def fmt(seconds: float) -> str:
        return f"{seconds * 1000:.0f} ms" if seconds < 1 else f"{seconds:.3f} s"

    ok = True
    with tempfile.TemporaryDirectory(prefix="dun-bench-status-") as tmp:
        paths = generate(Path(tmp), args.size_mb * 1_000_000)
        for shape, path in paths.items():
            ok &= report(shape, path, measure(path, shape, args.runs), fmt)
    return EXIT_PASS if ok else EXIT_FAIL


if __name__ == "__main__":
    sys.exit(main())
