"""`dun explain CHECK`: a check's definition and where it came from."""

from __future__ import annotations

import io
import json
import sys

from dun.config.schema import did_you_mean
from dun.core.errors import UsageError
from dun.core.kinds import ExitCode
from dun.engine.model import Status, level_for
from dun.engine.session import open_session


def run_explain(check_id: str, path: str | None, as_json: bool) -> int:
    session = open_session(path)
    catalog = session.catalog()
    check = catalog.find(check_id)
    if check is None:
        known = [c.id for c in catalog.checks]
        raise UsageError(f"no check '{check_id}'{did_you_mean(check_id, known)}; `dun list` shows every check")
    manifest = catalog.manifest(check.plugin)
    ctype = catalog.types[check.type]
    data = {
        "id": check.id, "plugin": check.plugin, "type": check.type, "origin": manifest.origin,
        "defined_at": check.source, "overrides": manifest.overrides, "priority": check.priority,
        "plugin_priority": manifest.priority,
        "level_when_failing": level_for(check.priority, Status.FAIL).value,  # type: ignore[union-attr]
        "timeout_s": check.timeout, "after": check.after, "triggers": manifest.triggers,
        "description": check.description, "next": check.next, "definition": check.raw, "options": check.options,
    }
    if as_json:
        sys.stdout.write(json.dumps(data, indent=2) + "\n")
        return ExitCode.OK
    from ruamel.yaml import YAML

    buf = io.StringIO()
    yaml = YAML(typ="rt")
    yaml.width = 4096
    yaml.dump(check.raw, buf)
    triggers = ", ".join(f"{k} {v}" for t in manifest.triggers for k, v in t.items()) or "always"
    lines = [
        f"{check.id}: {check.description or ctype.description}",
        f"  plugin:    {check.plugin} ({manifest.origin})",
        f"  defined:   {check.source}",
        *(f"  overrides: {old}" for old in manifest.overrides),
        f"  type:      {check.type} - {ctype.description}",
        f"  priority:  {check.priority} (plugin {manifest.priority}); {data['level_when_failing']} when failing",
        f"  timeout:   {check.timeout:g}s",
        f"  applies:   {triggers}",
    ]
    if check.after:
        lines.append(f"  after:     {', '.join(check.after)}")
    if check.next:
        lines.append(f"  next:      {check.next}")
    lines.append("  definition:")
    lines.extend("    " + line for line in buf.getvalue().rstrip().splitlines())
    sys.stdout.write("\n".join(lines) + "\n")
    return ExitCode.OK
