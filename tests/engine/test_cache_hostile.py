"""No cache file content can crash `dun check` or hang it: every cache file (results, replay, catalog, config, per-file
reads, glob regexes, the entry-point scan) replaced by garbage, a payload of the wrong shape, a FIFO, a link to
/dev/zero or a huge sparse file is a miss, and the run reports what a run with every cache off reports."""

from __future__ import annotations

import json
import marshal
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import git, write

from dun.core.cache import VERSION
from dun.core.cache.file import MAGIC

PLUGIN = """\
id: p
checks:
  - {id: boxes, type: checkboxes, files: ["plans/*.md"]}
  - {id: todos, type: files, rule: pattern-count, glob: ["**/*.py"], pattern: TODO, max: 0}
  - {id: tool, type: command, command: "echo ran; exit 1", inputs: {}}
"""


def dun(repo: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "dun", "check", "--format", "json", *args], cwd=repo, text=True,
                          capture_output=True, env={**os.environ, **(env or {})}, timeout=60, check=False)


def verdicts(proc: subprocess.CompletedProcess[str]) -> dict[str, tuple[str, str]]:
    assert proc.returncode in (0, 1), proc.stderr
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr
    return {c["id"]: (c["status"], c["signal"]) for c in json.loads(proc.stdout)["checks"]}


@pytest.fixture
def project(repo: Path, isolated_home: Path) -> Path:
    write(repo, ".dun/config.yaml", "plugins: {disabled: [python, go, git, mission, hooks, beads, helix]}\n")
    write(repo, ".dun/plugins/p.yaml", PLUGIN)
    write(repo, "plans/one.md", "- [ ] first\n- [x] second\n")
    write(repo, "src/a.py", "x = 1  # TODO\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "start")
    past = time.time() - 60
    for dirpath, dirnames, filenames in os.walk(repo):
        dirnames[:] = [d for d in dirnames if d != ".git"]
        for name in [*filenames, *dirnames, "."]:
            os.utime(os.path.join(dirpath, name), (past, past))
    return repo


@pytest.mark.parametrize("damage", ["garbage", "wrong shape", "fifo", "link to /dev/zero", "huge"])
def test_a_damaged_cache_file_is_a_miss(project: Path, isolated_home: Path, damage: str) -> None:
    dun(project)  # the checks run: the per-file caches and the glob regexes are stored
    truth = verdicts(dun(project, env={"DUN_NO_CACHE": "1"}))
    dun(project)  # every result reused: the replay is stored too
    files = sorted((isolated_home / ".cache" / "dun").rglob("*.marshal"))
    assert {"results.marshal", "replay.marshal", "catalog.marshal", "config.marshal"} <= {p.name for p in files}
    assert any(p.name.startswith("checkboxes-") for p in files), [p.name for p in files]
    assert any(p.name.startswith("globs-") for p in files), [p.name for p in files]
    for path in files:
        kind = marshal.loads(path.read_bytes())[2]
        path.unlink()
        if damage == "garbage":
            path.write_bytes(b"\x00\xffnot marshal" * 5)
        elif damage == "wrong shape":
            path.write_bytes(marshal.dumps((MAGIC, VERSION, kind, {"x": [1, (2, None)]})))
        elif damage == "fifo":
            os.mkfifo(path)
        elif damage == "link to /dev/zero":
            path.symlink_to("/dev/zero")
        else:
            with open(path, "wb") as fh:
                fh.truncate(1 << 31)  # sparse: 2 GiB that cost no disk
    assert verdicts(dun(project)) == truth
    assert verdicts(dun(project)) == truth  # and what that run stored in their place is sound too


def test_a_closed_stdout_is_no_traceback(project: Path) -> None:
    for _ in range(3):  # a fresh run, a reused one, a replayed one
        proc = subprocess.run(f"{sys.executable} -m dun check >&-", shell=True, cwd=project, capture_output=True,
                              text=True, timeout=60, check=False)
        assert proc.returncode == 1 and proc.stderr == ""
