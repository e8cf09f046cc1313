"""`dun respond --decide`: the iteration engine one step per process, for scripts/dun-loop.sh.

Each step prints one line and exits with a code the script acts on; no limit, rule or prompt logic lives in the
script:

    --before                          go N (prompt in .dun/logs/iteration-N.prompt.md) | wait S REASON | stop REASON
    --iteration N --exit-code RC      continue COOLDOWN | wait S REASON | stop REASON
      (the answer: .dun/logs/iteration-N.out, stderr in iteration-N.err, or --file F)

The steps are the engine's, as `dun loop` runs them: `--before` is `start` then `next`, the answer step is
`conclude`, and a stop is `finish`. A step killed half-way leaves the state `dun loop` would leave.
"""

from __future__ import annotations

import contextlib
import math
import shutil
import sys
from pathlib import Path

from dun.core.errors import UsageError, is_disk_full
from dun.core.kinds import Action, ExitCode, StopReason
from dun.core.redact import Redactor
from dun.engine.session import open_session
from dun.loop.conclude import AgentFacts, check_pricing
from dun.loop.engine import Engine, adapter_for, effective_config
from dun.loop.policy import Decision, stop
from dun.loop.review import preflight
from dun.store.lock import LoopLock


def _emit(line: str, code: int) -> int:
    sys.stdout.write(line + "\n")
    return code


def _answer(engine: Engine, decision: Decision) -> int:
    if decision.action == Action.STOP:
        engine.finish(decision)
        complete = decision.reason == StopReason.COMPLETE
        return _emit(f"stop {decision.reason}", ExitCode.STEP_COMPLETE if complete else ExitCode.STEP_STOPPED)
    if decision.action == Action.WAIT:
        engine.waiting(decision)
        # rounded up to a tenth: a wait never ends early, and a short one never becomes 0
        return _emit(f"wait {math.ceil(decision.wait_s * 10) / 10:.1f} {decision.reason}", ExitCode.STEP_WAIT)
    return _emit(f"continue {engine.settings.loop.cooldown_s:g}", ExitCode.OK)


def _engine(path: str | None) -> Engine:
    session = open_session(path)
    settings = effective_config(session, {})
    adapter = adapter_for(session, settings)
    check_pricing(adapter, settings)  # the answers are parsed and priced by the configured agent's adapter
    preflight(session, settings)  # the review gate runs from the answer step
    redactor = session.store.redactor
    return Engine(session, settings, adapter, external=True, say=lambda text: _say(text, redactor))


def _say(text: str, redactor: Redactor) -> None:
    sys.stderr.write(f"dun: {redactor.redact(text)}\n")


def _disk_full(engine: Engine, exc: OSError) -> int:
    """No space left: the stop is recorded when it still fits, and the script is told to stop."""
    with contextlib.suppress(OSError):
        engine.finish(stop(StopReason.DISK_FULL))
    _say(f"the disk is full ({exc.strerror or exc}); free some space, then run the script again", engine.store.redactor)
    return _emit(f"stop {StopReason.DISK_FULL}", ExitCode.STEP_STOPPED)


def decide_before(path: str | None) -> int:
    """Start or resume the run, then the engine's next step: a stop, a wait, or `go N` with the prompt written."""
    engine = _engine(path)
    with LoopLock(engine.store):  # a `dun loop` in the same repo must not interleave with the script
        try:
            engine.start()
            step = engine.next(engine.store.stop_requested())
        except OSError as exc:
            if not is_disk_full(exc):
                raise
            return _disk_full(engine, exc)
        if isinstance(step, Decision):
            return _answer(engine, step)
        return _emit(f"go {step.n}", ExitCode.OK)


def decide_after(path: str | None, iteration: int | None, exit_code: int | None, answer: Path | None) -> int:
    """Conclude iteration N from its answer and the agent's exit code (124: `timeout` killed it)."""
    if iteration is None:
        raise UsageError("--decide needs --iteration N (the number `--before` printed)")
    engine = _engine(path)
    with LoopLock(engine.store):
        engine.attach(iteration)
        out = engine.store.iteration_file(iteration, ".out")
        if answer is not None and answer.resolve() != out.resolve():
            shutil.copyfile(answer, out)  # the log keeps the answer it was judged on
        if not out.is_file():
            raise UsageError(f"no answer for iteration {iteration}: {out} is missing")
        timed_out = exit_code == ExitCode.AGENT_TIMEOUT
        try:
            return _answer(engine, engine.conclude(iteration, AgentFacts(exit_code, timed_out)))
        except OSError as exc:
            if not is_disk_full(exc):
                raise
            return _disk_full(engine, exc)
