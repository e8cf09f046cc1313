"""`dun list`: every check dun knows for this repository, whether it applies, without running any."""

from __future__ import annotations

import json
import sys
from typing import Any

from dun.core.errors import UsageError
from dun.core.kinds import ExitCode
from dun.engine.model import Status, level_for
from dun.engine.runner import trigger_miss
from dun.engine.session import open_session


def list_checks(path: str | None) -> list[dict[str, Any]]:
    session = open_session(path)
    catalog = session.catalog()
    ctx = session.context()
    out: list[tuple[tuple[int, int, str], dict[str, object]]] = []
    for manifest in catalog.manifests:
        miss = trigger_miss(manifest.triggers, ctx)
        for check in manifest.checks:
            level = level_for(check.priority, Status.FAIL)
            out.append((check.sort_key, {
                "id": check.id, "plugin": check.plugin, "type": check.type, "priority": check.priority,
                "level_when_failing": level.value if level else None, "applies": miss is None, "why_not": miss,
                "after": check.after, "description": check.description, "defined_at": check.source}))
    return [entry for _, entry in sorted(out, key=lambda pair: pair[0])]


def run_list_checks(path: str | None, fmt: str) -> int:
    if fmt not in ("text", "json"):
        raise UsageError(f"unknown format '{fmt}' for list; choose text or json")
    checks = list_checks(path)
    if fmt == "json":
        sys.stdout.write(json.dumps({"schema_version": 1, "checks": checks}, indent=2) + "\n")
        return ExitCode.OK
    width = max([len(c["id"]) for c in checks] + [2])
    plugin_width = max([len(c["plugin"]) for c in checks] + [6])
    lines = [f"{'ID':{width}}  {'PLUGIN':{plugin_width}}  {'LEVEL':6}  DESCRIPTION"]
    for c in checks:
        level = c["level_when_failing"] if c["applies"] else "-"
        text = c["description"] if c["applies"] else f"(not applicable) {c['description']}"
        lines.append(f"{c['id']:{width}}  {c['plugin']:{plugin_width}}  {level:6}  {text}".rstrip())
    applying = sum(1 for c in checks if c["applies"])
    lines.append(f"{applying} of {len(checks)} checks apply; `dun task ID` runs one, `dun explain ID` shows it")
    sys.stdout.write("\n".join(lines) + "\n")
    return ExitCode.OK
