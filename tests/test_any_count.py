"""bench/any_count.py: the figure the typed-config work is measured by (`Any` per 1,000 lines in dun/)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parent.parent / "bench" / "any_count.py"

MODULE = '''"""Any in a docstring is not a use."""
from typing import Any


def f(x: Any) -> dict[str, Any]:  # Any in a comment is not a use
    y: dict[str, int] = {"Any": 1}
    return {"a": x, "b": y}
'''


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, check=False)


def figures(out: str) -> dict[str, tuple[int, float]]:
    found = re.findall(r"^  (Any|dict\[str, Any\])\s+([\d,]+)\s+\(([\d.]+) per 1,000 lines\)", out, re.M)
    return {name: (int(n.replace(",", "")), float(k)) for name, n, k in found}


def test_counts_only_code_and_reports_per_thousand_lines(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "a.py").write_text(MODULE)
    (tmp_path / "pkg" / "b.py").write_text("x = 1\n" * 93)  # 100 lines in all
    (tmp_path / "pkg" / "notes.txt").write_text("Any Any Any\n")  # not Python
    over = run(str(tmp_path / "pkg"))
    assert figures(over.stdout) == {"Any": (3, 30.0), "dict[str, Any]": (1, 10.0)}, over.stdout
    assert "lines           100" in over.stdout
    assert over.returncode == 1 and over.stdout.rstrip().endswith("FAIL")
    under = run(str(tmp_path / "pkg"), "--target", "30")
    assert under.returncode == 0 and under.stdout.rstrip().endswith("PASS")


def test_dun_itself_holds_the_target() -> None:
    # issue 28's figure, held from here on: new code that types with Any instead of what it means fails the suite
    result = run()
    got = figures(result.stdout)
    assert set(got) == {"Any", "dict[str, Any]"}, result.stdout
    assert got["Any"][0] > got["dict[str, Any]"][0] > 0
    assert got["Any"][1] <= 8 and result.returncode == 0, result.stdout


def test_a_missing_directory_is_one_line(tmp_path: Path) -> None:
    result = run(str(tmp_path / "nowhere"))
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.count("\n") == 1 and "not a directory" in result.stderr
