"""`llm`: compact lines for a model's context: only what is actionable, one line per check and item."""

from __future__ import annotations

from dun.engine.hookspecs import hookimpl
from dun.engine.model import Report, Status
from dun.engine.sanitize import safe_result
from dun.output.base import FormatOptions, Formatter, cached_note, summary_line

_ITEMS = 20


def render(report: Report, opts: FormatOptions) -> str:
    out: list[str] = []
    for r in report.results:
        if r.status in (Status.PASS, Status.SKIP):
            continue
        r = safe_result(r)
        level = r.level.value if r.level else "-"
        out.append(f"[{level}] {r.id} {r.status.value}{cached_note(r)}: {r.signal}")
        for item in r.items[:_ITEMS]:
            where = item.location()
            first, *rest = item.text.split("\n")
            out.append(f"  {where + ' ' if where else ''}{first}")
            out.extend(f"    {more}" for more in rest)
        if len(r.items) > _ITEMS:
            out.append(f"  (+{len(r.items) - _ITEMS} more)")
        if r.next:
            out.append(f"  next: {' / '.join(r.next.splitlines())}")
    out.append(summary_line(report))
    return "\n".join(out) + "\n"


@hookimpl
def dun_output_formats() -> dict[str, Formatter]:
    return {"llm": render}
