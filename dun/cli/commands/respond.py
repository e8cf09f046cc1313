"""`dun respond`: read an agent's answer, record the handoff (and the iteration log in a loop), print the status."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import BinaryIO

from dun.answer.handoff import build_handoff
from dun.answer.transcript import ParseResult, parse_stream
from dun.config.loader import dun_config
from dun.core.errors import UsageError
from dun.core.kinds import ExitCode
from dun.store.layout import find_repo
from dun.store.records import LOG_SCHEMA_VERSION
from dun.store.store import Store


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


def record_iteration_log(store: Store, iteration: int, parsed: ParseResult) -> None:
    """Add the parsed answer to `.dun/logs/iteration-N.json`, keeping what the loop already wrote there."""
    store.ensure()
    log = store.read_log(iteration) or {"schema_version": LOG_SCHEMA_VERSION, "iteration": iteration}
    log["status_block"] = parsed.block.to_dict() if parsed.block else None
    log["parse_error"] = parsed.error if parsed.outcome != "parsed" else None
    log["parse_outcome"] = parsed.outcome
    log["answer_shape"] = parsed.shape
    log.setdefault("agent_facts", {}).update(parsed.agent)
    store.write_log(log)


def run_respond(source: str | None, file: str | None, iteration: int | None, path: str | None,
                decide: bool = False, before: bool = False, exit_code: int | None = None) -> int:
    if before and not decide:
        raise UsageError("--before goes with --decide")
    if decide:
        from dun.loop.stepper import decide_after, decide_before

        if before:
            if source is not None or file is not None or iteration is not None:
                raise UsageError("--decide --before takes no answer and no --iteration")
            return decide_before(path)
        if source is not None:
            raise UsageError("--decide reads the answer from .dun/logs/iteration-N.out (or --file F), not stdin")
        return decide_after(path, iteration, exit_code, Path(file) if file is not None else None)
    if source is not None and file is not None:
        raise UsageError("give the answer either as --file FILE or as '-' for stdin, not both")
    stream = _open(file if file is not None else source)
    try:
        parsed = parse_stream(stream)
    finally:
        if stream is not sys.stdin.buffer:
            stream.close()
    root = find_repo(path).root
    # the answer may echo a secret: the repository's `secrets.patterns` are redacted from what is written, as in a loop
    store = Store(root, redactor=dun_config(root).redactor)
    store.write_handoff(build_handoff(store, parsed, iteration))
    if iteration is not None:
        record_iteration_log(store, iteration, parsed)
    sys.stdout.write(json.dumps(store.redactor.redact_data(parsed.to_dict()), indent=2) + "\n")
    for note in parsed.notes:
        sys.stderr.write(f"dun: {store.redactor.redact(note)}\n")
    return ExitCode.OK if parsed.outcome == "parsed" else ExitCode.NO_BLOCK
