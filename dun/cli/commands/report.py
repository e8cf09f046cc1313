"""`dun report` (the HTML report), `dun summary` (the bounded status report) and `dun ack`, the one command that
acknowledges: the status reports, or one review item."""

from __future__ import annotations

import sys
import time
from pathlib import Path

from dun.core.errors import UsageError
from dun.core.kinds import ExitCode
from dun.engine.session import open_session


def run_report(path: str | None, output: str | None, runs: int) -> int:
    from dun.loop.operator import refresh
    from dun.report_html.page import write_html

    session = open_session(path)
    target = Path(output).resolve() if output else session.store.report_html_path
    with refresh(session.root, session.settings.review) as history:
        size = write_html(history, target, runs)
    sys.stdout.write(f"wrote {target} ({size / 1e6:.1f} MB, opens without a network)\n")
    return ExitCode.OK


def run_summary(path: str | None) -> int:
    """Print the status report since the last acknowledged one; write and acknowledge nothing."""
    from dun.history import reports
    from dun.loop.operator import refresh

    session = open_session(path)
    with refresh(session.root, session.settings.review) as history:
        lines = reports.build(history, reports.watermark(session.root), time.time())
    sys.stdout.write("\n".join(lines) + "\n")
    return ExitCode.OK


def run_ack(path: str | None, item: str | None = None) -> int:
    """Review item ITEM seen; or, without one, a report covering everything up to now written and every status
    report acknowledged."""
    from dun.history import reports
    from dun.loop.operator import refresh

    session = open_session(path)
    with refresh(session.root, session.settings.review) as history:
        if item is not None:
            from dun.history import review

            sys.stdout.write(f"{review.decide(history, item, 'acked')} acked\n")
            return ExitCode.OK
        report = reports.write(history)
    seen = reports.acknowledge(session.root)
    sys.stdout.write(f"acknowledged {len(seen)} report(s); the next report starts now "
                     f"({report.relative_to(session.root)} holds what was acknowledged unread)\n")
    return ExitCode.OK


def run_latest(path: str | None, with_html: bool = False) -> int:
    """`dun report --latest`, deprecated: what it did (print the status report, acknowledge it), as `dun summary`
    and `dun ack` do it."""
    if with_html:
        raise UsageError("--latest (now `dun summary`) goes with neither --html nor -o")
    sys.stderr.write("dun: `dun report --latest` is now `dun summary` (then `dun ack` to acknowledge; the old "
                     "spelling goes in a later version)\n")
    from dun.history import reports
    from dun.loop.operator import refresh

    session = open_session(path)
    with refresh(session.root, session.settings.review) as history:
        report = reports.write(history)
    reports.acknowledge(session.root)
    sys.stdout.write(report.read_text(encoding="utf-8"))
    return ExitCode.OK
