"""What each adapter puts on the command line and in the environment, for today's CLIs (the flags the pinned
versions accept, as tests/e2e/test_agents_loop_e2e.py proves against the real programs)."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from conftest import agent_settings, git

from dun.agents.base import AgentRequest, Invocation
from dun.agents.registry import agent_adapters
from dun.engine.manager import make_manager

ADAPTERS = agent_adapters(make_manager(entry_points=False))


def build(name: str, root: Path, read_only: bool = False, **config: Any) -> Invocation:
    prompt_file = root / ".dun" / "logs" / "iteration-1.prompt.md"
    return ADAPTERS[name].build(AgentRequest("do it", prompt_file, agent_settings(**config), None, root, None,
                                             root / ".dun" / "cache", read_only=read_only))


@pytest.mark.parametrize("name", ["claude", "codex", "gemini", "opencode", "pi", "aider", "command"])
def test_every_agent_runs_with_pwd_set_to_the_repository(name: str, repo: Path) -> None:
    """opencode takes its project from $PWD: a dun started from another directory would point it elsewhere."""
    inv = build(name, repo, command=["agent-bin"])
    assert inv.env["PWD"] == str(repo)
    assert inv.argv[0] == "agent-bin"


def test_codex_keeps_its_sandbox_with_the_git_directory_writable(repo: Path) -> None:
    argv = build("codex", repo).argv
    assert argv[1:4] == ["exec", "--json", "--skip-git-repo-check"]
    assert "--full-auto" not in argv  # gone from the CLI: exit 2
    at = argv.index("--sandbox")
    assert argv[at + 1: at + 3] == ["workspace-write", "-c"]
    key, value = argv[at + 3].split("=", 1)
    assert key == "sandbox_workspace_write.writable_roots"
    assert json.loads(value) == [str((repo / ".git").resolve())]
    assert argv[-1] == "do it"


def test_codex_in_a_worktree_makes_both_git_directories_writable(repo: Path, tmp_path: Path) -> None:
    worktree = tmp_path / "wt"
    git(repo, "worktree", "add", "-q", "--detach", str(worktree))
    argv = build("codex", worktree).argv
    roots = json.loads(argv[argv.index("-c") + 1].split("=", 1)[1])
    assert roots == [str((repo / ".git" / "worktrees" / "wt").resolve()), str((repo / ".git").resolve())]


def test_codex_flags_for_skip_permissions_and_for_a_reviewer(repo: Path) -> None:
    assert "--dangerously-bypass-approvals-and-sandbox" in build("codex", repo, skip_permissions=True).argv
    argv = build("codex", repo, read_only=True, skip_permissions=True).argv
    assert argv[argv.index("--sandbox") + 1] == "read-only"
    assert "--dangerously-bypass-approvals-and-sandbox" not in argv


def test_gemini_trusts_the_workspace_and_passes_the_git_identity(repo: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """Its shell runs git with GIT_CONFIG_GLOBAL=/dev/null: the identity must come through the environment."""
    for var in ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL"):
        monkeypatch.delenv(var, raising=False)
    git(repo, "config", "user.name", "Ada")
    git(repo, "config", "user.email", "ada@example.invalid")
    inv = build("gemini", repo, skip_permissions=True)
    assert inv.env["GEMINI_CLI_TRUST_WORKSPACE"] == "true"
    assert (inv.env["GIT_AUTHOR_NAME"], inv.env["GIT_COMMITTER_EMAIL"]) == ("Ada", "ada@example.invalid")
    assert inv.argv[inv.argv.index("--approval-mode") + 1] == "yolo"
    assert build("gemini", repo).argv[-1] == "auto_edit"
    assert "--approval-mode" not in build("gemini", repo, read_only=True).argv


def test_opencode_auto_only_with_skip_permissions(repo: Path) -> None:
    assert "--auto" in build("opencode", repo, skip_permissions=True).argv
    assert "--auto" not in build("opencode", repo).argv
    reviewer = build("opencode", repo, read_only=True, skip_permissions=True)
    assert "--auto" not in reviewer.argv
    assert json.loads(reviewer.env["OPENCODE_PERMISSION"])["bash"] == "deny"
    argv = build("opencode", repo, model="prov/m").argv
    assert argv[argv.index("--title") + 1] == "dun: iteration-1.prompt"  # no title side request
    assert argv[argv.index("--model") + 1] == "prov/m"


def test_pi_runs_without_a_session_and_a_reviewer_only_reads(repo: Path) -> None:
    assert build("pi", repo).argv[1:5] == ["-p", "--mode", "json", "--no-session"]
    argv = build("pi", repo, read_only=True).argv
    assert argv[argv.index("--tools") + 1] == "read,grep,find,ls"


def test_aider_keeps_the_work_tree_clean(repo: Path) -> None:
    (repo / "MISSION.md").write_text("- [ ] x\n", encoding="utf-8")
    argv = build("aider", repo, model="openai/m", extra_args=["--edit-format", "diff"]).argv
    history = repo / ".dun" / "cache" / "aider"
    for flag in ("--no-gitignore", "--no-stream", "--yes", "--no-pretty"):
        assert flag in argv
    assert argv[argv.index("--map-tokens") + 1] == "0"
    assert argv[argv.index("--chat-history-file") + 1] == str(history / "chat.history.md")
    assert argv[argv.index("--input-history-file") + 1] == str(history / "input.history")
    assert argv[-3:] == ["--edit-format", "diff", "MISSION.md"]  # the files to edit come last
    assert history.is_dir()
    reviewer = build("aider", repo, read_only=True).argv
    assert "--dry-run" in reviewer and "MISSION.md" not in reviewer


def test_claude_reviewer_never_skips_permissions(repo: Path) -> None:
    assert "--dangerously-skip-permissions" in build("claude", repo, skip_permissions=True).argv
    assert "--dangerously-skip-permissions" not in build("claude", repo, read_only=True, skip_permissions=True).argv


def test_the_claude_json_array_is_read(tmp_path: Path) -> None:
    """`--verbose` (or session hooks) print the messages as one array, the result last."""
    items = [{"type": "system", "subtype": "init", "session_id": "s1", "model": "m"},
             {"type": "assistant", "message": {"content": [{"type": "text", "text": "working"}]}},
             {"type": "result", "subtype": "success", "is_error": False, "total_cost_usd": 0.25, "session_id": "s1",
              "result": "done\n---DUN_STATUS---\nSTATUS: COMPLETE\nEXIT_SIGNAL: true\n---END_DUN_STATUS---"}]
    data = json.dumps(items, indent=1).encode()
    parsed = ADAPTERS["claude"].parse(io.BytesIO(data))
    assert (parsed.outcome, parsed.shape, parsed.bytes_read) == ("parsed", "claude-json", len(data))
    assert parsed.agent["cost_usd"] == 0.25 and parsed.agent["session_id"] == "s1"
    truncated = ADAPTERS["claude"].parse(io.BytesIO(data[:-20]))
    assert truncated.outcome == "no_status_block" and truncated.agent == {}
    assert any("JSON array" in note for note in truncated.notes)


def test_codex_outside_a_repository_names_the_usual_git_directory(tmp_path: Path) -> None:
    argv = build("codex", tmp_path).argv
    assert json.loads(argv[argv.index("-c") + 1].split("=", 1)[1]) == [str(tmp_path / ".git")]


def test_codex_inside_duns_os_sandbox_does_not_nest_its_own(repo: Path) -> None:
    """Codex's sandbox is bubblewrap too and cannot run inside dun's; dun's already confines writes to the repo."""
    prompt_file = repo / ".dun" / "logs" / "iteration-1.prompt.md"
    argv = ADAPTERS["codex"].build(AgentRequest("do it", prompt_file, agent_settings(), None, repo,
                                                        os_sandboxed=True)).argv
    assert "--dangerously-bypass-approvals-and-sandbox" in argv and "--sandbox" not in argv


@pytest.mark.parametrize("name,state", [("claude", ".claude"), ("codex", ".codex"), ("gemini", ".gemini"),
                                        ("pi", ".pi")])
def test_each_cli_names_the_state_directory_the_sandbox_leaves_writable(name: str, state: str) -> None:
    assert state in ADAPTERS[name].state_dirs


E2E_CORPUS = Path(__file__).resolve().parents[1] / "e2e" / "corpus"


def test_gemini_streams_with_agent_live_and_reads_the_same_answer_and_tokens(repo: Path) -> None:
    """`agent.live`: stream-json (what `dun watch` shows as it comes), read like the JSON document (captured from
    the real CLI 0.61.0, both modes answering the same scripted turn)."""
    argv = build("gemini", repo, live=True).argv
    assert argv[argv.index("--output-format") + 1] == "stream-json"
    assert build("gemini", repo).argv[build("gemini", repo).argv.index("--output-format") + 1] == "json"
    gemini = ADAPTERS["gemini"]
    streamed = gemini.parse(io.BytesIO((E2E_CORPUS / "gemini_0.61.0_stream_ok_stdout.jsonl").read_bytes()))
    whole = gemini.parse(io.BytesIO((E2E_CORPUS / "gemini_0.61.0_ok_stdout.json").read_bytes()))
    assert streamed.outcome == whole.outcome == "parsed"
    assert streamed.block is not None and whole.block is not None
    assert streamed.block.to_dict() == whole.block.to_dict()
    assert streamed.agent["tokens"] == whole.agent["tokens"] == {"input": 2201, "cached": 0, "output": 151}
    assert streamed.agent["tokens_by_model"] == whole.agent["tokens_by_model"]


def test_gemini_streamed_rate_limit_is_a_rate_limit() -> None:
    gemini = ADAPTERS["gemini"]
    parsed = gemini.parse(io.BytesIO((E2E_CORPUS / "gemini_0.61.0_stream_429_stdout.jsonl").read_bytes()))
    assert parsed.outcome == "no_status_block" and parsed.agent["is_error"] is True
    error = gemini.classify(parsed.agent, 1, "", (E2E_CORPUS / "gemini_0.61.0_stream_429_stderr.txt").read_text())
    assert error is not None and error.kind == "rate_limit"
    assert error.message.startswith("[API Error: Rate limit reached for requests.")
