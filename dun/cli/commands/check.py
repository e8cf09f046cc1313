"""`dun check`: run the checks and print them in the chosen format."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from dun.core.errors import UsageError
from dun.engine import checkapi
from dun.engine.manager import merged_mapping
from dun.engine.model import Report
from dun.engine.session import Session, open_session
from dun.output.base import FormatOptions, Formatter, exit_code

if TYPE_CHECKING:
    from dun.core.snapshot import Early
    from dun.engine.launch import Launches


@dataclass
class CheckOptions:
    """The options of `dun check` (dun/cli/flags.py reads them from a command line)."""

    path: str | None = None
    format: str | None = None
    jobs: int | None = None
    only: list[str] = field(default_factory=list)
    skip: list[str] = field(default_factory=list)
    strict: bool = False
    verbose: bool = False
    color: str = "auto"  # auto | always | never
    output: str | None = None
    no_cache: bool = False  # run every check even when its last result still holds (also DUN_NO_CACHE=1)


def build_report(session: Session, opts: CheckOptions) -> Report:
    if opts.no_cache:
        session.caches.read = False  # run everything afresh; what it finds is still stored
    return session.report(opts.only, opts.skip, opts.jobs, opts.strict)


def formatter_for(session: Session, name: str) -> Formatter:
    formats: dict[str, Formatter] = merged_mapping(session.pm, "dun_output_formats", "output format")
    if name not in formats:
        from dun.config.schema import did_you_mean

        raise UsageError(f"unknown format '{name}'{did_you_mean(name, sorted(formats))}; "
                         f"choose from {', '.join(sorted(formats))}")
    return formats[name]


def run_check(opts: CheckOptions, early: Early | None = None, launches: Launches | None = None) -> int:
    """`dun check`; `launches`: the test runners started as dun started (dun/engine/launch.py), stopped at the end
    unless a check claimed them."""
    try:
        return _run_check(opts, early, launches)
    finally:
        if launches is not None:
            launches.stop()


def _run_check(opts: CheckOptions, early: Early | None, launches: Launches | None) -> int:
    session = open_session(opts.path, agents=False, fresh=opts.no_cache, early=early, launches=launches)
    if session.launches is None and opts.path is None and not opts.no_cache and session.repo.is_git:
        from dun.engine.launch import Launches

        session.launches = Launches(str(session.root), sys.argv[1:])  # what runs is the next identical run's plan
    # With results to reuse, only `git status` starts now; the index is listed once some check has to run.
    session.context().prefetch(listing=not session.caches.read)
    fmt_name = opts.format or str(session.config.get("check.format"))
    render = formatter_for(session, fmt_name)
    report = build_report(session, opts)
    to_tty = opts.output is None and sys.stdout.isatty()
    color = opts.color == "always" or (opts.color == "auto" and to_tty)
    text = render(report, FormatOptions(color=color and fmt_name == "text", verbose=opts.verbose))
    if opts.output:
        from dun.core.atomic import write_text_atomic

        write_text_atomic(Path(opts.output), text)
    else:
        sys.stdout.write(text)
        _keep_for_replay(session, opts, report, text)
    return exit_code(report)


def _keep_for_replay(session: Session, opts: CheckOptions, report: Report, text: str) -> None:
    """A run whose every result was reused is stored whole: the next identical one prints it again at once."""
    if not session.caches.read or not report.results or not all(r.cached for r in report.results):
        return
    snapshot = checkapi.snapshot(session.context())
    tree = snapshot.fingerprint() if snapshot is not None else None
    if tree is not None:
        from dun.engine.replay import save

        ttls = {c.id: c.ttl for c in session.catalog().checks if c.ttl is not None}
        expiry = [r.since + ttls[r.id] for r in report.results if r.id in ttls and r.since is not None]
        save(session.root, sys.argv[1:], tree, text, exit_code(report), session.caches.consulted.looks(),
             min(expiry) if expiry else None)
