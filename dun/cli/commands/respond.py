"""`dun respond`: read an agent's answer, record the handoff (and the iteration log in a loop), print the status."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import BinaryIO

from dun.answer.handoff import build_handoff, ensure_runtime_dir, read_json, write_handoff
from dun.answer.transcript import ParseResult, parse_stream
from dun.core.atomic import write_json_atomic
from dun.core.errors import EXIT_OK, UsageError
from dun.core.git import find_repo

EXIT_NO_BLOCK = 4


def _open(source: str | None) -> BinaryIO:
    if source in (None, "-"):
        if sys.stdin is None or sys.stdin.isatty():
            raise UsageError("no answer given: pipe it in (`... | dun respond -`) or use --file FILE")
        return sys.stdin.buffer
    path = Path(source)
    if not path.is_file():
        raise UsageError(f"{source}: no such file")
    try:
        return path.open("rb")
    except OSError as exc:
        raise UsageError(f"{source}: cannot read: {exc.strerror or exc}") from None


def record_iteration_log(root: Path, iteration: int, parsed: ParseResult) -> Path:
    """Add the parsed answer to `.dun/logs/iteration-N.json`, keeping what the loop already wrote there."""
    path = ensure_runtime_dir(root) / "logs" / f"iteration-{iteration}.json"
    log = read_json(path) or {"schema_version": 1, "iteration": iteration}
    log["status_block"] = parsed.block.to_dict() if parsed.block else None
    log["parse_error"] = parsed.error if parsed.outcome != "parsed" else None
    log["parse_outcome"] = parsed.outcome
    log["answer_shape"] = parsed.shape
    log.setdefault("agent_facts", {}).update(parsed.agent)
    write_json_atomic(path, log)
    return path


def run_respond(source: str | None, file: str | None, iteration: int | None, path: str | None,
                decide: bool = False, before: bool = False, all_pass: bool = False,
                exit_code: int | None = None) -> int:
    if before or all_pass:
        if not decide:
            raise UsageError("--before and --all-pass go with --decide")
        from dun.loop.stepper import decide_all_pass, decide_before

        return decide_before(path) if before else decide_all_pass(path)
    if source is not None and file is not None:
        raise UsageError("give the answer either as --file FILE or as '-' for stdin, not both")
    stream = _open(file if file is not None else source)
    try:
        parsed = parse_stream(stream)
    finally:
        if stream is not sys.stdin.buffer:
            stream.close()
    if decide:
        if file is None:
            raise UsageError("--decide needs the answer as --file F (the script keeps it in .dun/logs/)")
        from dun.loop.stepper import decide_after

        return decide_after(path, parsed, Path(file), exit_code)
    root = find_repo(path).root
    handoff = build_handoff(root, parsed, iteration)
    write_handoff(root, handoff)
    if iteration is not None:
        record_iteration_log(root, iteration, parsed)
    sys.stdout.write(json.dumps(parsed.to_dict(), indent=2) + "\n")
    for note in parsed.notes:
        sys.stderr.write(f"dun: {note}\n")
    return EXIT_OK if parsed.outcome == "parsed" else EXIT_NO_BLOCK
