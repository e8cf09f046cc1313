"""YAML plugin manifests: the schema, validation, and the layered catalog (built-in < plugin < user < repo)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from dun.config.reuse import REUSE_FIELDS
from dun.config.schema import Field, Validator, did_you_mean, plain, type_name
from dun.config.yamlio import load_yaml_file, load_yaml_text, position
from dun.core.errors import ConfigError
from dun.engine.checkapi import CheckSpec, CheckType
from dun.engine.model import DEFAULT_PRIORITY

ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")

TRIGGER_FIELDS: dict[str, Field] = {
    "path-exists": Field("str", "Applies when this path exists (file or directory)."),
    "glob-exists": Field("str", "Applies when any file matches this gitignore-style glob."),
}
MANIFEST_FIELDS: dict[str, Field] = {
    "id": Field("str", "Unique plugin id; a later layer with the same id replaces this one.", required=True),
    "description": Field("str", "What the plugin checks.", default=""),
    "priority": Field("int", "Plugin priority; lower runs first and ranks higher.", default=DEFAULT_PRIORITY),
    "triggers": Field("list", "The plugin applies when ANY trigger matches; no triggers means always.",
                      default=[], item=Field("map", "trigger", fields=TRIGGER_FIELDS)),
    "checks": Field("list", "The checks.", required=True, item=Field("any", "check")),
}
CHECK_FIELDS: dict[str, Field] = {
    "id": Field("str", "Check id, unique across all loaded plugins.", required=True),
    "type": Field("str", "Check type: command, files, gates, git-status, coverage, checkboxes.", required=True),
    "description": Field("str", "What the check verifies.", default=""),
    "priority": Field("int", "Check priority within its plugin; defaults to the plugin's.", default=None),
    "timeout": Field("float", "Seconds before the check is stopped; defaults to check.timeout_s.",
                     default=None, minimum=0.1),
    "next": Field("str", "What a person or agent should do when the check does not pass.", default=None),
    "after": Field("list", "Check ids that must finish first (e.g. coverage after tests).", default=[],
                   item=Field("str", "check id"), scalar_ok=True),
}
CHECK_FIELDS.update(REUSE_FIELDS)  # `inputs:`, `ttl:`, `flaky:`, which the config may add to any check too
ORIGINS = ("builtin", "plugin", "user", "repo")
MAX_CHECKS = 1000  # per manifest: each check is a process or a file scan; more is a generated mistake


@dataclass
class Manifest:
    """One validated plugin manifest: its identity, triggers and checks."""

    id: str
    description: str
    priority: int
    triggers: list[dict[str, str]]
    checks: list[CheckSpec]
    source: str
    origin: str
    overrides: list[str] = field(default_factory=list)  # sources this manifest replaced


def validate_manifest(data: object, source: str, types: dict[str, CheckType], default_timeout: float,
                      origin: str = "repo") -> tuple[Manifest | None, list[str]]:
    """Validate one manifest document; returns the manifest (None if invalid) and every error found."""
    v = Validator(source)
    if not isinstance(data, dict):
        v.error(data, None, "<top>", f"a manifest must be a mapping, got {type_name(data)}")
        return None, v.errors
    top = v.check_map(data, MANIFEST_FIELDS)
    plugin_id = top.get("id")
    if isinstance(plugin_id, str) and not ID_RE.match(plugin_id):
        v.error(data, "id", "id", f"invalid id {plugin_id!r}: use letters, digits, '_', '.', '-'")
    for i, trig in enumerate(data.get("triggers") or []):
        if isinstance(trig, dict) and len(trig) != 1:
            v.error(data["triggers"], i, f"triggers[{i}]", "each trigger needs exactly one of path-exists, glob-exists")
    plugin_priority: int = top["priority"] if isinstance(top.get("priority"), int) else DEFAULT_PRIORITY
    checks: list[CheckSpec] = []
    seen: dict[str, int] = {}
    raw_checks = data.get("checks")
    if isinstance(raw_checks, list) and len(raw_checks) > MAX_CHECKS:
        v.error(data, "checks", "checks", f"{len(raw_checks)} checks; a manifest holds at most {MAX_CHECKS}")
        return None, v.errors
    for i, raw in enumerate(raw_checks if isinstance(raw_checks, list) else []):
        raw_id = raw.get("id") if isinstance(raw, dict) else None
        if isinstance(raw_id, str) and raw_id in seen:
            v.error(raw, "id", f"checks[{i}].id", f"duplicate check id '{raw_id}' (also checks[{seen[raw_id]}])",
                    value=True)
            continue
        if isinstance(raw_id, str):
            seen[raw_id] = i
        spec = _validate_check(v, raw_checks, i, raw, types, str(plugin_id), plugin_priority, default_timeout)
        if spec is not None:
            checks.append(spec)
    if isinstance(raw_checks, list) and not raw_checks:
        v.error(data, "checks", "checks", "a manifest needs at least one check")
    if v.errors:
        return None, v.errors
    triggers = [{k: v for k, v in t.items() if v is not None} for t in top["triggers"]]
    return Manifest(id=str(plugin_id), description=top["description"], priority=plugin_priority,
                    triggers=triggers, checks=checks, source=source, origin=origin), []


def _validate_check(v: Validator, parent: object, i: int, raw: object, types: dict[str, CheckType], plugin: str,
                    plugin_priority: int, default_timeout: float) -> CheckSpec | None:
    path = f"checks[{i}]"
    if not isinstance(raw, dict):
        v.error(parent, i, path, f"a check must be a mapping, got {type_name(raw)}")
        return None
    before = len(v.errors)
    ctype_name = raw.get("type")
    ctype = types.get(ctype_name) if isinstance(ctype_name, str) else None
    if "type" not in raw:
        v.error(raw, None, f"{path}.type", "required key is missing")
        return None
    if ctype is None:
        v.error(raw, "type", f"{path}.type",
                f"unknown check type {ctype_name!r}{did_you_mean(str(ctype_name), sorted(types))}", value=True)
        return None
    fields = {**CHECK_FIELDS, **ctype.fields}
    values = v.check_map(raw, fields, path)
    check_id = values.get("id")
    if isinstance(check_id, str) and not ID_RE.match(check_id):
        v.error(raw, "id", f"{path}.id", f"invalid id {check_id!r}: use letters, digits, '_', '.', '-'",
                    value=True)
    if len(v.errors) > before:
        return None
    options = {k: values[k] for k in ctype.fields}
    if ctype.validate is not None:
        for key, message in ctype.validate(options):
            v.error(raw, key if key in raw else None, f"{path}.{key}", message, value=True)
        if len(v.errors) > before:
            return None
    pos = position(parent, i)
    return CheckSpec(
        id=values["id"], plugin=plugin, type=ctype.name,
        priority=values["priority"] if values["priority"] is not None else plugin_priority,
        plugin_priority=plugin_priority,
        timeout=values["timeout"] if values["timeout"] is not None else default_timeout,
        description=values["description"], next=values["next"], after=list(values["after"]),
        options=options, source=f"{v.source}:{pos[0]}" if pos else v.source, raw=plain(raw),
        inputs=plain(values["inputs"]) if values["inputs"] is not None else None, ttl=values["ttl"],
        flaky=bool(values["flaky"]),
    )


def load_manifest(path: Path, types: dict[str, CheckType], default_timeout: float, origin: str = "repo") -> Manifest:
    manifest, errors = validate_manifest(load_yaml_file(path), str(path), types, default_timeout, origin)
    if manifest is None:
        raise ConfigError(errors)
    return manifest


def check_manifest_text(text: str, source: str, types: dict[str, CheckType]) -> None:
    """ConfigError naming `source` unless `text` is a manifest `dun check` would load: a mission template's checks
    are judged before anything is written, so a bad template leaves the repository as it was."""
    manifest, errors = validate_manifest(load_yaml_text(text, source), source, types, default_timeout=300.0)
    if manifest is None:
        raise ConfigError(errors)


def manifest_files(directory: Path) -> list[Path]:
    if not directory.is_dir():
        return []
    return sorted(p for p in directory.iterdir() if p.suffix in (".yaml", ".yml") and p.is_file())
