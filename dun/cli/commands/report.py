"""`dun report --html` (the plots), `dun report --latest` and `dun ack` (bounded status reports)."""

from __future__ import annotations

import sys
from pathlib import Path

from dun.core.errors import UsageError
from dun.core.kinds import ExitCode
from dun.engine.session import open_session


def run_report(path: str | None, html: bool, latest: bool, output: str | None, runs: int) -> int:
    if html == latest:
        raise UsageError("give one of --html (the plots) or --latest (the status report)")
    if output and not html:
        raise UsageError("-o/--output goes with --html")
    return _html(path, output, runs) if html else _status(path, show=True)


def _html(path: str | None, output: str | None, runs: int) -> int:
    from dun.loop.operator import refresh
    from dun.report_html.page import write_html

    session = open_session(path)
    target = Path(output).resolve() if output else session.store.report_html_path
    with refresh(session.root, session.settings.review) as history:
        size = write_html(history, target, runs)
    sys.stdout.write(f"wrote {target} ({size / 1e6:.1f} MB, opens without a network)\n")
    return ExitCode.OK


def _status(path: str | None, show: bool) -> int:
    from dun.history import reports
    from dun.loop.operator import refresh

    session = open_session(path)
    with refresh(session.root, session.settings.review) as history:
        report = reports.write(history)
    seen = reports.acknowledge(session.root)
    if show:
        sys.stdout.write(report.read_text(encoding="utf-8"))
    else:
        sys.stdout.write(f"acknowledged {len(seen)} report(s); the next report starts now "
                         f"({report.relative_to(session.root)} holds what was acknowledged unread)\n")
    return ExitCode.OK


def run_ack(path: str | None) -> int:
    return _status(path, show=False)
