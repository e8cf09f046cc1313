"""pytest-cov's `--cov-fail-under` (or coverage's `fail_under`): the tests passed, the total is under the threshold,
and pytest exits 1 with the reason only among the lines it printed. One item that says the total and the threshold,
at the line of the project's config that sets it."""

from __future__ import annotations

import re
from pathlib import Path

from dun.checks.parsers.base import ParseContext, repo_path
from dun.engine.model import Item

# pytest-cov 5 and later: `ERROR: Coverage failure: total of 45 is less than fail-under=90`;
# before: `FAIL Required test coverage of 90% not reached. Total coverage: 45.00%`
_NEW = re.compile(r"Coverage failure: total of (?P<total>[\d.]+)%? is less than fail-under=(?P<required>[\d.]+)")
_OLD = re.compile(r"Required test coverage of (?P<required>[\d.]+)% not reached\. Total coverage: (?P<total>[\d.]+)%")
_SETTING = re.compile(r"--cov-fail-under|\bfail[_-]under\b")
_CONFIGS = ("pytest.ini", "pyproject.toml", "setup.cfg", "tox.ini", ".coveragerc")


def below_threshold(output: list[str], ctx: ParseContext) -> tuple[Item, str] | None:
    """(the item, its words for the summary) when the output says the total coverage is under the threshold."""
    found = next((m for line in reversed(output) for m in (_NEW.search(line), _OLD.search(line)) if m), None)
    if found is None:
        return None
    total, required = _percent(found["total"]), _percent(found["required"])
    where = _setting(ctx)
    item = Item(f"total coverage {total} is under the required {required} (pytest-cov's --cov-fail-under): "
                "the tests passed, pytest failed the run for it", where[0] if where else None,
                where[1] if where else None)
    return item, f"coverage {total} < {required}"


def _percent(text: str) -> str:
    return f"{text.rstrip('0').rstrip('.') if '.' in text else text}%"


def _setting(ctx: ParseContext) -> tuple[str, int] | None:
    """The first line of the project's config that sets the threshold."""
    for name in _CONFIGS:
        path = Path(ctx.cwd) / name
        try:
            lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            continue
        for number, line in enumerate(lines, 1):
            if _SETTING.search(line) and not line.lstrip().startswith(("#", ";")):
                shown = repo_path(str(path), ctx)
                if shown is not None:
                    return shown, number
    return None
