"""`dun.plugin` is the one public face for plugin authors: the guide uses only it, and its example runs."""

from __future__ import annotations

import re
from pathlib import Path

import dun.plugin

ROOT = Path(__file__).resolve().parent.parent
GUIDE = (ROOT / "docs" / "plugins.md").read_text(encoding="utf-8")


def test_the_plugin_guide_imports_only_the_public_module() -> None:
    imports = re.findall(r"^\s*(?:from|import) (dun[\w.]*)", GUIDE, re.M)
    assert imports, "the guide shows a Python plugin"
    assert set(imports) == {"dun.plugin"}, imports


def test_every_public_name_exists() -> None:
    for name in dun.plugin.__all__:
        assert getattr(dun.plugin, name) is not None, name


def test_the_guide_example_is_a_working_check_type(tmp_path: Path) -> None:
    block = next(b for b in re.findall(r"```python\n(.*?)```", GUIDE, re.S) if "from dun.plugin import" in b)
    namespace: dict[str, object] = {}
    exec(compile(block, "docs/plugins.md", "exec"), namespace)  # the reader's copy-paste, run as is
    (ctype,) = namespace["dun_check_types"]()  # type: ignore[operator]
    assert isinstance(ctype, dun.plugin.CheckType)
    (tmp_path / "big.bin").write_bytes(b"x" * 2000)
    (tmp_path / "small.txt").write_text("x")

    class Ctx:
        root = tmp_path

        def files(self) -> list[str]:
            return ["big.bin", "small.txt"]

    spec = type("Spec", (), {"options": {"max_bytes": 1000}})()
    outcome = ctype.run(spec, Ctx())
    assert outcome.status == dun.plugin.Status.FAIL
    assert [item.file for item in outcome.items] == ["big.bin"]


def test_the_check_context_offers_plugins_no_speed_internals() -> None:
    """How dun looks at git for the checks (one status, the index's listing, the per-file caches' view) is dun's
    business: a plugin sees the files, not the machinery."""
    public = {name for name in dir(dun.plugin.CheckContext) if not name.startswith("_")}
    assert not public & {"snapshot", "listing", "git_view"}
    assert {"files", "match"} <= public
