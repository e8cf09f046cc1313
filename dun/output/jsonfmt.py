"""`json`: a stable schema for tools; see docs/output.md."""

from __future__ import annotations

import json

from dun import __version__
from dun.engine.hookspecs import hookimpl
from dun.engine.model import Report
from dun.engine.sanitize import safe_result
from dun.output.base import JSON_SCHEMA_VERSION, FormatOptions, Formatter, exit_code, since_iso


def report_dict(report: Report) -> dict[str, object]:
    return {
        "schema_version": JSON_SCHEMA_VERSION,
        "dun_version": __version__,
        "root": str(report.root),
        "duration_s": round(report.duration_s, 3),
        "summary": {**report.counts(), "total": len(report.results), "actionable": len(report.actionable()),
                    "exit_code": exit_code(report), "cached": report.cached()},
        "checks": [{**safe_result(r).to_dict(), "cached": r.cached, "cached_since": since_iso(r)}
                   for r in report.results],
    }


def render(report: Report, opts: FormatOptions) -> str:
    return json.dumps(report_dict(report), indent=2) + "\n"


@hookimpl
def dun_output_formats() -> dict[str, Formatter]:
    return {"json": render}
