"""Helpers for the guard tests (tests/guard has no conftest.py on purpose: a second conftest module would shadow the
top-level one that other test modules import from).

* `ROOT`, `HOME` - the corpus convention: the hook runs in the repository root /work/repo, HOME is /home/dev.
* `fixed_home(monkeypatch)` - set HOME to `HOME` and drop TMPDIR, so decisions do not depend on the machine.
* `bash(command, ...)` - decide a Bash tool call; returns the Verdict.
* `tool(name, path, ...)` - decide a Write/Edit/MultiEdit/NotebookEdit call.
* `corpus(name)` - the commands of a corpus file: one per line, `#` comments, `⏎` for a newline.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from dun.guard import Verdict, decide, load_rules

HERE = Path(__file__).resolve().parent
ROOT = Path("/work/repo")
HOME = "/home/dev"


def fixed_home(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", HOME)
    monkeypatch.delenv("TMPDIR", raising=False)


def bash(command: str, cwd: str = str(ROOT), allow: list[str] | None = None,
         deny: list[str] | None = None, root: Path = ROOT) -> Verdict:
    event = {"hook_event_name": "PreToolUse", "tool_name": "Bash", "cwd": cwd,
             "tool_input": {"command": command, "description": "test"}}
    return decide(event, root, load_rules(allow or [], deny or []))


def tool(name: str, path: str, cwd: str = str(ROOT), allow: list[str] | None = None,
         deny: list[str] | None = None) -> Verdict:
    key = "notebook_path" if name == "NotebookEdit" else "file_path"
    event = {"hook_event_name": "PreToolUse", "tool_name": name, "cwd": cwd,
             "tool_input": {key: path, "content": "x", "old_string": "a", "new_string": "b"}}
    return decide(event, ROOT, load_rules(allow or [], deny or []))


def corpus(name: str) -> list[str]:
    lines = (HERE / name).read_text(encoding="utf-8").splitlines()
    return [line.replace("⏎", "\n") for line in lines if line.strip() and not line.startswith("#")]
