"""Hostile repository content: what dun reads is a regular file inside the repository, bounded in size; a symlink
to a device, a FIFO or a file outside never hangs dun, eats its memory or reaches the prompt; a corrupt git index
is one clear line."""

from __future__ import annotations

import os
import resource
import subprocess
import time
from pathlib import Path

import pytest
from conftest import git, write
from robust_support import DUN, dun

MEMORY_CAP = 1 << 30  # 1 GiB of address space: reading /dev/zero whole would need more


def capped(repo: Path, *args: str) -> tuple[subprocess.CompletedProcess[str], float]:
    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))

    start = time.monotonic()
    done = subprocess.run([*DUN, *args], cwd=repo, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=60, preexec_fn=limit)
    return done, time.monotonic() - start


@pytest.fixture
def hostile(repo: Path, tmp_path: Path) -> Path:
    """A `dun init` repository whose untracked files are symlinks to /dev/zero and outside files, and a FIFO,
    named as the built-in checks' files are."""
    assert dun(repo, "init").returncode == 0
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "dun init")
    outside = write(tmp_path, "outside/secret.md", "- [ ] OUTSIDE-SECRET-LINE\n")
    for name in ("fix_plan.md", "docs/helix/a-gate.yml", "coverage.json", "notes.md", "pyproject.toml"):
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        os.symlink("/dev/zero", repo / name)
    os.symlink(outside, repo / "TODO.md")
    os.mkfifo(repo / "pipe.md")
    write(repo, ".dun/plugins/scan.yaml", "id: scan\nchecks:\n  - id: every-line\n    type: files\n"
                                          "    rule: pattern-count\n    glob: ['**/*']\n    pattern: SECRET\n"
                                          "    max: 0\n")
    return repo


def test_check_never_reads_a_device_a_fifo_or_a_file_outside(hostile: Path) -> None:
    done, seconds = capped(hostile, "check", "-v")
    assert done.returncode in (0, 1), done.stderr
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr
    assert seconds < 30
    assert "OUTSIDE-SECRET-LINE" not in done.stdout
    assert "not a regular file" in done.stdout  # the scan says what it skipped, and why
    assert "outside the repository" in done.stdout


def test_the_prompt_never_holds_a_file_from_outside(hostile: Path, tmp_path: Path) -> None:
    for mission in ("../outside/secret.md", "TODO.md", "fix_plan.md", "pipe.md"):
        write(hostile, ".dun/config.yaml", f"iterate:\n  mission_file: {mission}\n")
        done, _ = capped(hostile, "iterate")
        assert done.returncode in (0, 1), done.stderr
        assert "OUTSIDE-SECRET-LINE" not in done.stdout
        assert f"({mission} could not be read:" in done.stdout


@pytest.mark.skipif(not os.path.exists("/etc/shadow"), reason="no /etc/shadow on this system")
def test_a_mission_symlinked_to_etc_shadow_is_refused(repo: Path) -> None:
    os.symlink("/etc/shadow", repo / "MISSION.md")
    done = dun(repo, "iterate")
    assert "root:" not in done.stdout
    assert "(MISSION.md could not be read: outside the repository" in done.stdout


def test_a_config_symlinked_to_a_device_is_one_line(repo: Path) -> None:
    (repo / ".dun").mkdir()
    os.symlink("/dev/zero", repo / ".dun" / "config.yaml")
    done, seconds = capped(repo, "check")
    assert done.returncode == 2 and seconds < 30
    assert done.stderr.strip().endswith("config.yaml: cannot read: not a regular file")


@pytest.mark.parametrize("command", [["check"], ["iterate"], ["loop", "--dry-run"], ["list"]])
def test_a_corrupt_git_index_is_one_clear_line(repo: Path, command: list[str]) -> None:
    (repo / ".git" / "index").write_bytes(b"DIRC" + os.urandom(60))
    done = dun(repo, *command)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "failed in" in lines[0] and "index" in lines[0], lines


def test_a_config_symlinked_out_of_the_repository_is_refused(repo: Path, tmp_path: Path) -> None:
    outside = write(tmp_path, "elsewhere/config.yaml", "loop:\n  max_iterations: 3\n")
    (repo / ".dun").mkdir()
    os.symlink(outside, repo / ".dun" / "config.yaml")
    done = dun(repo, "check")
    assert done.returncode == 2
    assert done.stderr.strip().endswith("config.yaml: cannot read: outside the repository (through a symlink or ..)")
