"""`junit`: JUnit XML, one testcase per check, for CI test-report viewers."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from dun.engine.hookspecs import hookimpl
from dun.engine.model import Report, Status
from dun.output.base import FormatOptions, Formatter


def render(report: Report, opts: FormatOptions) -> str:
    counts = report.counts()
    suite = ET.Element("testsuite", name="dun", tests=str(len(report.results)), failures=str(counts["fail"]),
                       errors=str(counts["error"]), skipped=str(counts["skip"]), time=f"{report.duration_s:.3f}")
    for r in report.results:
        case = ET.SubElement(suite, "testcase", classname=r.plugin, name=r.id, time=f"{r.duration_s:.3f}")
        body = "\n".join([*(f"{i.location()} {i.text}".strip() for i in r.items), r.detail]).strip()
        if r.status is Status.FAIL:
            ET.SubElement(case, "failure", message=r.signal).text = body
        elif r.status is Status.ERROR:
            ET.SubElement(case, "error", message=r.signal).text = body
        elif r.status is Status.SKIP:
            ET.SubElement(case, "skipped", message=r.signal)
        elif r.status is Status.WARN:
            ET.SubElement(case, "system-out").text = f"warning: {r.signal}\n{body}".strip()
    suites = ET.Element("testsuites")
    suites.append(suite)
    ET.indent(suites)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(suites, encoding="unicode") + "\n"


@hookimpl
def dun_output_formats() -> dict[str, Formatter]:
    return {"junit": render}
