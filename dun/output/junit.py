"""`junit`: JUnit XML, one testcase per check, for CI test-report viewers. Always well-formed: text from tools is
stripped of escape codes and of every character XML 1.0 forbids."""

from __future__ import annotations

from dun.engine.hookspecs import hookimpl
from dun.engine.model import Report, Status
from dun.engine.sanitize import xml_text
from dun.output.base import FormatOptions, Formatter, since_iso


def render(report: Report, opts: FormatOptions) -> str:
    counts = report.counts()
    import xml.etree.ElementTree as ET  # only this format needs it (2 ms of every `dun check`)

    suite = ET.Element("testsuite", name="dun", tests=str(len(report.results)), failures=str(counts["fail"]),
                       errors=str(counts["error"]), skipped=str(counts["skip"]), time=f"{report.duration_s:.3f}")
    for r in report.results:
        case = ET.SubElement(suite, "testcase", classname=xml_text(r.plugin), name=xml_text(r.id),
                             time=f"{r.duration_s:.3f}")
        if r.cached:  # reused unchanged from an earlier run; its time is that run's
            props = ET.SubElement(case, "properties")
            ET.SubElement(props, "property", name="dun.cached", value="true")
            when = since_iso(r)
            if when is not None:
                ET.SubElement(props, "property", name="dun.cached_since", value=when)
        body = xml_text("\n".join([*(f"{i.location()} {i.text}".strip() for i in r.items), r.detail]).strip())
        signal = xml_text(r.signal)
        if r.status is Status.FAIL:
            ET.SubElement(case, "failure", message=signal, type="fail").text = body
        elif r.status is Status.ERROR:
            ET.SubElement(case, "error", message=signal, type="error").text = body
        elif r.status is Status.SKIP:
            ET.SubElement(case, "skipped", message=signal)
        elif r.status is Status.WARN:
            ET.SubElement(case, "system-out").text = f"warning: {signal}\n{body}".strip()
    suites = ET.Element("testsuites")
    suites.append(suite)
    ET.indent(suites)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(suites, encoding="unicode") + "\n"


@hookimpl
def dun_output_formats() -> dict[str, Formatter]:
    return {"junit": render}
