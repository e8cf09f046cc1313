"""Files tools run, read from the repository on disk: a script run with `bash`, a make target, an npm script. The
guard judges the call by what the file does, reads only regular files inside the repository (bounded), and does
not hold against a file what it leaves to its parameters or what it cannot parse."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from guard_support import HOME, bash, fixed_home

from dun.guard.tasks import MAX_BYTES


@pytest.fixture(autouse=True)
def _home(monkeypatch: pytest.MonkeyPatch) -> None:
    fixed_home(monkeypatch)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "scripts").mkdir(parents=True)
    (root / "scripts" / "wipe.sh").write_text(f"#!/bin/sh\nset -e\nrm -rf {HOME}\n")
    (root / "scripts" / "build.sh").write_text('#!/bin/bash\nrm -rf "$BUILD_DIR"\nmake -C "$1" all\n')
    (root / "scripts" / "broken.sh").write_text("if then fi ((\n")
    (root / "Makefile").write_text("all: build\nbuild:\n\tcc -o app main.c\nclean:\n\trm -rf build\n"
                                   f"sync: build\n\tgit push --force origin main\nnuke:\n\trm -rf {HOME}/projects\n")
    (root / "package.json").write_text(json.dumps({"scripts": {
        "test": "vitest run", "pretest": "tsc", "reset": f"rm -rf {HOME}", "chain": "npm run reset"}}))
    return root


def run(command: str, repo: Path, cwd: Path | None = None) -> str | None:
    return bash(command, cwd=str(cwd or repo), root=repo).rule


def test_a_script_in_the_repository_is_judged_by_its_commands(repo: Path) -> None:
    assert run("bash scripts/wipe.sh", repo) == "fs.delete-system"
    assert run("sh ./scripts/wipe.sh", repo) == "fs.delete-system"
    assert run("cd scripts && ./wipe.sh", repo) == "fs.delete-system"


def test_what_a_script_leaves_to_its_parameters_or_cannot_parse_is_not_held_against_it(repo: Path) -> None:
    assert run("bash scripts/build.sh", repo) is None
    assert run("bash scripts/broken.sh", repo) is None


def test_make_runs_the_recipes_of_the_targets_asked_for_and_their_prerequisites(repo: Path) -> None:
    assert run("make", repo) is None
    assert run("make clean", repo) is None
    assert run("make sync", repo) == "git.push-force"
    assert run("make nuke", repo) == "fs.delete-outside"
    assert run("make -n nuke", repo) is None  # a dry run prints the recipe


def test_npm_scripts_are_judged_by_what_they_run_with_their_pre_and_post_scripts(repo: Path) -> None:
    assert run("npm test", repo) is None
    assert run("npm run reset", repo) == "fs.delete-system"
    assert run("npm run chain", repo) == "fs.delete-system"  # a script that runs another
    assert run("yarn reset", repo) == "fs.delete-system"


def test_only_regular_files_inside_the_repository_and_not_too_large_are_read(repo: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.sh"
    outside.write_text(f"rm -rf {HOME}\n")
    os.symlink(outside, repo / "scripts" / "link.sh")
    assert run("bash scripts/link.sh", repo) is None  # followed by the shell, but not read through a link
    big = repo / "scripts" / "big.sh"
    big.write_text(f"rm -rf {HOME}\n" + "#" * MAX_BYTES)
    assert run("bash scripts/big.sh", repo) is None
    assert run(f"bash {outside}", repo) is None


def test_a_file_written_in_the_same_line_is_read_from_the_line_not_the_disk(repo: Path) -> None:
    assert run("printf 'all:\\n\\techo ok\\n' > Makefile && make nuke", repo) is None
    assert run(f"printf 'nuke:\\n\\trm -rf {HOME}\\n' > Makefile && make nuke", repo) == "fs.delete-system"


def test_a_copy_of_a_file_in_the_repository_holds_its_text(repo: Path) -> None:
    """`cp .envrc.example .envrc && direnv allow` is judged by what the copied file does, not refused as unseen."""
    (repo / ".envrc.example").write_text("export DATABASE_URL=postgres://localhost/dev\n")
    assert run("cp .envrc.example .envrc && direnv allow", repo) is None
    assert run("cp scripts/wipe.sh .envrc && direnv allow", repo) == "fs.delete-system"
    assert run("cp /etc/hostname .envrc && direnv allow", repo) == "exec.unseen-code"  # outside: not read
