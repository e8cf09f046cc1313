"""What a formatter receives: the report and a few rendering options."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from dun.core.kinds import ExitCode
from dun.engine.model import CheckResult, Report, Status

JSON_SCHEMA_VERSION = 1


@dataclass(frozen=True)
class FormatOptions:
    """How a report is rendered: colour, and everything or only what is actionable."""

    color: bool = False
    verbose: bool = False


Formatter = Callable[[Report, FormatOptions], str]


def exit_code(report: Report) -> int:
    return ExitCode.WORK_REMAINS if report.actionable() else ExitCode.OK


def since(r: CheckResult) -> str:
    """When a reused result was made, local time to the minute: `2026-11-27 11:02`; "" when it was not reused."""
    if not r.cached or r.since is None:
        return ""
    import time

    return time.strftime("%Y-%m-%d %H:%M", time.localtime(r.since))


def since_iso(r: CheckResult) -> str | None:
    """When a reused result was made, for machines (json, JUnit): ISO 8601, UTC, to the second; None when it was
    not reused."""
    if not r.cached or r.since is None:
        return None
    import datetime

    return datetime.datetime.fromtimestamp(r.since, datetime.UTC).isoformat(timespec="seconds")


def cached_note(r: CheckResult) -> str:
    """` (cached since 2026-11-27 11:02)` for a reused result (the text, llm and github formats), else ""."""
    if not r.cached:
        return ""
    when = since(r)
    return f" (cached since {when})" if when else " (cached)"


def summary_line(report: Report) -> str:
    counts = report.counts()
    if report.results and counts["skip"] == len(report.results):  # not "nothing actionable": nothing looked
        return (f"no check applies here ({counts['skip']} skipped: nothing in this directory is what they "
                "check); nothing was judged. `dun init` writes a mission and an example plugin")
    parts = [f"{n} {name}" for name, n in counts.items() if n]
    warned = [r for r in report.results if r.status == Status.WARN]
    if report.actionable():
        verdict = f"{len(report.actionable())} actionable"
    elif warned:  # exit 0, but not "nothing": a suite dun cannot run, a deadline near... are said first
        verdict = (f"nothing failing, but {len(warned)} warning{'s' if len(warned) > 1 else ''} to read "
                   f"({', '.join(r.id for r in warned[:3])}{', ...' if len(warned) > 3 else ''}; --strict makes "
                   f"{'them' if len(warned) > 1 else 'it'} actionable)")
    else:
        verdict = "nothing actionable"
    cached = [r for r in report.results if r.cached]
    oldest = min(cached, key=lambda r: r.since or 0.0) if cached else None
    first = f", the oldest since {since(oldest)}" if oldest is not None and oldest.since is not None else ""
    reused = (f" ({len(cached)} cached{first}: inputs unchanged since they ran; --no-cache runs them)" if cached
              else "")
    return f"{verdict}: {', '.join(parts) or 'no checks'} in {report.duration_s:.1f}s{reused}"
