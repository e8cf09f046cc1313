from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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


@pytest.mark.parametrize(("text", "message"), [
    ("a: !!bool maybe\n", "p.yaml:1:4: !!bool 'maybe': not a valid bool"),
    ("a:\n  b: !!int x\n", "p.yaml:2:6: !!int 'x': not a valid int"),
    ("a: !!python/object:os.system x\n", "p.yaml:1:4: the tag !!python/object:os.system is not supported"),
    ("a: !foo x\n", "p.yaml:1:4: the tag !foo is not supported"),
    ("a: !!set {b}\n", "p.yaml:1:4: the tag !!set is not supported on a list or mapping"),
    ("a: " + "[" * 65 + "]" * 65 + "\n", "p.yaml:1:67: nested more than 64 levels deep"),
    ("a: b\nc: \x7f\n", "p.yaml:2:4: YAML error: special characters are not allowed (U+007F)"),
])
def test_what_yaml_allows_but_dun_refuses_is_named_with_its_line(text: str, message: str) -> None:
    with pytest.raises(ConfigError) as info:
        load_yaml_text(text, "p.yaml")
    assert info.value.errors == [message]


def test_typed_tags_that_fit_their_value_are_fine() -> None:
    assert load_yaml_text("a: !!float 1\nb: !!str 2\nc: !!bool true\nd: !!seq [1]\n", "p.yaml") == {
        "a": 1.0, "b": "2", "c": True, "d": [1]}


def test_a_file_over_the_size_bound_or_not_regular_is_refused(tmp_path: Path) -> None:
    big = tmp_path / "big.yaml"
    big.write_text("a: 1\n" * 200_000)
    with pytest.raises(ConfigError, match="cannot read: larger than 512 KB"):
        load_yaml_file(big)
    with pytest.raises(ConfigError, match="cannot read: not a regular file"):
        load_yaml_file(Path("/dev/zero"))


@pytest.mark.parametrize(("text", "message"), [
    ("a:\n" + "".join(f"{' ' * i}k{i}:\n" for i in range(1, 65)) + " " * 65 + "v\n", "nested more than 64 levels"),
    ("- " * 65 + "x\n", "nested more than 64 levels"),
    ("a:\n- b:\n  - c: &x {d: 1}\n  - *x\n", None),
    ("a: 'quoted !not a tag'\nb: \"**/*.py\"\n", None),
])
def test_block_nesting_anchors_and_quoted_indicators(text: str, message: str | None) -> None:
    if message is None:
        load_yaml_text(text, "p.yaml")
        return
    with pytest.raises(ConfigError, match=message):
        load_yaml_text(text, "p.yaml")


def nested(draw: st.DrawFn, depth: int) -> object:
    """Exactly `depth` levels down its first child, lists and mappings mixed, siblings scalars."""
    if depth == 0:
        return draw(st.sampled_from(["x", "a b", "**/*.py", "-1", "k: v", 3, True, None]))
    siblings = [draw(st.sampled_from(["x", 3, None])) for _ in range(draw(st.integers(0, 1)))]
    if draw(st.booleans()):
        return [nested(draw, depth - 1), *siblings]
    return {"k": nested(draw, depth - 1), **{f"s{i}": v for i, v in enumerate(siblings)}}


@st.composite
def deep(draw: st.DrawFn) -> tuple[str, int]:
    """A document and how deep it nests (the top mapping included)."""
    from io import StringIO

    from ruamel.yaml import YAML

    yaml = YAML(typ="rt")
    yaml.default_flow_style = draw(st.sampled_from([False, True, None]))
    yaml.indent(mapping=draw(st.integers(1, 4)), sequence=draw(st.integers(2, 4)), offset=0)
    depth = draw(st.integers(50, 80))
    out = StringIO()
    yaml.dump({"top": nested(draw, depth)}, out)
    return out.getvalue(), depth + 1


@given(deep())
@settings(max_examples=60, deadline=None)
def test_nesting_is_refused_exactly_past_64_levels_in_one_parse(doc: tuple[str, int]) -> None:
    """The events are checked as the one parse goes (no scan before it): block, flow and mixed nesting around the
    bound, at every indentation ruamel writes, is refused exactly when it is deeper than 64 levels."""
    text, depth = doc
    if depth <= 64:
        load_yaml_text(text, "p.yaml")
        return
    with pytest.raises(ConfigError, match=r"^p\.yaml:\d+:\d+: nested more than 64 levels deep$"):
        load_yaml_text(text, "p.yaml")


@pytest.mark.parametrize(("text", "message"), [
    ("a: &x [1, *x]\n", "p.yaml:1:11: *x refers to a collection it is in"),
    ("a: [1, 2\nb: !foo x\n", None),  # a syntax error before the tag: the parse stops at the first
])
def test_what_the_parse_meets_first_is_what_is_named(text: str, message: str | None) -> None:
    with pytest.raises(ConfigError) as info:
        load_yaml_text(text, "p.yaml")
    assert info.value.errors == [message] if message else "YAML syntax error" in info.value.errors[0]
