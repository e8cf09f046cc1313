"""`dun plugins list` and `dun plugins validate`."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from dun.core.errors import ConfigError
from dun.core.kinds import ExitCode
from dun.engine.manager import check_types, describe, make_manager
from dun.engine.manifest import load_manifest
from dun.engine.session import open_session


def run_list(path: str | None, as_json: bool) -> int:
    session = open_session(path)
    python_plugins = describe(session.pm)
    catalog = session.catalog()
    manifests: list[dict[str, Any]] = [
        {"id": m.id, "origin": m.origin, "source": m.source, "checks": [c.id for c in m.checks],
         "overrides": m.overrides, "enabled": enabled}
        for enabled, group in ((True, catalog.manifests), (False, catalog.disabled)) for m in group]
    if as_json:
        data = {"python": [p.to_dict() for p in python_plugins], "manifests": manifests}
        sys.stdout.write(json.dumps(data, indent=2) + "\n")
        return ExitCode.OK
    # Columns as wide as their longest entry: plugin names such as `builtin:checks.git_status` vary a lot.
    name_w = max([len(p.name) for p in python_plugins] + [len(m["id"]) for m in manifests] + [4])
    source_w = max([len(p.source) for p in python_plugins] + [6])
    origin_w = max([len(m["origin"]) for m in manifests] + [6])
    lines = ["Python plugins:"]
    for p in python_plugins:
        lines.append(f"  {p.name:{name_w}}  {p.source:{source_w}}  hooks: {', '.join(p.hooks)}")
    lines.append("YAML manifests (later layers override earlier ones by id):")
    for m in manifests:
        state = "" if m["enabled"] else " [disabled]"
        lines.append(f"  {m['id']:{name_w}}  {m['origin']:{origin_w}}  {m['source']}{state}")
        lines.append(f"  {'':{name_w}}  checks: {', '.join(m['checks'])}")
        for old in m["overrides"]:
            lines.append(f"  {'':{name_w}}  overrides {old}")
    sys.stdout.write("\n".join(lines) + "\n")
    return ExitCode.OK


def run_validate(files: list[str]) -> int:
    """Validate manifest files with the same validator `dun check` uses; exit 2 when any is invalid."""
    types = check_types(make_manager())
    bad = 0
    for name in files:
        try:
            manifest = load_manifest(Path(name), types, default_timeout=300.0)
        except ConfigError as exc:
            bad += 1
            for line in exc.errors:
                sys.stderr.write(line + "\n")
            continue
        sys.stdout.write(f"{name}: ok, plugin '{manifest.id}' with {len(manifest.checks)} check(s)\n")
    return ExitCode.USAGE if bad else ExitCode.OK
