"""Every enumeration dun writes or returns is documented where a user looks for it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from dun.core.kinds import DiscrepancyKind, ErrorKind, ExitCode, NotifyEvent, StopReason, WaitReason

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")
DOCS = README + "".join(p.read_text(encoding="utf-8") for p in sorted((ROOT / "docs").glob("*.md")))


@pytest.mark.parametrize("kind", [StopReason, WaitReason, DiscrepancyKind, ErrorKind, NotifyEvent],
                         ids=lambda k: k.__name__)
def test_every_value_is_documented(kind: type) -> None:
    missing = [str(v) for v in kind if f"`{v}`" not in DOCS and f"{v}," not in DOCS and f"{v})" not in DOCS]
    assert not missing, f"{kind.__name__} values not in README.md or docs/: {missing}"


def test_every_exit_code_is_in_a_readme_table() -> None:
    rows = [line for line in README.splitlines() if line.startswith("|")]
    missing = [f"{c.name}={int(c)}" for c in ExitCode
               if not any(re.search(rf"(?<![\d.]){int(c)}(?![\d.])", row) for row in rows)]
    assert not missing, missing
