"""What a formatter receives: the report and a few rendering options."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from dun.core.kinds import ExitCode
from dun.engine.model import Report

JSON_SCHEMA_VERSION = 1


@dataclass(frozen=True)
class FormatOptions:
    """How a report is rendered: colour, and everything or only what is actionable."""

    color: bool = False
    verbose: bool = False


Formatter = Callable[[Report, FormatOptions], str]


def exit_code(report: Report) -> int:
    return ExitCode.WORK_REMAINS if report.actionable() else ExitCode.OK


def summary_line(report: Report) -> str:
    counts = report.counts()
    parts = [f"{n} {name}" for name, n in counts.items() if n]
    verdict = f"{len(report.actionable())} actionable" if report.actionable() else "nothing actionable"
    cached = report.cached()
    reused = f" ({cached} cached: unchanged since their last run; --no-cache runs them)" if cached else ""
    return f"{verdict}: {', '.join(parts) or 'no checks'} in {report.duration_s:.1f}s{reused}"
