"""`dun iterate`: the prompt an agent gets, and its bounds."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import git, write

from dun.prompt.build import ALL_PASS

DUN = str(Path(sys.executable).parent / "dun")


def dun(args: list[str], cwd: Path, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([DUN, *args], cwd=cwd, capture_output=True, text=True, input=stdin, timeout=120)


@pytest.fixture
def project(repo: Path) -> Path:
    write(repo, ".dun/config.yaml", "plugins:\n  disabled: [python]\n")
    write(repo, ".dun/.gitignore", "handoff.json\niterate.json\nstate.json\nlogs/\n")
    write(repo, ".dun/plugins/p.yaml", """\
id: p
priority: 5
checks:
  - id: tests
    type: command
    command: "echo 'FAILED tests/test_x.py::test_a - boom'; exit 1"
    parser: {type: regex, pattern: '^FAILED (?P<file>[^:]+)::\\S+ - (?P<text>.*)$'}
    next: fix the failing test
""")
    write(repo, "MISSION.md", "# Mission\nShip the parser.\n\n## Tasks\n- [ ] write the parser\n- [x] plan it\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "project")
    return repo


def sections(prompt: str) -> list[str]:
    return [line[3:] for line in prompt.splitlines() if line.startswith("## ")]


def test_prompt_has_sections_in_order_and_only_the_prompt_on_stdout(project: Path) -> None:
    proc = dun(["iterate"], project)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    assert sections(proc.stdout) == ["Mission", "Tasks", "Git context", "Work list (pick ONE)", "Instructions",
                                     "Status block"]
    out = proc.stdout
    assert "Ship the parser." in out
    assert "### 1. [HIGH] tests (p, fail)" in out
    assert "- tests/test_x.py boom" in out
    assert "Next: fix the failing test" in out
    assert "- MISSION.md:5 write the parser" in out
    assert out.rstrip().endswith("---END_DUN_STATUS---")
    assert out.index("[HIGH] tests") < out.index("[MEDIUM] mission-boxes")


def test_all_pass_prints_only_the_marker_block(repo: Path) -> None:
    write(repo, ".dun/config.yaml", "plugins:\n  disabled: [python]\n")
    write(repo, ".dun/.gitignore", "iterate.json\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "config")
    proc = dun(["iterate"], repo)
    assert proc.returncode == 0
    assert proc.stdout == ALL_PASS == ("---DUN_ITERATE---\nSTATUS: ALL_PASS\nEXIT_SIGNAL: true\n"
                                       "---END_DUN_ITERATE---\n")
    data = json.loads(dun(["iterate", "--format", "json"], repo).stdout)
    assert data == {"schema_version": 1, "kind": "all_pass", "status": "ALL_PASS", "exit_signal": True}


@pytest.mark.parametrize(("mode", "phrase"), [("manual", "Do not change any file"), ("plan", "Ask before you edit"),
                                              ("auto", "Edit files and commit"), ("yolo", "You may do anything")])
def test_automation_modes_change_the_instructions(project: Path, mode: str, phrase: str) -> None:
    out = dun(["iterate", "--automation", mode], project).stdout
    assert f"Automation mode: {mode}." in out and phrase in out


def test_overflow_folds_low_items_into_counts_but_never_high_ones(project: Path) -> None:
    boxes = "".join(f"- [ ] box number {n}\n" for n in range(400))
    write(project, "MISSION.md", "# Mission\n" + boxes)
    write(project, ".dun/plugins/p.yaml", """\
id: p
priority: 5
checks:
  - id: tests
    type: command
    command: "for i in $(seq 1 30); do echo \\"FAILED tests/test_$i.py::t - broken number $i\\"; done; exit 1"
    parser: {type: regex, pattern: '^FAILED (?P<file>[^:]+)::\\S+ - (?P<text>.*)$', max_items: 100}
""")
    proc = dun(["iterate", "--max-prompt-chars", "3000"], project)
    assert proc.returncode == 0
    out = proc.stdout
    assert "- ... and 400 more boxes in MISSION.md" in out
    assert "- MISSION.md:2 box number 0" not in out
    assert "(truncated to fit the prompt; read the file itself)" in out
    for i in range(1, 31):  # HIGH: every item stays even though the budget is exceeded
        assert f"broken number {i}\n" in out
    assert "never cut" in proc.stderr
    assert out.rstrip().endswith("---END_DUN_STATUS---")


def test_budget_is_kept_when_only_lower_items_overflow(project: Path) -> None:
    write(project, "MISSION.md", "# Mission\n" + "".join(f"- [ ] task {n} " + "x" * 60 + "\n" for n in range(300)))
    proc = dun(["iterate", "--max-prompt-chars", "6000"], project)
    assert len(proc.stdout) <= 6000
    assert "more boxes in MISSION.md" in proc.stdout
    assert "[HIGH] tests" in proc.stdout


def test_repo_templates_override_the_built_in_ones(project: Path) -> None:
    write(project, ".dun/templates/instructions/auto.md", "Our house rules: one change, then stop.\n")
    write(project, ".dun/templates/iterate.md", "# Custom $iteration_title\n$sections\n")
    out = dun(["iterate"], project).stdout
    assert out.startswith("# Custom")
    assert "Our house rules: one change, then stop." in out
    assert "Automation mode: auto" not in out


def test_json_format_carries_sections_items_and_prompt(project: Path) -> None:
    data = json.loads(dun(["iterate", "--format", "json"], project).stdout)
    assert data["kind"] == "prompt"
    assert set(data["sections"]) >= {"mission", "git", "work", "instructions", "status_template"}
    assert "---DUN_STATUS---" in data["sections"]["status_template"]
    tests = data["items"][0]
    assert tests["id"] == "tests" and tests["level"] == "HIGH"
    assert tests["items"] == [{"file": "tests/test_x.py", "line": None, "text": "boom"}]
    assert data["chars"] == len(data["prompt"])


def test_loop_state_section_when_a_loop_runs(project: Path) -> None:
    write(project, ".dun/state.json", json.dumps({"status": "running", "iteration": 7, "cost_usd_total": 3.5,
                                                  "budget_left_usd": 46.5, "calls_left_hour": 93}))
    out = dun(["iterate"], project).stdout
    assert "## Loop state\n\nIteration 7, spent $3.50, $46.50 left, 93 calls left this hour." in out


def test_bad_flags_are_usage_errors(project: Path) -> None:
    proc = dun(["iterate", "--automation", "wild"], project)
    assert proc.returncode == 2 and "Invalid value for '-a' / '--automation'" in proc.stderr
    proc = dun(["iterate", "--max-prompt-chars", "10"], project)
    assert proc.returncode == 2 and "at least 1000" in proc.stderr


def test_the_gitignore_iterate_creates_is_not_work(repo: Path) -> None:
    write(repo, "MISSION.md", "# Mission\n\n## Tasks\n- [ ] ship it\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "mission")
    assert not (repo / ".dun").exists()
    assert dun(["iterate"], repo).returncode == 0
    assert (repo / ".dun" / ".gitignore").is_file()  # dun's own runtime files stay out of git
    proc = dun(["check", "--format", "json", "--only", "git-status"], repo)
    status = json.loads(proc.stdout)["checks"][0]
    assert (status["status"], status["items"]) == ("pass", [])


def test_mistyped_only_is_a_usage_error_not_all_pass(project: Path) -> None:
    proc = dun(["iterate", "--only", "tset,mission-boxes"], project)
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert "--only 'tset' matches no check" in proc.stderr
    assert dun(["iterate", "--only", "tests,mission-boxes"], project).returncode == 0


def test_json_counts_folded_items_including_a_checks_own_overflow(project: Path) -> None:
    write(project, "MISSION.md", "# Mission\n" + "".join(f"- [ ] box {n}\n" for n in range(250)))
    write(project, ".dun/plugins/p.yaml", """\
id: p
priority: 5
checks:
  - id: tests
    type: command
    command: "seq 1 30; exit 1"
    parser: {type: lines, max_items: 10}
""")
    data = json.loads(dun(["iterate", "--format", "json"], project).stdout)
    entries = {e["id"]: e for e in data["items"]}
    tests = entries["tests"]  # HIGH: every item shown, the check's own "... and 20 more" is a count
    assert [i["text"] for i in tests["items"]] == [str(n) for n in range(1, 11)]
    assert tests["items_folded"] == 20
    boxes = entries["mission-boxes"]  # 200 items + "... and 50 more"; 20 shown by default
    assert len(boxes["items"]) == 20
    assert boxes["items_folded"] == 230
    assert "- ... and 230 more boxes in MISSION.md" in data["prompt"]


@pytest.mark.parametrize("rename", [False, True])
def test_changes_since_the_previous_iteration_are_gits_own_diff_stat(project: Path, rename: bool) -> None:
    """The diff stat reads only the paths the run's `git status` names (no second walk of the tree): the same
    text and count as git's whole diff, whatever the names hold and whatever changed."""
    write(project, "a [b]*?.txt", "one\n")
    write(project, "sub/deep.py", "x = 1\n")
    git(project, "add", "-A")
    git(project, "commit", "-qm", "more")
    assert dun(["iterate"], project).returncode == 0  # the base: where this iteration starts
    base = git(project, "rev-parse", "HEAD").strip()
    write(project, "a [b]*?.txt", "one\ntwo\n")
    (project / "sub" / "deep.py").unlink()
    write(project, "MISSION.md", (project / "MISSION.md").read_text() + "more\n")
    git(project, "add", "MISSION.md")
    write(project, "new file.txt", "untracked\n")
    if rename:  # a rename names two paths: the whole diff is asked for
        git(project, "mv", "a [b]*?.txt", "renamed.txt")
    proc = dun(["iterate"], project)
    assert proc.returncode == 0, proc.stderr
    expected = git(project, "diff", "--stat=100", base).rstrip()
    names = [n for n in git(project, "diff", "--name-only", base).split("\n") if n]
    assert f"Changes since the previous iteration ({len(names) + 1} files):\n{expected}\n" in proc.stdout
    assert "files changed" in expected
