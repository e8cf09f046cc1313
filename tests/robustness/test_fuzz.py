"""Fuzzed manifests and config: whatever the file holds, dun answers with exit 0, 1 or 2 and one line per problem,
never exit 3 (a crash). Documents are built from dun's own keys and hostile values, then mutated as text (tags,
anchors, nesting, truncation); every example runs `dun list` (which loads config and manifests, runs nothing) and
`dun plugins validate` in-process through the CLI's one error handler."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from conftest import git, write
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dun.cli.main import main
from dun.config.loader import CONFIG_FIELDS
from dun.engine.manifest import CHECK_FIELDS, MANIFEST_FIELDS

CONFIG_KEYS = [k for spec in CONFIG_FIELDS.values() for k in (spec.fields or {})]
MANIFEST_KEYS = [*MANIFEST_FIELDS, *CHECK_FIELDS, "rule", "glob", "paths", "files", "parser", "shell", "threshold",
                 "path-exists", "glob-exists", "pattern", "min", "max", "run"]
WORDS = ["command", "files", "gates", "coverage", "checkboxes", "git-status", "true", "x", "", "**/*", "..",
         "/etc/passwd", "id with spaces", "é", "\u202e", "a" * 300, "{{", "$(id)", "null"]
FLOATS = st.sampled_from([float("nan"), float("inf"), -float("inf"), -1.0, 0.0, 1e308, -0.0, 1e-320, 3.5])
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-2**70, 2**70), FLOATS, st.sampled_from(WORDS),
                    st.text(max_size=20))
YAML_NOISE = ["!!bool maybe", "!!int x", "!!float y", "!!binary AAA", "!!set {a}", "!!omap [a]", "!foo x",
              "!!python/object:os.system x", "&a [*a]", "*nope", "<<: *a", "? [a, b]\n: c", "[" * 200 + "]" * 200,
              "{" * 70 + "}" * 70, "- " * 80 + "x", "\t", "%YAML 1.1\n---", "---\n---", "...", ": :", "'", '"',
              "|\n  block", ">-", "!!timestamp 2020-99-99", "0o777", "0x", "1_000", ".inf", "-.inf", ".nan",
              "~", "\x00", "\ufeff", "a: &x 1\nb: *x", "!!str", "!!map x", "!!seq x", "[a, {b: [c, {d: e}]}]"]


@dataclass(frozen=True)
class Raw:
    """A YAML token written as it is (a tag, an anchor, an alias, a special float)."""

    text: str


RAW = st.sampled_from([Raw(t) for t in ("!!bool maybe", "!!int x", "!!float y", "!!binary AAA", "!!set {a}",
                                        "!foo x", "!!python/object:os.system x", "!!timestamp 2020-99-99", "*nope",
                                        ".nan", ".inf", "-.inf", "0o777", "1_000", "~", "!!str 1", "!!float 1",
                                        "[" * 200 + "]" * 200, "{a: " * 70 + "1" + "}" * 70, "&a [*a]",
                                        "!!map x", "!!seq x", "!!null x", "'unterminated", "|\n  block")])


def documents(keys: list[str]) -> st.SearchStrategy[Any]:
    """Nested mappings and lists using `keys`, with hostile scalars and raw YAML tokens."""
    key = st.one_of(st.sampled_from(keys), st.sampled_from(list(CONFIG_FIELDS)), st.text(max_size=8))
    leaf = st.one_of(SCALARS, RAW)
    return st.recursive(leaf, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                      st.dictionaries(key, inner, max_size=5)), max_leaves=25)


def scalar(value: Any) -> str:
    if isinstance(value, Raw):
        return value.text
    if isinstance(value, float) and value != value:
        return ".nan"
    if isinstance(value, float) and value in (float("inf"), -float("inf")):
        return ".inf" if value > 0 else "-.inf"
    return json.dumps(value, ensure_ascii=False)


def block_yaml(value: Any, indent: int = 0) -> list[str]:
    """`value` in YAML's block style (what people write), raw tokens left as they are."""
    pad = " " * indent
    if isinstance(value, dict) and value:
        lines = []
        for k, v in value.items():
            nested = isinstance(v, dict | list) and v
            lines.append(f"{pad}{scalar(k)}:" + ("" if nested else f" {scalar(v) if not nested else ''}"))
            if nested:
                lines.extend(block_yaml(v, indent + 2))
        return lines
    if isinstance(value, list) and value:
        lines = []
        for v in value:
            nested = block_yaml(v, indent + 2) if isinstance(v, dict | list) and v else None
            lines.extend([f"{pad}-", *nested] if nested else [f"{pad}- {scalar(v)}"])
        return lines
    return [pad + ("{}" if isinstance(value, dict) else "[]" if isinstance(value, list) else scalar(value))]


@st.composite
def yaml_texts(draw: st.DrawFn, keys: list[str]) -> str:
    text = "\n".join(block_yaml(draw(documents(keys)))) + "\n"
    for _ in range(draw(st.sampled_from([0, 0, 0, 1, 2]))):
        at = draw(st.integers(0, len(text)))
        text = text[:at] + draw(st.sampled_from(YAML_NOISE)) + text[at:]
    if draw(st.integers(0, 9)) == 0:
        text = text[: draw(st.integers(0, len(text)))]  # truncated
    return text


@st.composite
def tomls(draw: st.DrawFn) -> str:
    lines = ["[project]", "name = 'x'"]
    for _ in range(draw(st.integers(0, 4))):
        head = draw(st.sampled_from(["[tool]", "[tool.dun]", "[tool.dun.loop]", "[tool.dun.check]",
                                     "[[tool.dun.loop]]", "[tool.dun.nope]", ""]))
        key = draw(st.sampled_from([*CONFIG_KEYS, *CONFIG_FIELDS, "tool", "dun", "x"]))
        value = draw(st.sampled_from(["1", "-1", "nan", "inf", "-inf", "'x'", "true", "[1, 'a']", "{a = 1}",
                                      "1e999", "'''a'''", "[[[[[]]]]]", "0x10", "2020-01-01"]))
        lines += [head, f"{key} = {value}"]
    lines.append(draw(st.sampled_from(["", "tool = 'x'", "tool.dun = 3", "[tool]\ndun = []", "a = [" * 50])))
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def fuzz_repo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    root = tmp_path_factory.mktemp("fuzz") / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    write(root, "README.md", "# fuzz\n")
    old = Path.cwd()
    os.chdir(root)
    try:
        yield root
    finally:
        os.chdir(old)


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(args)
    err = capsys.readouterr().err
    return code, err


def no_crash(code: int, err: str, text: str) -> None:
    assert code in (0, 1, 2), f"exit {code} for:\n{text[:2000]!r}\n{err[-2000:]}"
    assert "Traceback" not in err


def located(code: int, err: str, name: str, text: str) -> None:
    """Every problem names the line it is on."""
    if code != 2:
        return
    for line in err.strip().split("\n"):
        if "more errors not shown" not in line:
            assert re.search(rf"{re.escape(name)}:\d+:\d+: ", line), (text, line)


EXAMPLES = int(os.environ.get("DUN_FUZZ_EXAMPLES", "120"))  # more for a longer hunt; the suite stays fast
SETTINGS = settings(max_examples=EXAMPLES, deadline=None, database=None, derandomize=True,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


@SETTINGS
@given(text=yaml_texts(MANIFEST_KEYS))
def test_fuzzed_manifests_never_crash(fuzz_repo: Path, capsys: pytest.CaptureFixture[str], text: str) -> None:
    path = fuzz_repo / ".dun" / "plugins" / "fuzz.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    code, err = run(["plugins", "validate", str(path)], capsys)
    no_crash(code, err, text)
    located(code, err, "fuzz.yaml", text)
    no_crash(*run(["list", str(fuzz_repo)], capsys), text)


@SETTINGS
@given(text=yaml_texts(CONFIG_KEYS))
def test_fuzzed_config_never_crashes(fuzz_repo: Path, capsys: pytest.CaptureFixture[str], text: str) -> None:
    (fuzz_repo / ".dun" / "plugins" / "fuzz.yaml").unlink(missing_ok=True)
    write(fuzz_repo, ".dun/config.yaml", text)
    code, err = run(["list", str(fuzz_repo)], capsys)
    no_crash(code, err, text)
    located(code, err, "config.yaml", text)


@SETTINGS
@given(text=tomls())
def test_fuzzed_pyproject_never_crashes(fuzz_repo: Path, capsys: pytest.CaptureFixture[str], text: str) -> None:
    (fuzz_repo / ".dun" / "config.yaml").unlink(missing_ok=True)
    (fuzz_repo / ".dun" / "plugins" / "fuzz.yaml").unlink(missing_ok=True)
    write(fuzz_repo, "pyproject.toml", text)
    no_crash(*run(["list", str(fuzz_repo)], capsys), text)
