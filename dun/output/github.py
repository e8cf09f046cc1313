"""`github`: GitHub Actions workflow commands, so findings appear as annotations on files and lines."""

from __future__ import annotations

from dun.engine.hookspecs import hookimpl
from dun.engine.model import Report, Status
from dun.output.base import FormatOptions, Formatter, summary_line

_KIND = {Status.FAIL: "error", Status.ERROR: "error", Status.WARN: "warning"}
_ITEMS = 50


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
        title = _escape_prop(f"dun {r.id}")
        located = [i for i in r.items if i.file][:_ITEMS]
        for item in located:
            props = f"file={_escape_prop(item.file or '')}" + (f",line={item.line}" if item.line else "")
            out.append(f"::{kind} {props},title={title}::{_escape_data(item.text)}")
        if not located:
            out.append(f"::{kind} title={title}::{_escape_data(r.signal)}")
    out.append(summary_line(report))
    return "\n".join(out) + "\n"


@hookimpl
def dun_output_formats() -> dict[str, Formatter]:
    return {"github": render}
