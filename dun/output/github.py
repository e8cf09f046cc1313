"""`github`: GitHub Actions workflow commands, so findings appear as annotations on files and lines.

Every item becomes an annotation, on its file and line when it has them, else on the run; a check without items
gets one for its signal. Properties and messages are escaped as the runner expects.
"""

from __future__ import annotations

from dun.engine.hookspecs import hookimpl
from dun.engine.model import Report, Status
from dun.engine.sanitize import safe_result
from dun.output.base import FormatOptions, Formatter, cached_note, summary_line

_KIND = {Status.FAIL: "error", Status.ERROR: "error", Status.WARN: "warning"}
_ITEMS = 50  # GitHub shows at most 50 annotations per kind and step; one more says what was left out


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_prop(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def render(report: Report, opts: FormatOptions) -> str:
    out: list[str] = []
    for r in report.results:
        kind = _KIND.get(r.status)
        if kind is None:
            continue
        r = safe_result(r)
        title = _escape_prop(f"dun {r.id}{cached_note(r)}")
        for item in r.items[:_ITEMS]:
            props = f"file={_escape_prop(item.file)}," if item.file else ""
            props += f"line={item.line}," if item.file and item.line else ""
            out.append(f"::{kind} {props}title={title}::{_escape_data(item.text)}")
        if len(r.items) > _ITEMS:
            out.append(f"::{kind} title={title}::{_escape_data(f'... and {len(r.items) - _ITEMS} more: {r.signal}')}")
        if not r.items:
            out.append(f"::{kind} title={title}::{_escape_data(r.signal)}")
    out.append(summary_line(report))
    return "\n".join(out) + "\n"


@hookimpl
def dun_output_formats() -> dict[str, Formatter]:
    return {"github": render}
