"""Every cache file is the running dun's (dun/core/cache CODE): a result found by other code (a parser fixed in place,
a dun reinstalled from git at the same version number) is a miss, never replayed as this dun's finding."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import git, write

import dun

PLUGIN = r"""id: p
checks:
  - id: lint
    type: command
    command: "printf 'src/a.py:3: unused name\\n'; exit 1"
    inputs: {}
    parser: {type: regex, pattern: '^(?P<file>[^:]+):(?P<line>\d+): (?P<text>.*)$'}
"""
ITEM = 'items.append(Item(text=bounded(groups.get("text") or line)'


def run(repo: Path, code: Path) -> dict[str, object]:
    """`dun check --format json` as the dun installed at `code` runs it."""
    env = {**os.environ, "PYTHONPATH": str(code)}
    proc = subprocess.run([sys.executable, "-c", "from dun.entry import run; run()", "check", "--format", "json"],
                          cwd=repo, env=env, capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 1, proc.stderr
    found: dict[str, object] = next(c for c in json.loads(proc.stdout)["checks"] if c["id"] == "lint")
    return found


@pytest.mark.parametrize("install", ["editable", "pip"])
def test_a_result_found_by_other_code_is_not_reused(repo: Path, tmp_path: Path, install: str) -> None:
    # pip's layout: dun under site-packages, where a new version or a reinstall replaces files; an editable
    # install's files are edited in place
    code = tmp_path / ("src" if install == "editable" else "lib/python3/site-packages")
    shutil.copytree(Path(dun.__file__).parent, code / "dun", ignore=shutil.ignore_patterns("__pycache__"))
    write(repo, ".dun/config.yaml", "plugins: {disabled: [python, go, git, mission, hooks, beads, helix, javascript, "
                                    "rust, test-suites]}\n")
    write(repo, ".dun/plugins/p.yaml", PLUGIN)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "plugin")
    past = time.time() - 60  # out of the racy window, so results are stored
    for path in (repo / ".dun/config.yaml", repo / ".dun/plugins/p.yaml"):
        os.utime(path, (past, past))
    first = run(repo, code)
    assert first["items"][0]["text"] == "unused name"  # type: ignore[index]
    assert run(repo, code).get("cached") is True  # reused while dun is the same

    parser = code / "dun/checks/parsers/text.py"
    fixed = parser.read_text().replace(ITEM, 'items.append(Item(text="fixed: " + bounded(groups.get("text") or line)')
    assert fixed != parser.read_text()
    if install == "editable":
        with parser.open("r+") as fh:  # in place, as an editor saves
            fh.write(fixed)
    else:
        new = parser.with_suffix(".new")
        new.write_text(fixed)
        os.replace(new, parser)  # as pip installs a file
    second = run(repo, code)
    assert second.get("cached") is not True
    assert second["items"][0]["text"] == "fixed: unused name"  # type: ignore[index]
