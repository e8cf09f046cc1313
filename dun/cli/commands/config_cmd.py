"""`dun config show`: the merged configuration, with where each value came from."""

from __future__ import annotations

import json
import sys

from dun.core.kinds import ExitCode
from dun.engine.session import open_session


def run_show(path: str | None, as_json: bool, as_toml: bool = False) -> int:
    session = open_session(path)
    cfg = session.config
    if as_toml:
        import tomli_w

        # ready to paste into pyproject.toml; None (unset) values have no TOML form and are left out
        values = {s: {k: v for k, v in keys.items() if v is not None} for s, keys in cfg.values.items()}
        sys.stdout.write(tomli_w.dumps({"tool": {"dun": values}}))
        return ExitCode.OK
    if as_json:
        sys.stdout.write(json.dumps({"source": cfg.source, "values": cfg.values}, indent=2) + "\n")
        return ExitCode.OK
    lines = [f"# config read from: {cfg.source}"]
    for key, value, spec in cfg.flat():
        marker = "" if value != spec.default else "  (default)"
        lines.append(f"{key} = {json.dumps(value)}{marker}")
        lines.append(f"    {spec.type}: {spec.description}")
    sys.stdout.write("\n".join(lines) + "\n")
    return ExitCode.OK


def run_get(key: str, path: str | None) -> int:
    """One value, bare, for scripts (`dun config get loop.iteration_timeout_s`)."""
    session = open_session(path)
    values = {k: v for k, v, _ in session.config.flat()}
    if key not in values:
        from dun.config.schema import did_you_mean
        from dun.core.errors import UsageError

        raise UsageError(f"unknown config key '{key}'{did_you_mean(key, sorted(values))}")
    value = values[key]
    sys.stdout.write((value if isinstance(value, str) else json.dumps(value)) + "\n")
    return ExitCode.OK
