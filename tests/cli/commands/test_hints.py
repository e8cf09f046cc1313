"""`dun hints` and the prompt's "Files that change together" section, on a real repository's history."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import git, write

DUN = str(Path(sys.executable).parent / "dun")
TITLE = "## Files that change together"


def dun(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([DUN, *args], cwd=cwd, capture_output=True, text=True, timeout=120)


def change(root: Path, message: str, *files: str) -> None:
    for f in files:
        write(root, f, (root / f).read_text() + message + "\n" if (root / f).exists() else message + "\n")
    git(root, "add", "--", *files)
    git(root, "commit", "-qm", message)


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A failing check pointing at tests/test_x.py, whose history says src/x.py and docs/x.md change with it."""
    root = tmp_path_factory.mktemp("hints") / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    write(root, ".dun/config.yaml", "plugins:\n  disabled: [python]\n")
    write(root, ".dun/plugins/p.yaml", """\
id: p
priority: 5
checks:
  - id: tests
    type: command
    command: "echo 'FAILED tests/test_x.py::test_a - boom'; exit 1"
    parser: {type: regex, pattern: '^FAILED (?P<file>[^:]+)::\\S+ - (?P<text>.*)$'}
""")
    write(root, "MISSION.md", "# Mission\n- [ ] make src/y.py faster\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "project")
    for n in range(3):
        change(root, f"x {n}", "src/x.py", "tests/test_x.py")
    change(root, "docs", "src/x.py", "docs/x.md")
    change(root, "y", "src/y.py", "tests/test_y.py")
    return root


def test_prints_the_files_that_change_with_a_file(project: Path) -> None:
    proc = dun(["hints", "tests/test_x.py"], project)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == "tests/test_x.py"
    assert lines[1].split() == ["1.000", "src/x.py"]
    assert lines[2].split()[1:] == ["docs/x.md", "(via", "src/x.py)"]


def test_paths_are_taken_from_the_directory_of_C_or_the_current_one(project: Path, tmp_path: Path) -> None:
    here = dun(["hints", "x.py", "-n", "1"], project / "src")
    elsewhere = dun(["hints", "-C", str(project / "src"), "x.py", "-n", "1"], tmp_path)
    assert here.returncode == elsewhere.returncode == 0, here.stderr + elsewhere.stderr
    assert here.stdout == elsewhere.stdout == "src/x.py\n  0.750  tests/test_x.py\n"


def test_json_and_the_exit_codes(project: Path, tmp_path: Path) -> None:
    proc = dun(["hints", "--json", "src/x.py", "README.none"], project)
    assert proc.returncode == 0
    data = json.loads(proc.stdout)
    assert data["kind"] == "hints" and data["head"] == git(project, "rev-parse", "HEAD").strip()
    assert [h["path"] for h in data["files"]["src/x.py"]] == ["tests/test_x.py", "docs/x.md"]
    assert data["files"]["README.none"] == []
    none = dun(["hints", "MISSION.md"], project)
    assert none.returncode == 1 and "no file changes with it" in none.stdout
    for bad in (["hints"], ["hints", "/etc/passwd"], ["hints", "-n", "0", "src/x.py"]):
        proc = dun(bad, project)
        assert proc.returncode == 2 and "Traceback" not in proc.stderr, (bad, proc.stderr)
    outside = dun(["hints", "-C", str(tmp_path), "a.py"], tmp_path)
    assert outside.returncode == 2 and "not a git repository" in outside.stderr


def prompt(project: Path, *flags: str) -> str:
    proc = dun(["iterate", *flags], project)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_the_prompt_shows_hints_for_the_work_lists_files(project: Path) -> None:
    text = prompt(project)
    assert text.index("## Work list") < text.index(TITLE) < text.index("## Instructions")
    section = text[text.index(TITLE):text.index("## Instructions")]
    assert "- tests/test_x.py: src/x.py (1.00), docs/x.md (" in section
    assert "via src/x.py" in section
    assert "- src/y.py: tests/test_y.py (1.00)" in section  # named in a box's text, not as its file


def test_the_hints_are_the_first_cut_when_the_prompt_is_over_its_bound(project: Path) -> None:
    full = prompt(project)
    assert TITLE in full
    bound = len(full) - 20  # one hint line less fits
    cut = prompt(project, "--max-prompt-chars", str(bound))
    assert len(cut) <= bound
    assert "- tests/test_x.py:" in cut and "- src/y.py:" not in cut
    assert "[HIGH] tests" in cut and "make src/y.py faster" in cut  # no work item was cut for them
    tight = prompt(project, "--max-prompt-chars", str(len(full) - 400))
    assert TITLE not in tight and "make src/y.py faster" in tight


def test_in_prompt_false_leaves_them_out(project: Path, tmp_path: Path) -> None:
    config = project / ".dun/config.yaml"
    before = config.read_text()
    try:
        config.write_text(before + "hints:\n  in_prompt: false\n")
        assert TITLE not in prompt(project)
    finally:
        config.write_text(before)


def test_json_keeps_apart_two_names_that_are_not_utf8(tmp_path: Path) -> None:
    """Two files whose names differ only in a byte that is not UTF-8 are two keys in git's quoted form (as `git
    ls-files` prints them), not one merged U+FFFD key losing a file's hints."""
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    names = [b"caf\xe9.py", b"caf\xe8.py"]
    for name, partner in zip(names, ("with_e9.py", "with_e8.py"), strict=True):
        for n in range(2):
            (root / os.fsdecode(name)).write_bytes(b"%d\n" % n)
            write(root, partner, f"{n}\n")
            git(root, "add", "-A")
            git(root, "commit", "-qm", f"{partner} {n}")
    proc = subprocess.run([DUN.encode(), b"hints", b"--json", *names], cwd=root, capture_output=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    files = json.loads(proc.stdout)["files"]
    quoted = subprocess.run(["git", "ls-files"], cwd=root, capture_output=True, text=True, check=True).stdout.split()
    assert sorted(files) == sorted(q for q in quoted if q.startswith('"caf'))
    assert [h["path"] for h in files['"caf\\351.py"']] == ["with_e9.py"]
    assert [h["path"] for h in files['"caf\\350.py"']] == ["with_e8.py"]
