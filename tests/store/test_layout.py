"""`.dun/` has one owner: dun/store. A path under it spelled anywhere else in dun/ fails here, so a new record or
directory is named in the store (dun/store/store.py, or dun/store/layout.py when its reader must stay
import-light) and every command agrees on where it is."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from dun.store import layout
from dun.store.store import Store

DUN = Path(__file__).resolve().parents[2] / "dun"
# A string that is a path: `.dun` as a whole component, no space. Prose that names a path for a person (help texts,
# messages, docstrings: "edit .dun/config.yaml") is documentation and stays readable.
_PATH = re.compile(r"(?:^|/)\.dun(?:/|$)")
PENDING: dict[str, int] = {}  # modules allowed to keep some spellings for now: none


def spellings(source: str) -> list[int]:
    """Lines of the string constants (f-string parts too) that spell a path under `.dun/`."""
    return sorted(node.lineno for node in ast.walk(ast.parse(source))
            if isinstance(node, ast.Constant) and isinstance(node.value, str)
            and not any(c.isspace() for c in node.value) and _PATH.search(node.value))


def test_spellings_are_found_in_code_and_not_in_prose() -> None:
    source = '''"""Writes .dun/state.json."""
a = root / ".dun" / "cache"
b = f".dun/logs/iteration-{n}.json"
c = "x/.dun"
help = "see .dun/config.yaml"
d = ".dunce"
e = "dun.gitignore"
'''
    assert spellings(source) == [2, 3, 4]


def test_dun_directory_is_spelled_only_in_the_store() -> None:
    found: dict[str, list[int]] = {}
    for path in sorted(DUN.rglob("*.py")):
        rel = path.relative_to(DUN).as_posix()
        if rel.startswith("store/"):
            continue
        lines = spellings(path.read_text(encoding="utf-8"))
        if len(lines) > PENDING.get(rel, 0):
            found[rel] = lines
    assert not found, f"`.dun/` spelled outside dun/store (ask the Store or dun/store/layout.py): {found}"


def test_layout_and_store_agree(tmp_path: Path) -> None:
    store = Store(tmp_path)
    assert store.dir == tmp_path / layout.DIR == tmp_path / ".dun"
    assert store.config_path == layout.config_path(tmp_path) == tmp_path / layout.CONFIG
    assert store.plugins_dir == layout.plugins_dir(tmp_path) == tmp_path / layout.PLUGINS
    assert store.cache_dir == tmp_path / ".dun" / "cache" == tmp_path / layout.CACHE
    assert store.templates_dir == tmp_path / ".dun" / "templates"
    assert store.report_html_path == tmp_path / ".dun" / "report.html"
    assert (tmp_path / layout.GITIGNORE) == store.dir / ".gitignore"
