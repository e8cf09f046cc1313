"""Cache truth for what a test runner's own config files name outside the work tree (third cache-truth pass;
dun/checks/outside.py): pytest's `pythonpath = ["../shared"]`, a jest config requiring `../shared/jest.base.js`.
Edited there, they change what the run loads; git sees nothing. A cached run is compared with a run with every cache
off. The command stands in for the runner by doing what it does: it loads what the config names."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from conftest import write
from test_cache_classes import OLD_NS, age, commit, result

from dun.engine.model import Status

PYTEST_LIKE = ("  - id: suite\n    type: command\n    uses: pytest\n    inputs: {}\n    command: '{python} -B -c \""
               "import sys, tomllib; sys.path[:0] = tomllib.load(open(\\\"pyproject.toml\\\", \\\"rb\\\"))"
               "[\\\"tool\\\"][\\\"pytest\\\"][\\\"ini_options\\\"][\\\"pythonpath\\\"]; "
               "import shmod; assert shmod.X == 1\"'\n")
JEST_LIKE = ("  - id: suite\n    type: command\n    uses: jest\n    inputs: {}\n    command: 'grep -q good \"$(sed -n "
             "\"s/.*require(.\\\\(.*\\\\).).*/\\\\1/p\" jest.config.js).js\"'\n")


def agree(repo: Path, check: str) -> Status:
    cached, fresh = result(repo, check), result(repo, check, fresh=True)
    assert (cached.status, cached.signal) == (fresh.status, fresh.signal)
    return cached.status


def dated(path: Path) -> None:
    import os

    os.utime(path, ns=(OLD_NS, OLD_NS))


def test_pytests_pythonpath_outside_the_repository(repo: Path, tmp_path: Path) -> None:
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(repo / ".venv")], check=True)
    write(repo, ".gitignore", ".venv/\n")
    write(repo, "pyproject.toml", '[project]\nname = "p"\nversion = "0"\n\n[tool.pytest.ini_options]\n'
                                  'pythonpath = ["../shared"]\n')
    write(tmp_path, "shared/shmod.py", "X = 1\n")
    commit(repo, PYTEST_LIKE)
    age(repo, tmp_path / "shared")
    assert result(repo, "suite").status is Status.PASS
    assert result(repo, "suite").cached
    dated(write(tmp_path, "shared/shmod.py", "X = 2\n"))
    assert agree(repo, "suite") is Status.FAIL


def test_a_jest_config_requiring_a_base_outside(repo: Path, tmp_path: Path) -> None:
    write(repo, "package.json", '{"name": "p", "devDependencies": {"jest": "*"}, "scripts": {"test": "jest"}}\n')
    write(repo, "jest.config.js", "module.exports = { ...require('../shared/jest.base') };\n")
    write(tmp_path, "shared/jest.base.js", "// good\nmodule.exports = {};\n")
    commit(repo, JEST_LIKE)
    age(repo, tmp_path / "shared")
    assert result(repo, "suite").status is Status.PASS
    assert result(repo, "suite").cached
    dated(write(tmp_path, "shared/jest.base.js", "// bad!\nmodule.exports = {};\n"))
    assert agree(repo, "suite") is Status.FAIL
