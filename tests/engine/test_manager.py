"""The plugin manager's built-in output formats: registered by name, their module loaded only when one renders."""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path

from dun.engine.manager import OUTPUT_MODULES, make_manager, merged_mapping
from dun.engine.model import CheckResult, Report, Status
from dun.output.base import FormatOptions


def test_each_built_in_format_is_its_modules_own() -> None:
    """The table names each module's one format, as the module's own hook declares it."""
    for module, fmt in OUTPUT_MODULES.items():
        assert set(importlib.import_module(module).dun_output_formats()) == {fmt}, module


def test_a_format_renders_as_its_module_does() -> None:
    report = Report(Path("/repo"), [CheckResult(id="a", plugin="p", type="files", status=Status.FAIL, priority=50,
                                                signal="1 left", detail="one file")])
    formats = merged_mapping(make_manager(entry_points=False, agents=False), "dun_output_formats", "output format")
    assert set(formats) >= set(OUTPUT_MODULES.values())
    for module, fmt in OUTPUT_MODULES.items():
        own = importlib.import_module(module).dun_output_formats()[fmt]
        for options in (FormatOptions(), FormatOptions(color=True, verbose=True)):
            assert formats[fmt](report, options) == own(report, options), fmt


def test_building_the_manager_imports_no_output_module_and_rendering_one_imports_it_alone() -> None:
    code = ("import sys; from dun.engine.manager import make_manager, merged_mapping\n"
            "from dun.engine.model import Report; from dun.output.base import FormatOptions\n"
            "f = merged_mapping(make_manager(entry_points=False, agents=False), 'dun_output_formats', 'format')\n"
            "before = sorted(m for m in sys.modules if m.startswith('dun.output.') and m != 'dun.output.base')\n"
            "from pathlib import Path; f['llm'](Report(Path('/repo'), []), FormatOptions())\n"
            "after = sorted(m for m in sys.modules if m.startswith('dun.output.') and m != 'dun.output.base')\n"
            "print(before, after)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60).stdout
    assert out.strip() == "[] ['dun.output.llm']"


def test_a_built_in_format_shows_pluggy_its_hook_alone() -> None:
    """pluggy looks at every name `dir` gives, each through `inspect.getattr_static` unless it is in the instance's
    own dict: an object showing its class's 30 names made building the manager 20 times slower (6 ms)."""
    pm = make_manager(entry_points=False, agents=False)
    for module in OUTPUT_MODULES:
        plugin = pm.get_plugin(f"builtin:{module.removeprefix('dun.')}")
        assert dir(plugin) == ["dun_output_formats"] and "dun_output_formats" in vars(plugin), module
