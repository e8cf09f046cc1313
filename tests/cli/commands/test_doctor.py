"""`dun doctor`: the agent CLIs found (agent.command, gate.commands or PATH), their versions against the tested ones,
their credentials by name only, and the programs of the command checks; exit 1 when the configured agent cannot
run. Stand-in CLIs are small shell scripts on a PATH of the test's own."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from conftest import git, write

from dun.agents.versions import TESTED

SECRET = "sk-do-not-print-me"


def fake_cli(directory: Path, name: str, output: str = "", code: int = 0) -> Path:
    path = directory / name
    write(directory, name, f"#!/bin/sh\necho '{output}'\nexit {code}\n")
    path.chmod(0o755)
    return path


def doctor(repo: Path, bin_dir: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """`dun doctor` with only `bin_dir` and git's directory on PATH, and no inherited keys."""
    base = {k: v for k, v in os.environ.items() if not k.endswith(("_API_KEY", "_TOKEN"))}
    git_dir = str(Path(subprocess.run(["which", "git"], capture_output=True, text=True).stdout.strip()).parent)
    return subprocess.run([sys.executable, "-m", "dun", "doctor", *args], cwd=repo, capture_output=True, text=True,
                          env={**base, "PATH": f"{bin_dir}{os.pathsep}{git_dir}", **env}, timeout=60,
                          stdin=subprocess.DEVNULL)


def configure(repo: Path, config: dict[str, Any]) -> None:
    write(repo, ".dun/config.yaml", json.dumps({"plugins": {"disabled": ["python"]}, **config}) + "\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "config")


def rows(proc: subprocess.CompletedProcess[str]) -> dict[str, dict[str, Any]]:
    return {row["name"]: row for row in json.loads(proc.stdout)["agents"]}


def test_versions_against_the_tested_ones_and_auth_by_name_only(repo: Path, tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    claude = fake_cli(tmp_path / "opt", "claude-wrapper", f"{TESTED['claude'].version} (Claude Code)")
    fake_cli(bin_dir, "codex", "codex-cli 0.1.0")
    configure(repo, {"agent": {"name": "claude", "command": [str(claude)]}})
    proc = doctor(repo, bin_dir, "--json", OPENAI_API_KEY=SECRET)
    assert proc.returncode == 0, proc.stderr
    found = rows(proc)
    assert found["claude"]["role"] == "agent" and found["claude"]["source"] == "agent.command"
    assert found["claude"]["path"] == str(claude) and found["claude"]["version_matches"] is True
    assert found["codex"]["source"] == "PATH" and found["codex"]["version"] == "0.1.0"
    assert found["codex"]["version_matches"] is False and found["codex"]["tested_version"] == TESTED["codex"].version
    assert found["codex"]["auth"] == {"configured": True, "found": ["OPENAI_API_KEY"], "hint": ""}
    assert found["gemini"]["path"] is None and "npm install -g @google/gemini-cli@" in found["gemini"]["problem"]
    assert SECRET not in proc.stdout
    text = doctor(repo, bin_dir, OPENAI_API_KEY=SECRET)
    assert text.returncode == 0 and SECRET not in text.stdout
    assert f"0.1.0 (tested {TESTED['codex'].version})" in text.stdout
    assert "auth: OPENAI_API_KEY" in text.stdout
    assert "result: the configured agent (claude) can run" in text.stdout


def test_the_configured_agent_missing_or_broken_exits_1(repo: Path, tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    configure(repo, {"agent": {"name": "codex"}})
    proc = doctor(repo, bin_dir)
    assert proc.returncode == 1
    assert "result: the configured agent (codex) cannot run" in proc.stdout
    fake_cli(bin_dir, "codex", "Segmentation fault", code=139)
    proc = doctor(repo, bin_dir, "--json")
    assert proc.returncode == 1 and json.loads(proc.stdout)["runnable"] is False
    assert "exited 139" in rows(proc)["codex"]["problem"]


def test_a_missing_reviewer_cannot_run_either(repo: Path, tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    fake_cli(bin_dir, "claude", TESTED["claude"].version)
    configure(repo, {"gate": {"reviewers": ["gemini:gemini-3.8-flash"]}})
    proc = doctor(repo, bin_dir, "--json")
    assert proc.returncode == 1
    assert rows(proc)["gemini"]["role"] == "reviewer" and rows(proc)["claude"]["problem"] is None


def test_an_unpriceable_agent_is_reported(repo: Path, tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    fake_cli(bin_dir, "codex", TESTED["codex"].version)
    configure(repo, {"agent": {"name": "codex", "model": "o9"}})
    proc = doctor(repo, bin_dir)
    assert proc.returncode == 0  # it runs; `dun loop` refuses it only with a budget
    assert "dun cannot price codex's usage" in proc.stdout


def test_command_checks_programs(repo: Path, tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    fake_cli(bin_dir, "claude", TESTED["claude"].version)
    fake_cli(bin_dir, "mytool")
    write(repo, ".dun/plugins/local.yaml", "id: local\nchecks:\n"
          "  - id: present\n    type: command\n    command: FOO=1 mytool --fast\n"
          "  - id: absent\n    type: command\n    command: no-such-tool run\n"
          "  - id: python\n    type: command\n    command: '{python} -c pass'\n")
    configure(repo, {})
    proc = doctor(repo, bin_dir, "--json")
    assert proc.returncode == 0, proc.stderr
    checks = {c["check"]: c for c in json.loads(proc.stdout)["checks"]}
    assert checks["present"]["found"] is True and checks["present"]["path"] == str(bin_dir / "mytool")
    assert checks["absent"] == {"check": "absent", "program": "no-such-tool", "path": None, "found": False,
                                "interpreter": None}
    assert checks["python"]["found"] is True
    assert "absent: no-such-tool: NOT FOUND" in doctor(repo, bin_dir).stdout
    # the interpreter the check really runs: the project's .venv, not dun's own
    write(repo, ".venv/bin/python", "#!/bin/sh\nexit 0\n").chmod(0o755)
    checks = {c["check"]: c for c in json.loads(doctor(repo, bin_dir, "--json").stdout)["checks"]}
    venv_python = str(repo / ".venv/bin/python")
    assert checks["python"] == {"check": "python", "program": ".venv/bin/python", "path": venv_python, "found": True,
                                "interpreter": ".venv/bin/python (.venv)"}
    assert "python: .venv/bin/python: " + str(repo / ".venv/bin/python") + " [.venv/bin/python (.venv)]" in \
        doctor(repo, bin_dir).stdout
