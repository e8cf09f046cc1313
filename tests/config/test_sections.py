"""Typed config sections (dun/config/sections.py): each mirrors its section of the schema exactly, is built once
from the validated values, and a flag goes on top of it without changing what the config says."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
import types
import typing
from collections.abc import Mapping
from pathlib import Path

import pytest
from conftest import git, write

from dun.config import sections
from dun.config.loader import CONFIG_FIELDS, load_config

TYPED = sections.SECTIONS
PY_TYPES: dict[str, object] = {"str": str, "int": int, "float": float, "bool": bool, "list": tuple[str, ...],
                               "map": Mapping[str, object]}


def test_every_section_of_the_schema_is_typed() -> None:
    assert list(TYPED) == list(CONFIG_FIELDS)
    assert list(typing.get_type_hints(sections.Settings)) == list(CONFIG_FIELDS)


@pytest.mark.parametrize("name", sorted(TYPED))
def test_a_typed_section_has_the_schemas_keys_types_and_choices(name: str) -> None:
    schema = CONFIG_FIELDS[name].fields or {}
    hints = typing.get_type_hints(TYPED[name])
    assert list(hints) == list(schema), "the dataclass and the schema (dun/config/loader.py) name other keys"
    for key, spec in schema.items():
        hint = hints[key]
        if spec.default is None:  # a key that may be left unset
            assert typing.get_origin(hint) is types.UnionType and type(None) in typing.get_args(hint), key
            hint = next(a for a in typing.get_args(hint) if a is not type(None))
        if spec.choices is not None:
            assert typing.get_origin(hint) is typing.Literal and typing.get_args(hint) == spec.choices, key
        else:
            assert hint == PY_TYPES[spec.type], key


def test_built_once_from_the_validated_file_with_the_schemas_defaults(repo: Path) -> None:
    write(repo, ".dun/config.yaml", "iterate:\n  automation: plan\n  max_prompt_chars: 4000\n")
    config = load_config(repo)
    typed = config.settings.iterate
    assert typed == sections.Iterate(mission_file="MISSION.md", max_prompt_chars=4000, automation="plan",
                                     items_per_check=20)
    assert config.settings.iterate is typed
    with pytest.raises(dataclasses.FrozenInstanceError):
        typed.automation = "yolo"  # type: ignore[misc]


def test_a_flag_goes_on_top_of_the_config(repo: Path) -> None:
    write(repo, ".dun/config.yaml", "plugins:\n  disabled: [python]\niterate:\n  automation: plan\n")
    write(repo, "MISSION.md", "# Mission\n- [ ] one\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "config")
    dun = [str(Path(sys.executable).parent / "dun"), "iterate"]

    def prompt(*flags: str) -> str:
        proc = subprocess.run([*dun, *flags], cwd=repo, capture_output=True, text=True, timeout=120, check=False)
        assert proc.returncode == 0, proc.stderr
        return proc.stdout

    assert "Automation mode: plan." in prompt()
    assert "Automation mode: manual." in prompt("-a", "manual")


def test_flags_replace_their_keys_and_share_the_rest(repo: Path) -> None:
    write(repo, ".dun/config.yaml", "loop:\n  max_budget_usd: 7\ntrust:\n  protected: [tests/**]\n")
    settings = load_config(repo).settings
    assert settings.loop.max_budget_usd == 7.0 and isinstance(settings.loop.max_budget_usd, float)
    assert settings.trust.protected == ("tests/**",)  # a list is a tuple: no reader changes what another reads
    flagged = settings.with_flags({"loop.max_iterations": 3, "agent.name": "codex", "agent.model": None})
    assert (flagged.loop.max_iterations, flagged.agent.name, flagged.agent.model) == (3, "codex", None)
    assert flagged.loop.max_budget_usd == 7.0 and flagged.trust is settings.trust
    assert settings.loop.max_iterations == 100 and settings.agent.name == "claude"  # the config is unchanged
