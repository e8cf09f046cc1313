"""The co-change hints in a real loop: `dun loop` and scripts/dun-loop.sh driving the scripted fake agent in a real
git repository. The first prompt shows what history says; after an iteration that changed files together (without
committing them), the next prompt shows the link it made, and `dun hints check:ID` names what an iteration changed
for a check."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import git, write
from fake_agent import FAKE_COMMAND, block, write_scenario
from loop_support import make_repo

DUN = [sys.executable, "-m", "dun"]
SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "dun-loop.sh"
TITLE = "## Files that change together"


def dun(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*DUN, *args], cwd=repo, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=120)


def hints_section(repo: Path, n: int) -> str:
    prompt = (repo / ".dun" / "logs" / f"iteration-{n}.prompt.md").read_text(encoding="utf-8")
    assert TITLE in prompt, prompt
    return prompt[prompt.index(TITLE):prompt.index("## Instructions")]


@pytest.mark.parametrize("driver", ["loop", "sh"])
def test_the_hints_are_in_the_prompt_and_learn_from_each_iteration(repo: Path, tmp_path: Path, driver: str,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    make_repo(repo, boxes=("fix the parser in src/parse.py", "document it"), loop={"max_iterations": 2})
    for n in range(2):
        write(repo, "src/parse.py", f"# parser {n}\n")
        write(repo, "tests/test_parse.py", f"# tests {n}\n")
        git(repo, "add", "src", "tests")
        git(repo, "commit", "-qm", f"parser {n}")
    steps = [
        {"actions": [{"append": "src/parse.py", "content": "# faster\n"},
                     {"write": "src/lexer.py", "content": "# the parser's new helper\n"}],
         "status": block(task="mission-boxes", status="IN_PROGRESS", files=2), "cost_usd": 0.01},
        {"status": block(task="looked around", status="IN_PROGRESS", files=0), "cost_usd": 0.01},
    ]
    monkeypatch.setenv("DUN_FAKE_SCENARIO", str(write_scenario(tmp_path / "sc", steps)))
    if driver == "loop":
        proc = dun(repo, "loop")
    else:  # the shell driver: dun respond --decide before and after each call of the agent
        proc = subprocess.run([str(SCRIPT), "--", *FAKE_COMMAND], cwd=repo, stdin=subprocess.DEVNULL,
                              capture_output=True, text=True, timeout=120,
                              env={**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"})
    assert proc.returncode == 1, proc.stderr  # stopped at max_iterations, work remaining
    first = hints_section(repo, 1)
    assert "- src/parse.py: tests/test_parse.py (1.00)" in first
    assert "src/lexer.py" not in first
    second = hints_section(repo, 2)
    # iteration 1 changed the parser and a new helper together, committed nothing: the link comes from its log
    line = next(ln for ln in second.splitlines() if ln.startswith("- src/parse.py:"))
    assert "src/lexer.py" in line and "tests/test_parse.py" in line
    logged = json.loads((repo / ".dun" / "logs" / "iteration-1.json").read_text(encoding="utf-8"))
    assert sorted(logged["progress"]["paths"]) == ["src/lexer.py", "src/parse.py"]
    # the iteration was for the mission's boxes (it claimed the check the prompt offered): the check links too
    by_check = dun(repo, "hints", "check:mission-boxes", "--json")
    assert by_check.returncode == 0, by_check.stderr
    found = json.loads(by_check.stdout)["files"]["check:mission-boxes"]
    assert {h["path"] for h in found if h["direct"]} == {"src/lexer.py", "src/parse.py"}
    assert {(h["path"], h["via"]) for h in found if not h["direct"]} == {("tests/test_parse.py", "src/parse.py")}


def test_a_dry_run_shows_the_hints_and_writes_no_index(repo: Path, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    make_repo(repo, boxes=("fix the parser in src/parse.py",))
    write(repo, "src/parse.py", "# parser\n")
    write(repo, "tests/test_parse.py", "# tests\n")
    git(repo, "add", "src", "tests")
    git(repo, "commit", "-qm", "parser")
    monkeypatch.setenv("DUN_FAKE_SCENARIO", str(write_scenario(tmp_path / "sc", [])))
    before = sorted(p.relative_to(repo) for p in (repo / ".dun").rglob("*"))
    proc = dun(repo, "loop", "--dry-run")
    assert proc.returncode == 0, proc.stderr
    assert TITLE in proc.stdout and "- src/parse.py: tests/test_parse.py (1.00)" in proc.stdout
    # "changes nothing": the index that speeds the next prompt up is learned in memory, not written
    assert sorted(p.relative_to(repo) for p in (repo / ".dun").rglob("*")) == before
    assert dun(repo, "iterate").returncode == 0 and (repo / ".dun" / "cochange.idx").is_file()
