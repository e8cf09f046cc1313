"""`dun config show`: the merged configuration, with where each value came from."""

from __future__ import annotations

import json
import sys

from dun.errors import EXIT_OK
from dun.session import open_session


def run_show(path: str | None, as_json: bool) -> int:
    session = open_session(path)
    cfg = session.config
    if as_json:
        sys.stdout.write(json.dumps({"source": cfg.source, "values": cfg.values}, indent=2) + "\n")
        return EXIT_OK
    lines = [f"# config read from: {cfg.source}"]
    for key, value, spec in cfg.flat():
        marker = "" if value != spec.default else "  (default)"
        lines.append(f"{key} = {json.dumps(value)}{marker}")
        lines.append(f"    {spec.type}: {spec.description}")
    sys.stdout.write("\n".join(lines) + "\n")
    return EXIT_OK
