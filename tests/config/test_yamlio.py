from __future__ import annotations

from pathlib import Path

import pytest

from dun.config.yamlio import load_yaml_file, load_yaml_text, position
from dun.core.errors import ConfigError

BOMB = """\
a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]
b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]
e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]
f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]
g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]
"""


def test_syntax_error_names_file_line_and_column() -> None:
    with pytest.raises(ConfigError) as info:
        load_yaml_text("id: x\nchecks: [\n  - a: b\n", "p.yaml")
    message = info.value.errors[0]
    assert message.startswith("p.yaml:")
    assert "YAML syntax error" in message
    line = int(message.split(":")[1])
    assert line >= 2


def test_alias_bomb_is_refused() -> None:
    with pytest.raises(ConfigError, match="alias bomb"):
        load_yaml_text(BOMB, "bomb.yaml")


def test_modest_aliases_are_fine() -> None:
    data = load_yaml_text("base: &b {x: 1}\nuse: *b\n", "ok.yaml")
    assert data["use"]["x"] == 1


def test_non_utf8_file_is_a_config_error(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_bytes(b"id: \xff\xfe\n")
    with pytest.raises(ConfigError, match="not UTF-8"):
        load_yaml_file(path)


def test_missing_file_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read"):
        load_yaml_file(tmp_path / "nope.yaml")


def test_position_of_keys_and_items() -> None:
    data = load_yaml_text("a: 1\nlist:\n  - x\n  - y\n", "f.yaml")
    assert position(data, "list") == (2, 1)
    assert position(data["list"], 1) == (4, 5)
