"""`text`: for people, with color on a terminal and a summary line."""

from __future__ import annotations

from dun.engine.hookspecs import hookimpl
from dun.engine.model import CheckResult, Report, Status
from dun.engine.sanitize import safe_result
from dun.output.base import FormatOptions, Formatter, cached_note, summary_line

_COLORS = {Status.PASS: "32", Status.FAIL: "31", Status.ERROR: "31;1", Status.WARN: "33", Status.SKIP: "2"}
_ITEMS_SHOWN = 10
_DETAIL_LINES = 12
_INDENT = " " * 8


def _paint(text: str, code: str, color: bool) -> str:
    return f"\x1b[{code}m{text}\x1b[0m" if color else text


def render_result(r: CheckResult, opts: FormatOptions) -> list[str]:
    r = safe_result(r)  # tools' escape codes and control characters never reach the terminal
    level = r.level.value if r.level else ""
    tag = _paint(f"{r.status.value.upper():5}", _COLORS[r.status], opts.color)
    note = cached_note(r)
    lines = [f"{tag} {level:6} {r.id:24} {r.signal}" + (f" {_paint(note.strip(), '2', opts.color)}" if note else "")]
    if r.status is Status.PASS and not opts.verbose:
        return lines
    shown = r.items if opts.verbose else r.items[:_ITEMS_SHOWN]
    for item in shown:
        where = item.location()
        first, *rest = item.text.split("\n")
        lines.append(f"{_INDENT}- {where + ': ' if where else ''}{first}")
        lines.extend(f"{_INDENT}    {more}" for more in rest)  # a message's further lines stay with it
    if len(r.items) > len(shown):
        lines.append(f"{_INDENT}... {len(r.items) - len(shown)} more (use --verbose)")
    if r.detail and (opts.verbose or (not r.items and r.status is not Status.SKIP)):
        detail = r.detail.splitlines()
        lines.extend(f"{_INDENT}| " + d for d in (detail if opts.verbose else detail[-_DETAIL_LINES:]))
    if r.next:
        lines.extend(f"{_INDENT}next: " + n for n in r.next.splitlines())
    return lines


def render(report: Report, opts: FormatOptions) -> str:
    out: list[str] = []
    for r in report.results:
        if r.status is Status.SKIP and not opts.verbose:
            continue
        out.extend(render_result(r, opts))
    out.extend(report.notes)
    out.append(summary_line(report))
    return "\n".join(out) + "\n"


@hookimpl
def dun_output_formats() -> dict[str, Formatter]:
    return {"text": render}
