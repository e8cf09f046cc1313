from __future__ import annotations

import string

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dun.config.yamlio import load_yaml_text
from dun.core.errors import ConfigError
from dun.engine.checkapi import CheckType
from dun.engine.manager import check_types, make_manager
from dun.engine.manifest import validate_manifest


@pytest.fixture(scope="module")
def types() -> dict[str, CheckType]:
    return check_types(make_manager(entry_points=False))


def validate(text: str, types: dict[str, CheckType]) -> list[str]:
    _, errors = validate_manifest(load_yaml_text(text, "m.yaml"), "m.yaml", types, 300.0)
    return errors


GOOD = """\
id: demo
priority: 20
checks:
  - id: readme
    type: files
    rule: path-exists
    paths: README.md
  - id: tests
    type: command
    command: "true"
    after: readme
"""


def test_valid_manifest_gives_specs(types: dict[str, CheckType]) -> None:
    manifest, errors = validate_manifest(load_yaml_text(GOOD, "m.yaml"), "m.yaml", types, 300.0)
    assert errors == []
    assert manifest is not None
    readme, tests = manifest.checks
    assert readme.options["paths"] == ["README.md"]  # a scalar where a list is allowed
    assert readme.priority == 20  # inherited from the plugin
    assert tests.after == ["readme"]
    assert tests.timeout == 300.0
    assert readme.source == "m.yaml:4"


def test_unknown_check_type_has_position_path_and_suggestion(types: dict[str, CheckType]) -> None:
    text = GOOD + "  - id: third\n    type: comand\n    command: ls\n"
    assert validate(text, types) == [
        "m.yaml:13:11: checks[2].type: unknown check type 'comand' (did you mean 'command'?)"
    ]


def test_unknown_key_suggests_the_right_one(types: dict[str, CheckType]) -> None:
    errors = validate(GOOD.replace("    paths: README.md", "    pathz: README.md"), types)
    assert errors == ["m.yaml:7:5: checks[0].pathz: unknown key 'pathz' (did you mean 'paths'?)"]


def test_duplicate_check_ids(types: dict[str, CheckType]) -> None:
    errors = validate(GOOD.replace("id: tests", "id: readme"), types)
    assert errors == ["m.yaml:8:9: checks[1].id: duplicate check id 'readme' (also checks[0])"]


def test_wrong_types_are_reported_each(types: dict[str, CheckType]) -> None:
    text = GOOD.replace("priority: 20", "priority: high").replace('command: "true"', "command: [a, b]")
    errors = validate(text, types)
    assert "m.yaml:2:11: priority: expected an integer, got str" in errors
    assert "m.yaml:10:14: checks[1].command: expected a string, got list" in errors


def test_missing_required_keys(types: dict[str, CheckType]) -> None:
    errors = validate("id: x\nchecks:\n  - type: command\n", types)
    assert errors == ["m.yaml:3:5: checks[0].id: required key is missing",
                      "m.yaml:3:5: checks[0].command: required key is missing"]


def test_bad_choice_and_regex(types: dict[str, CheckType]) -> None:
    text = "id: x\nchecks:\n  - id: c\n    type: files\n    rule: path-exist\n    paths: [a]\n"
    (error,) = validate(text, types)
    assert error.startswith("m.yaml:5:11: checks[0].rule: must be one of")
    assert "(did you mean 'path-exists'?)" in error
    text = ("id: x\nchecks:\n  - id: c\n    type: files\n    rule: pattern-count\n    glob: '*'\n"
            "    pattern: '('\n    max: 0\n")
    (error,) = validate(text, types)
    assert "checks[0].pattern: invalid regex '('" in error


def test_top_level_must_be_a_mapping(types: dict[str, CheckType]) -> None:
    assert validate("- a\n- b\n", types) == ["m.yaml:1:1: <top>: a manifest must be a mapping, got list"]


def test_triggers_need_exactly_one_kind(types: dict[str, CheckType]) -> None:
    text = GOOD.replace("priority: 20\n", "priority: 20\ntriggers:\n  - {path-exists: a, glob-exists: b}\n")
    assert validate(text, types) == ["m.yaml:4:5: triggers[0]: each trigger needs exactly one of path-exists, "
                                     "glob-exists"]


def test_invalid_manifest_raises_through_load(tmp_path: object, types: dict[str, CheckType]) -> None:
    from pathlib import Path

    from dun.engine.manifest import load_manifest

    path = Path(str(tmp_path)) / "bad.yaml"
    path.write_text("id: x\nchecks: []\n")
    with pytest.raises(ConfigError) as info:
        load_manifest(path, types, 300.0)
    assert info.value.errors == [f"{path}:2:1: checks: a manifest needs at least one check"]


# Property: any document the validator sees gives either a manifest or file:line:col errors, never an exception.
yaml_scalars = st.one_of(st.integers(), st.booleans(), st.text(string.ascii_letters, max_size=8), st.none())
yaml_values = st.recursive(yaml_scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.text(string.ascii_lowercase + "-_", min_size=1, max_size=10),
                                                 inner, max_size=4)), max_leaves=12)
check_keys = st.sampled_from(["id", "type", "command", "rule", "paths", "glob", "pattern", "max", "min",
                              "priority", "timeout", "after", "next", "files", "threshold", "bogus"])


@st.composite
def manifests(draw: st.DrawFn) -> dict[str, object]:
    checks = draw(st.lists(st.dictionaries(check_keys, st.one_of(yaml_values, st.sampled_from(
        ["command", "files", "gates", "git-status", "coverage", "checkboxes", "path-exists"]))), max_size=4))
    doc: dict[str, object] = {"id": draw(st.one_of(st.just("p"), yaml_values)), "checks": checks}
    if draw(st.booleans()):
        doc["priority"] = draw(yaml_values)
    return doc


@settings(max_examples=300, deadline=None)
@given(manifests())
def test_validator_never_raises(types: dict[str, CheckType], doc: dict[str, object]) -> None:
    import io

    from ruamel.yaml import YAML

    buf = io.StringIO()
    YAML(typ="safe", pure=True).dump(doc, buf)
    data = load_yaml_text(buf.getvalue(), "h.yaml")
    manifest, errors = validate_manifest(data, "h.yaml", types, 300.0)
    assert (manifest is None) == bool(errors)
    for error in errors:
        assert error.startswith("h.yaml:"), error
        assert "\n" not in error
    if manifest is not None:
        assert len({c.id for c in manifest.checks}) == len(manifest.checks)
