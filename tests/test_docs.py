"""The documentation is the user's manual: its examples must load, and it must name every field and key."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from dun.checks.gates import GATE_FIELDS
from dun.config.loader import CONFIG_FIELDS
from dun.config.schema import Validator
from dun.config.yamlio import load_yaml_text
from dun.engine.manager import check_types, make_manager
from dun.engine.manifest import CHECK_FIELDS, MANIFEST_FIELDS, validate_manifest

ROOT = Path(__file__).resolve().parent.parent
HISTORY_SECTIONS = ("review", "notify")
FENCE = re.compile(r"^```yaml\n(.*?)^```", re.S | re.M)


def yaml_blocks(doc: str) -> list[str]:
    return FENCE.findall((ROOT / doc).read_text(encoding="utf-8"))


@pytest.mark.parametrize("doc", ["docs/plugins.md", "README.md"])
def test_every_manifest_example_validates(doc: str) -> None:
    types = check_types(make_manager(entry_points=False))
    manifests = 0
    for block in yaml_blocks(doc):
        data = load_yaml_text(block, doc)
        if isinstance(data, dict) and "checks" in data:
            manifests += 1
            _, errors = validate_manifest(data, doc, types, 300.0)
            assert errors == [], block
        elif isinstance(data, dict) and "required" in data:
            validator = Validator(doc)
            validator.check_map(data, GATE_FIELDS)
            assert validator.errors == []
    assert manifests >= 1


def test_plugin_guide_documents_every_field_of_every_type() -> None:
    guide = (ROOT / "docs/plugins.md").read_text(encoding="utf-8")
    for name in [*MANIFEST_FIELDS, *CHECK_FIELDS]:
        assert f"| `{name}` |" in guide, name
    for ctype in check_types(make_manager(entry_points=False)).values():
        section = guide.split(f"### `{ctype.name}`", 1)[1].split("\n### ", 1)[0]
        for field in ctype.fields:
            assert f"`{field}`" in section, f"{ctype.name}.{field}"


def test_readme_documents_commands_config_keys_and_exit_codes() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for command in ("dun check", "dun plugins list", "dun plugins validate", "dun explain", "dun config show",
                    "dun init", "dun iterate", "dun respond", "dun loop", "dun status", "dun logs", "dun stop"):
        assert command in readme, command
    history = (ROOT / "docs/history.md").read_text(encoding="utf-8")
    for section, spec in CONFIG_FIELDS.items():
        for key in spec.fields or {}:  # the operator's sections are documented in docs/history.md
            doc = history if section in HISTORY_SECTIONS else readme
            assert f"`{section}.{key}`" in doc, f"{section}.{key}"
    for flag in ("--format", "--jobs", "--only", "--skip", "--strict", "--verbose", "--color", "--output"):
        assert flag in readme, flag
    for flag in ("--automation", "--max-prompt-chars", "--iteration", "--file", "--agent", "--model",
                 "--max-iterations", "--max-budget-usd", "--iteration-timeout", "--max-calls-per-hour", "--live",
                 "--skip-permissions",
                 "--fresh", "--reset-circuit", "--dry-run", "--now", "--out", "--decide", "--before",
                 "--exit-code", "--confirm", "scripts/dun-loop.sh"):
        assert flag in readme, flag
    for code in ("| 0 |", "| 1 |", "| 2 |", "| 3 |", "| 4 |"):
        assert code in readme
    assert "make demo" in readme and "make test" in readme
