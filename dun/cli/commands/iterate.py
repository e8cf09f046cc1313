"""`dun iterate`: run the checks and print the one prompt for the next agent iteration."""

from __future__ import annotations

import json
import sys
import threading
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, cast

from dun.answer.handoff import record_iterate
from dun.config.sections import Automation
from dun.core.errors import UsageError
from dun.core.kinds import ExitCode
from dun.engine import checkapi
from dun.engine.session import open_session
from dun.prompt.build import ALL_PASS
from dun.prompt.sections import build_prompt, git_section, render

if TYPE_CHECKING:
    from dun.core.snapshot import Early
    from dun.engine.model import Report


@dataclass
class IterateOptions:
    path: str | None = None
    automation: str | None = None
    max_prompt_chars: int | None = None
    format: str = "text"
    only: tuple[str, ...] = ()
    skip: tuple[str, ...] = ()
    iteration: int | None = None  # set by the shell driver: numbers the prompt, records the work-tree hash
    confirm: bool = False


def run_iterate(opts: IterateOptions, early: Early | None = None) -> int:
    if opts.format not in ("text", "json"):
        raise UsageError(f"unknown format '{opts.format}' for iterate; choose text or json")
    if opts.max_prompt_chars is not None and opts.max_prompt_chars < 1000:
        raise UsageError("--max-prompt-chars must be at least 1000")
    # the prompt needs no adapter (importing them costs 25 ms)
    session = open_session(opts.path, agents=False, early=early)
    session.context().prefetch()
    store = session.store
    previous = store.read_iterate()
    # git log and diff are subprocesses: run them while the checks run
    git_text: list[str] = []
    git_thread = threading.Thread(target=lambda: git_text.append(git_section(session, previous)), daemon=True)
    git_thread.start()
    report = session.report(opts.only, opts.skip)
    _say_reused(report)
    snapshot = checkapi.snapshot(session.context())  # HEAD (and the tree) from the checks' own `git status`
    look = (snapshot.head(), snapshot.tree() if opts.iteration is not None else None) if snapshot else None
    record_iterate(store, report.actionable(), with_tree=opts.iteration is not None, look=look)
    if opts.confirm:
        git_thread.join()
        sys.stdout.write(render(session, report, True, opts.iteration or 1))
        return ExitCode.OK
    if not report.actionable():
        data: object = {"schema_version": 1, "kind": "all_pass", "status": "ALL_PASS", "exit_signal": True}
        sys.stdout.write(json.dumps(data) + "\n" if opts.format == "json" else ALL_PASS)
        return ExitCode.OK
    git_thread.join()
    settings = session.settings.iterate  # the flags on top
    if opts.automation:  # one of the modes (the flag's choices); build_prompt says so otherwise
        settings = replace(settings, automation=cast(Automation, opts.automation))
    if opts.max_prompt_chars:
        settings = replace(settings, max_prompt_chars=opts.max_prompt_chars)
    prompt = build_prompt(session, report, git_text[0] if git_text else "", opts.iteration, settings)
    for note in prompt.notes:
        sys.stderr.write(f"dun: {note}\n")
    sys.stdout.write(json.dumps(prompt.to_dict(), indent=2) + "\n" if opts.format == "json" else prompt.text)
    return ExitCode.OK


def _say_reused(report: Report) -> None:
    """On stderr (stdout is the prompt): which results came from an earlier `dun check` on the same inputs."""
    reused = [r for r in report.results if r.cached]
    if reused:
        from dun.output.base import since

        oldest = min(reused, key=lambda r: r.since or 0.0)
        sys.stderr.write(f"dun: {len(reused)} of {len(report.results)} results reused from an earlier run on the same "
                         f"inputs (the oldest since {since(oldest)}); DUN_NO_CACHE=1 runs them\n")
