"""A full disk and an agent that prints without end: the output is capped (the end kept, where the status block is),
and a full disk stops the loop with `disk_full`, the state saved, a clear message and exit 1; freeing space resumes
the run."""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import git, write
from fake_agent import block, calls, write_scenario
from loop_support import make_repo, work
from robust_support import dun, log, state


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 2 MB tmpfs, where mounting is allowed (root); skipped with the reason otherwise."""
    mount = tmp_path / "disk"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mount)], capture_output=True,
                          text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a 2 MB tmpfs here ({done.stderr.strip() or 'not root'}); "
                    "a full disk is then untested here")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], capture_output=True)


def repo_in(root: Path) -> Path:
    repo = root / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    write(repo, "README.md", "# demo\n")
    return make_repo(repo, boxes=("alpha",))


def flood(mb: float, does_alpha: bool = True) -> dict[str, Any]:
    """A step printing `mb` MB before its answer (doing the mission's one box first)."""
    actions = [{"tick": "MISSION.md", "box": "alpha"}, {"commit": "Do alpha"}] if does_alpha else []
    return {"format": "text", "stdout_mb": mb, "filler": "raw", "status": block(task="alpha", exit=True),
            "actions": actions, "cost_usd": 0.01}


def test_a_full_disk_stops_the_loop_and_freeing_space_resumes_it(small_disk: Path, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    repo = repo_in(small_disk)
    sc = write_scenario(tmp_path / "sc", [flood(8, does_alpha=False), work("alpha", exit=True)])
    monkeypatch.setenv("DUN_FAKE_SCENARIO", str(sc))
    done = dun(repo, "loop")
    assert done.returncode == 1, done.stderr
    assert "the disk is full" in done.stderr and "state saved" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr
    s = state(repo)
    assert (s["status"], s["stop_reason"], s["in_progress"]) == ("stopped", "disk_full", 1)
    assert "disk_full" in (repo / ".dun" / "REPORT.md").read_text(encoding="utf-8")
    (repo / ".dun" / "logs" / "iteration-1.out").unlink()  # the user frees some space
    again = dun(repo, "loop")
    assert again.returncode == 0, again.stderr
    assert log(repo, 1)["interrupted"] is True
    s = state(repo)
    assert (s["stop_reason"], s["iteration"]) == ("complete", 2)
    assert len(calls(sc)) == 2


def test_a_link_planted_as_the_agents_output_file_is_refused(repo: Path, tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """A link where dun writes the agent's output (here to /dev/full, which once injected a full disk) is never
    written through: the loop stops before the agent runs, naming the link (exit 2). The full disk itself is
    test_a_full_disk_stops_the_loop_and_freeing_space_resumes_it's, on a real 2 MB tmpfs."""
    make_repo(repo, boxes=("alpha",))
    logs = repo / ".dun" / "logs"
    logs.mkdir(parents=True)
    os.symlink("/dev/full", logs / "iteration-1.out")
    sc = write_scenario(tmp_path / "sc", [flood(1)])
    monkeypatch.setenv("DUN_FAKE_SCENARIO", str(sc))
    done = dun(repo, "loop")
    assert done.returncode == 2, done.stderr
    assert f"{logs / 'iteration-1.out'}: a link where dun expects a file or directory (it points to /dev/full)" \
        in done.stderr
    assert "Traceback" not in done.stderr
    assert calls(sc) == [], "no agent ran"


def test_output_past_the_cap_keeps_its_end_and_the_answer_parses(repo: Path, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    make_repo(repo, boxes=("alpha",), loop={"max_output_mb": 0.5})
    step = flood(4)
    step["actions"] = [*step["actions"], {"run": "head -c 3000000 /dev/zero | tr '\\0' e; echo; echo LAST-ERR-LINE"}]
    monkeypatch.setenv("DUN_FAKE_SCENARIO", str(write_scenario(tmp_path / "sc", [step])))
    done = dun(repo, "loop")
    assert done.returncode == 0, done.stderr
    assert "iteration 1: output over loop.max_output_mb" in done.stderr
    out, err = (repo / ".dun" / "logs" / "iteration-1.out"), (repo / ".dun" / "logs" / "iteration-1.err")
    assert 0 < out.stat().st_size <= 512 * 1024 and err.stat().st_size <= 512 * 1024
    assert out.read_bytes().startswith(b"filler ")  # cut at a line start
    assert b"---END_DUN_STATUS---" in out.read_bytes()
    assert err.read_bytes().rstrip().endswith(b"LAST-ERR-LINE")
    first = log(repo, 1)
    assert first["parse_outcome"] == "parsed" and first["status_block"]["exit_signal"] is True
    with contextlib.suppress(FileNotFoundError):
        assert oct(out.stat().st_mode & 0o777) == "0o600"


def test_the_shell_drivers_step_says_stop_on_a_full_disk(small_disk: Path) -> None:
    repo = repo_in(small_disk)
    with contextlib.suppress(OSError), (small_disk / "filler").open("wb") as fh:
        while True:  # the disk is full before dun starts
            fh.write(b"\0" * 65536)
    done = dun(repo, "respond", "--decide", "--before")
    assert (done.returncode, done.stdout) == (21, "stop disk_full\n"), done.stderr
    assert "the disk is full" in done.stderr and "Traceback" not in done.stderr


def test_a_loop_started_on_a_full_disk_says_so(small_disk: Path, tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    repo = repo_in(small_disk)
    monkeypatch.setenv("DUN_FAKE_SCENARIO", str(write_scenario(tmp_path / "sc", [work("alpha", exit=True)])))
    with contextlib.suppress(OSError), (small_disk / "filler").open("wb") as fh:
        while True:
            fh.write(b"\0" * 65536)
    done = dun(repo, "loop")
    assert done.returncode == 1, done.stderr
    assert "the disk is full" in done.stderr and "Traceback" not in done.stderr
