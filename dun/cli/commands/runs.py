"""`dun status`, `dun logs` and `dun stop`: reading and steering a loop from another terminal."""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from collections.abc import Mapping, Sequence

from dun.core.errors import UsageError
from dun.core.git import Repo
from dun.core.kinds import ExitCode
from dun.core.timefmt import clock
from dun.loop.report import cost_text, resume_hint, verdict
from dun.store.layout import find_repo
from dun.store.lock import lock_holder
from dun.store.records import IterationLog
from dun.store.state import LoopState
from dun.store.store import Store


def _other_loops(repo: Repo) -> list[dict[str, object]]:
    """The loops running in the repository's other work trees; none outside a git repository."""
    if not repo.is_git:
        return []
    from dun.fleet.status import running_elsewhere

    return running_elsewhere(repo.root)


def _others_line(others: Sequence[Mapping[str, object]]) -> str:
    names = ", ".join(f"{loop['name']} (iteration {loop['iteration'] or 0}, pid {loop['pid']})" for loop in others)
    return f"{len(others)} loop(s) running in other work trees of this repository: {names}; `dun watch` shows them"


def run_status(path: str | None, as_json: bool) -> int:
    repo = find_repo(path)
    store = Store(repo.root)
    state = store.read_state()
    holder = _loop_pid(store, state)
    others = _other_loops(repo)
    if as_json:
        record = state.to_record() if state is not None else None
        sys.stdout.write(json.dumps({"state": record, "loop_pid": holder, "other_loops": others}, indent=2) + "\n")
        return ExitCode.OK
    if state is None:
        lines = ["no loop has run here yet (`dun loop` starts one)", *([_others_line(others)] if others else [])]
        sys.stdout.write("\n".join(lines) + "\n")
        return ExitCode.OK
    if holder:
        running = f"running (pid {holder})"
    elif state.status == "running":
        running = "not running: the loop died (no process holds the lock); `dun loop` resumes the run"
    else:
        running = state.status
    c = state.circuit
    lines = [f"run {state.run_id}: {running}" + (f", stopped: {state.stop_reason}" if state.stop_reason
                                                     else ""),
             f"iteration {state.iteration}, ${state.cost_usd_total:.4f} spent, {state.errors_total} failed "
             f"call(s), started {state.started_at}",
             f"circuit {c.state}" + (f" ({c.reason})" if c.reason else "")
             + f", no progress {c.no_progress}, same error {c.same_error}"]
    if state.stop_detail:
        lines.append(f"why: {state.stop_detail}")
    if state.status != "running" and resume_hint(state.stop_reason):
        lines.append(f"to go on: {resume_hint(state.stop_reason)}")
    resume_at = state.resume_at
    if resume_at and resume_at > time.time():
        until = time.strftime("%H:%M:%S", time.localtime(resume_at))
        lines.append(f"waiting for a usage limit until {until}")
    from dun.history.reports import unacknowledged_count

    unread = unacknowledged_count(store.root)
    if unread:
        lines.append(f"{unread} unacknowledged status report(s): `dun summary`, then `dun ack`")
    if others:
        lines.append(_others_line(others))
    sys.stdout.write("\n".join(lines) + "\n")
    return ExitCode.OK


def _log_line(log: IterationLog, running: int | None = None, since: float | None = None) -> str:
    """One iteration; `running` is the iteration whose agent a live loop runs now (started at `since`), which has
    no exit, cost or verdict yet."""
    if not log.get("ended_at"):
        if log.get("iteration") == running:
            elapsed = f" for {clock(time.time() - since)}" if since else ""
            what = f"running: the agent has been working{elapsed}"
        else:
            what = "unfinished: its loop is not running (the next `dun loop` closes it as interrupted)"
        return f"{log.get('iteration'):>4}  {log.get('started_at') or '-':25}  {what}"
    block = log.get("status_block") or {}
    cost = cost_text(log.get("cost_usd"))
    return (f"{log.get('iteration'):>4}  {log.get('started_at') or '-':25}  exit {log.get('exit_code')!s:4}  "
            f"{cost:>9}  {block.get('status') or log.get('parse_outcome') or '-':12}  "
            f"{(block.get('task_completed') or '-')[:30]:30}  {verdict(log)}")


def _loop_pid(store: Store, state: LoopState | None) -> int | None:
    """The process of the loop running here: `dun loop` holding the lock, or the script of the shell driver."""
    from dun.fleet.live import loop_pid

    live = store.read_live()
    same = live is not None and state is not None and live["run_id"] == state.run_id
    return loop_pid(store, state is not None and state.status == "running", live if same else None)


def _running(store: Store) -> tuple[int | None, float | None]:
    """The iteration a live loop has open, and when its agent call started."""
    state = store.peek_state()
    if state is None or state.status != "running" or not state.in_progress:
        return None, None
    if not _loop_pid(store, state):
        return None, None
    return state.in_progress, state.call_started


def run_logs(path: str | None, number: int | None, as_json: bool, out: bool) -> int:
    store = Store(find_repo(path).root)
    root = store.root
    if number is None:
        logs = store.iteration_logs()
        if as_json:
            sys.stdout.write(json.dumps(logs, indent=2) + "\n")
        else:
            running, since = _running(store)
            sys.stdout.write("".join(_log_line(log, running, since) + "\n" for log in logs)
                             or "no iterations logged yet\n")
        return ExitCode.OK
    if out:
        raw = store.iteration_file(number, ".out")
        if not raw.is_file():
            raise UsageError(f"no agent output for iteration {number} ({raw.relative_to(root)})")
        with raw.open("rb") as fh:
            while chunk := fh.read(1 << 16):
                sys.stdout.buffer.write(chunk)
        return ExitCode.OK
    log = store.read_log(number)
    if log is None:
        raise UsageError(f"no log for iteration {number}")
    if as_json:
        sys.stdout.write(json.dumps(log, indent=2) + "\n")
        return ExitCode.OK
    sys.stdout.write(_log_line(log, *_running(store)) + "\n")
    for key in ("argv", "error", "parse_error", "checks_before", "checks_after", "progress", "circuit", "decision",
                "flags", "verification"):
        if log.get(key) not in (None, [], {}):
            sys.stdout.write(f"  {key}: {json.dumps(log[key])}\n")
    return ExitCode.OK


def run_stop(path: str | None, now: bool) -> int:
    store = Store(find_repo(path).root)
    store.request_stop(now)
    holder = lock_holder(store)
    if now and holder and holder > 0:
        try:
            os.kill(holder, signal.SIGTERM)
        except ProcessLookupError:
            holder = None
    if holder:
        when = "now" if now else "after the current iteration"
        sys.stdout.write(f"asked the loop (pid {holder}) to stop {when}\n")
    else:
        sys.stdout.write("no loop is running; the next `dun loop` will stop before its first agent call\n")
    return ExitCode.OK
