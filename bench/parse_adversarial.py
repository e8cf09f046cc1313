"""Status parsing on hostile answers: `parse_stream` over 300 MB built to make a parser slow or hungry.

Kinds (each a file of --size-mb, and one of a quarter of it, for the linearity ratio):
  distinct-blocks   complete status blocks, each different (every earlier block is context the parser may keep)
  start-markers     only `---DUN_STATUS---` lines (every line opens a block and discards the previous one)
  long-fields       blocks whose field lines are 1 MB of ` _` without a colon (backtracking in a field regex)
  stream-blocks     Claude stream-json assistant messages, each ending with a distinct block
  jsonl-matches     64 MB JSONL lines full of `"type":"result"` and `"error"` (walking back once per match)

Each file is parsed in a fresh interpreter, which reports its parse time and its own peak RSS (VmHWM). Printed per
kind: MB/s, peak RSS, and time(full) / time(quarter) / 4, which stays near 1 when the time is linear in the size.
Targets: peak RSS <= 300 MiB for every kind and the linearity ratio <= 1.5. Figures are recorded in
docs/benchmarks.md; they are printed, not asserted by a test (tests/robustness/test_parsing.py checks the bounds on
small inputs).
Run: .venv/bin/python bench/parse_adversarial.py [--size-mb M] [--kinds a,b]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

TARGET_RSS_MIB = 300.0  # the 64 MB cap on one JSONL event dominates: the line, its chunk, its decoding
TARGET_RATIO = 1.5

CHILD = r"""
import json, sys, time
from dun.answer.transcript import parse_stream
start = time.perf_counter()
with open(sys.argv[1], "rb") as fh:
    result = parse_stream(fh)
seconds = time.perf_counter() - start
hwm_kb = 0
with open("/proc/self/status", encoding="ascii") as fh:
    for line in fh:
        if line.startswith("VmHWM:"):
            hwm_kb = int(line.split()[1])
print(json.dumps({"seconds": seconds, "hwm_kb": hwm_kb, "outcome": result.outcome, "notes": len(result.notes),
                  "earlier": len(result.earlier_blocks), "bytes_read": result.bytes_read}))
"""


def _block(i: int) -> bytes:
    return (b"---DUN_STATUS---\nTASK_COMPLETED: task-%d\nSTATUS: IN_PROGRESS\nFILES_MODIFIED: %d\n"
            b"EXIT_SIGNAL: false\nNEXT_RECOMMENDATION: go on with %d\n---END_DUN_STATUS---\n" % (i, i % 7, i))


def distinct_blocks() -> Iterator[bytes]:
    i = 0
    while True:
        yield b"".join(_block(i + k) for k in range(1000))
        i += 1000


def start_markers() -> Iterator[bytes]:
    chunk = b"---DUN_STATUS---\n" * 60000
    while True:
        yield chunk


def long_fields() -> Iterator[bytes]:
    line = b"a" + b" _" * (1 << 18) + b"\n"  # 512 KB, no colon (longer lines are skipped unread)
    while True:
        yield b"---DUN_STATUS---\n" + line * 8 + b"---END_DUN_STATUS---\n"


def stream_blocks() -> Iterator[bytes]:
    i = 0
    while True:
        events = []
        for k in range(200):
            text = "Working on it.\n\n" + _block(i + k).decode()
            events.append(json.dumps({"type": "assistant", "message": {"role": "assistant", "content": [
                {"type": "text", "text": text}]}}))
        yield ("\n".join(events) + "\n").encode()
        i += 200


def jsonl_matches() -> Iterator[bytes]:
    filler = b'"type":"result","error":1,' * ((64 << 20) // 26 - 1)
    line = b'{"a":{' + filler + b'"z":0}}\n'
    while True:
        yield line


KINDS: dict[str, Callable[[], Iterator[bytes]]] = {
    "distinct-blocks": distinct_blocks, "start-markers": start_markers, "long-fields": long_fields,
    "stream-blocks": stream_blocks, "jsonl-matches": jsonl_matches,
}


def generate(path: Path, kind: str, size: int) -> None:
    written = 0
    with path.open("wb") as fh:
        for chunk in KINDS[kind]():
            if written >= size:
                break
            written += fh.write(chunk[: size - written])


def parse(path: Path) -> dict[str, float]:
    proc = subprocess.run([sys.executable, "-c", CHILD, str(path)], capture_output=True, stdin=subprocess.DEVNULL)
    if proc.returncode != 0:
        sys.exit(f"parsing {path.name} failed ({proc.returncode}): {proc.stderr.decode(errors='replace')[-500:]}")
    out: dict[str, float] = json.loads(proc.stdout)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size-mb", type=int, default=300)
    ap.add_argument("--kinds", default=",".join(KINDS))
    args = ap.parse_args()
    size = args.size_mb * 1_000_000
    failed = False
    print(f"{'kind':<16} {'MB':>5} {'seconds':>8} {'MB/s':>6} {'peak MiB':>8} {'ratio':>6}  outcome, notes, earlier")
    with tempfile.TemporaryDirectory(prefix="dun-adversarial-") as tmp:
        for kind in args.kinds.split(","):
            path = Path(tmp) / f"{kind}.txt"
            generate(path, kind, size // 4)
            quarter = parse(path)
            generate(path, kind, size)
            full = parse(path)
            path.unlink()
            ratio = full["seconds"] / max(quarter["seconds"], 1e-6) / 4
            rss = full["hwm_kb"] / 1024
            failed |= rss > TARGET_RSS_MIB or ratio > TARGET_RATIO
            print(f"{kind:<16} {size / 1e6:>5.0f} {full['seconds']:>8.1f} {size / 1e6 / full['seconds']:>6.1f} "
                  f"{rss:>8.0f} {ratio:>6.2f}  {full['outcome']}, {full['notes']:.0f}, {full['earlier']:.0f}")
    print(f"targets: peak RSS <= {TARGET_RSS_MIB:.0f} MiB, ratio <= {TARGET_RATIO}: {'FAIL' if failed else 'pass'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
