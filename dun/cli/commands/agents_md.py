"""The AGENTS.md section that tells coding agents how to use dun (`dun init --agents-md`).

The section sits between `<!-- dun:begin` and `<!-- dun:end -->` markers: writing it again replaces only that
part, so the rest of the file stays the user's.
"""

from __future__ import annotations

import re
from pathlib import Path

from dun.core.atomic import write_text_atomic
from dun.core.resources import data_dir

AGENTS_FILE = "AGENTS.md"
_SECTION = re.compile(r"<!-- dun:begin.*?<!-- dun:end -->\n?", re.S)


def write_agents_section(root: Path) -> str:
    """Create AGENTS.md or put the section into it; returns what happened: created, updated or unchanged."""
    section = (data_dir("templates") / "agents-md.md").read_text(encoding="utf-8")
    path = root / AGENTS_FILE
    if not path.exists():
        write_text_atomic(path, f"# Agents\n\n{section}")
        return "created"
    text = path.read_text(encoding="utf-8")
    if _SECTION.search(text):
        new = _SECTION.sub(lambda _: section, text, count=1)
    else:
        new = text.rstrip("\n") + "\n\n" + section
    if new == text:
        return "unchanged"
    write_text_atomic(path, new)
    return "updated"
