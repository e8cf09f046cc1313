"""`dun respond`: the agent's answer read back, recorded as the handoff the next `dun iterate` shows."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import git, write

from dun.store.store import gitignore_text

DUN = str(Path(sys.executable).parent / "dun")
BLOCK = """Implemented the parser and its tests.
---DUN_STATUS---
TASK_COMPLETED: {task}
STATUS: COMPLETE
FILES_MODIFIED: 2
EXIT_SIGNAL: {exit}
NEXT_RECOMMENDATION: {next}
---END_DUN_STATUS---
"""


def dun(args: list[str], cwd: Path, stdin: str | bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    data = stdin.encode() if isinstance(stdin, str) else stdin
    return subprocess.run([DUN, *args], cwd=cwd, capture_output=True, input=data, timeout=120)


@pytest.fixture
def project(repo: Path) -> Path:
    write(repo, ".dun/config.yaml", "plugins:\n  disabled: [python]\n")
    write(repo, ".dun/.gitignore", gitignore_text())  # as `dun init` writes it: not refreshed (changed) by dun
    write(repo, "MISSION.md", "# M\n- [ ] write the parser\n- [ ] document it\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "project")
    return repo


def test_parsed_answer_prints_json_and_writes_the_handoff(project: Path) -> None:
    assert dun(["iterate"], project).returncode == 0
    write(project, "parser.py", "def parse(): ...\n")
    git(project, "add", "-A")
    git(project, "commit", "-qm", "Add parser")
    answer = BLOCK.format(task="mission-boxes@MISSION.md:2", exit="false", next="document it")
    proc = dun(["respond", "-"], project, answer)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["outcome"] == "parsed"
    assert data["status"]["task_completed"] == "mission-boxes@MISSION.md:2"
    handoff = json.loads((project / ".dun/handoff.json").read_text())
    assert handoff["status"]["next_recommendation"] == "document it"
    assert handoff["git"]["commits"][0].endswith("Add parser")
    assert handoff["git"]["files_changed"] == 1


def test_next_iterate_shows_the_handoff_and_unverified_claims(project: Path) -> None:
    dun(["iterate"], project)
    dun(["respond", "-"], project, BLOCK.format(task="mission-boxes@MISSION.md:2", exit="true", next="ship"))
    out = dun(["iterate"], project).stdout.decode()
    section = out.split("## Previous iteration", 1)[1].split("## ", 1)[0]
    assert "Claimed: mission-boxes@MISSION.md:2, STATUS COMPLETE, EXIT_SIGNAL true, FILES_MODIFIED 2" in section
    assert "Its NEXT_RECOMMENDATION: ship" in section
    assert "NOT VERIFIED: your previous claim 'mission-boxes@MISSION.md:2' was not verified: MISSION.md:2 is " \
           "still listed by mission-boxes" in section
    assert "you signalled EXIT_SIGNAL: true, but 1 check(s) still fail: mission-boxes" in section
    assert "you reported FILES_MODIFIED: 2, but git shows no change since the iteration began" in section


def test_no_block_exits_4_and_the_next_prompt_says_so(project: Path) -> None:
    dun(["iterate"], project)
    proc = dun(["respond", "-"], project, "I think everything is done now. EXIT_SIGNAL: true\n")
    assert proc.returncode == 4
    assert json.loads(proc.stdout)["outcome"] == "no_status_block"
    out = dun(["iterate"], project).stdout.decode()
    assert "The previous iteration gave no valid status block (no status block)" in out


def test_invalid_value_exits_4_with_the_reason(project: Path) -> None:
    proc = dun(["respond", "-"], project, "---DUN_STATUS---\nSTATUS: MAYBE\nEXIT_SIGNAL: false\n---END_DUN_STATUS---\n")
    assert proc.returncode == 4
    data = json.loads(proc.stdout)
    assert data["outcome"] == "parse_error"
    assert data["error"] == "STATUS: invalid value 'MAYBE' (expected COMPLETE, IN_PROGRESS or BLOCKED)"


def test_claude_json_file_and_iteration_log(project: Path, tmp_path: Path) -> None:
    answer = {"type": "result", "subtype": "success", "is_error": False, "num_turns": 3, "session_id": "s-1",
              "total_cost_usd": 0.0125, "permission_denials": [],
              "result": BLOCK.format(task="mission-boxes", exit="false", next="more")}
    path = tmp_path / "answer.json"
    path.write_text(json.dumps(answer))
    write(project, ".dun/logs/iteration-3.json", json.dumps({"iteration": 3, "exit_code": 0}))
    proc = dun(["respond", "--file", str(path), "--iteration", "3"], project)
    assert proc.returncode == 0
    data = json.loads(proc.stdout)
    assert data["shape"] == "claude-json" and data["agent"]["cost_usd"] == 0.0125
    log = json.loads((project / ".dun/logs/iteration-3.json").read_text())
    assert log["exit_code"] == 0  # what the loop wrote stays
    assert log["status_block"]["status"] == "COMPLETE"
    assert log["parse_error"] is None
    assert json.loads((project / ".dun/handoff.json").read_text())["iteration"] == 3


@pytest.mark.parametrize("garbage", [b"", b"\x00\xff\xfe binary \x00" * 100, b'{"type":"result","resu'])
def test_bad_input_is_a_result_not_a_traceback(project: Path, garbage: bytes) -> None:
    proc = dun(["respond", "-"], project, garbage)
    assert proc.returncode == 4
    assert b"Traceback" not in proc.stderr
    assert json.loads(proc.stdout)["outcome"] == "no_status_block"


def test_usage_errors(project: Path) -> None:
    proc = dun(["respond", "--file", "missing.txt"], project)
    assert proc.returncode == 2 and b"missing.txt: no such file" in proc.stderr
    proc = dun(["respond", "-", "--file", "x"], project)
    assert proc.returncode == 2 and b"not both" in proc.stderr


def test_pipeline_iterate_agent_respond(project: Path, tmp_path: Path) -> None:
    """The pure Ralph form with a scripted agent: `dun iterate | agent | dun respond -`."""
    agent = tmp_path / "agent.sh"
    agent.write_text("#!/bin/sh\ngrep -q 'DUN_STATUS' && printf 'ok\\n---DUN_STATUS---\\nTASK_COMPLETED: x\\n"
                     "STATUS: IN_PROGRESS\\nFILES_MODIFIED: 0\\nEXIT_SIGNAL: false\\nNEXT_RECOMMENDATION: go on\\n"
                     "---END_DUN_STATUS---\\n'\n")
    agent.chmod(0o755)
    proc = subprocess.run(f"{DUN} iterate | {agent} | {DUN} respond -", shell=True, cwd=project,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["status"]["next_recommendation"] == "go on"


def test_the_repositorys_secret_patterns_are_redacted_from_what_respond_writes(project: Path) -> None:
    """`secrets.patterns` apply to the handoff `dun respond` writes, as in a loop; a plugin's config section beside
    them changes nothing."""
    write(project, ".dun/config.yaml", "plugins:\n  disabled: [python]\nacme_plugin: {level: 3}\n"
                                       "secrets:\n  patterns: ['ACME-[0-9]{6}']\n")
    answer = BLOCK.format(task="mission-boxes@MISSION.md:2", exit="false", next="use token ACME-123456 next")
    proc = dun(["respond", "-"], project, answer)
    assert proc.returncode == 0, proc.stderr
    written = b"".join(p.read_bytes() for p in (project / ".dun").rglob("*") if p.is_file())
    assert b"ACME-123456" not in written
    assert b"ACME-123456" not in proc.stdout
