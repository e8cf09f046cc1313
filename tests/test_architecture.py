"""docs/architecture.md draws the layers pyproject.toml's import-linter contract enforces, with every package of
dun/ in both: a package added without a place in the layers, or a picture that no longer matches the contract,
fails here."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def contract_layers() -> list[set[str]]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    layers = next(c for c in config["tool"]["importlinter"]["contracts"] if c["type"] == "layers")["layers"]
    return [{name.strip() for name in layer.split("|")} for layer in layers]


def drawn_layers() -> list[set[str]]:
    """The picture under `## The layers`: one layer a line, `a | b` side by side, an indented `| c` joins the line
    above."""
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    block = re.search(r"## The layers\n.*?```\n(.*?)```", text, re.S)
    assert block, "docs/architecture.md has no layer picture"
    layers: list[set[str]] = []
    for line in block.group(1).splitlines():
        names = set(re.findall(r"\bdun\.\w+", line.split("   ")[0]))
        if line.startswith("  |"):
            layers[-1] |= names
        else:
            layers.append(names)
    return layers


def packages() -> set[str]:
    """dun's subpackages and its top-level modules other than the entry points."""
    dun = ROOT / "dun"
    subpackages = {f"dun.{p.name}" for p in dun.iterdir() if (p / "__init__.py").is_file()}
    return subpackages | {f"dun.{p.stem}" for p in dun.glob("*.py") if p.stem not in {"__init__", "__main__", "entry"}}


def test_the_picture_is_the_contract() -> None:
    assert drawn_layers() == contract_layers()


def test_every_package_has_a_layer() -> None:
    layered = set().union(*contract_layers())
    assert packages() - layered == set(), "a package of dun/ is in no layer of pyproject.toml's contract"
    assert layered - packages() == set(), "the contract names a package dun/ does not have"


def test_every_package_is_in_the_where_to_look_table() -> None:
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    table = text[:text.index("## The layers")]
    missing = [p for p in sorted(packages()) if f"`dun/{p.removeprefix('dun.')}" not in table]
    assert not missing, f"docs/architecture.md's table does not say what lives in {missing}"
