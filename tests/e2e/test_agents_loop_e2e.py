"""`dun loop --agent NAME` with each real agent CLI, driven offline by its scripted server: configured as a user would
(`agent.command` the pinned binary, the CLI's own config files and keys in a private HOME, the git identity in
~/.gitconfig only), the CLI ticks the one box of MISSION.md and commits, and the run completes in one iteration with
the status block parsed and a cost in state.json. `dun` is started from another directory, as from a shell.

A CLI that is not installed skips (`bash tests/e2e/install_agents.sh`, `bash tests/e2e/install_claude.sh`).
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from . import scenarios as sc
from .agent_clis import (
    CLIS,
    FINAL_TEXT,
    FINAL_USAGE,
    MODEL,
    PROMPT,
    TICK_COMMAND,
    TICKED,
    TOOL_USAGE,
    Setup,
    base_env,
    git,
    make_repo,
    success_scenario,
    write_gitconfig,
)
from .agent_servers import AgentServer
from .conftest import make_claude_env
from .model_server import ModelServer

WALL_TIMES: dict[str, float] = {}
IDENTITY_VARS = ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL")
# What the server bills: the shell step and the answer (aider: one request, the answer).
SPENT_IN = TOOL_USAGE["input_tokens"] + FINAL_USAGE["input_tokens"]
SPENT_OUT = TOOL_USAGE["output_tokens"] + FINAL_USAGE["output_tokens"]


@pytest.fixture(scope="module", autouse=True)
def report_wall_times() -> Iterator[None]:
    yield
    if WALL_TIMES:
        print("\ndun loop wall times: " + ", ".join(f"{k} {v:.1f}s" for k, v in sorted(WALL_TIMES.items())))


def make_home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    return home


def configure(repo: Path, name: str, binary: Path, sandbox: str = "auto", **agent: Any) -> None:
    """.dun/config.yaml as a user writes it (dun's OS sandbox as by default), committed."""
    config = {"plugins": {"disabled": ["python"]}, "loop": {"cooldown_s": 0, "max_iterations": 3, "sandbox": sandbox},
              "agent": {"name": name, "command": [str(binary)], **agent}}
    (repo / ".dun" / "config.yaml").write_text(sc.yaml_map(config), encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "dun config")


def user_env(env: dict[str, str], home: Path) -> dict[str, str]:
    """The CLI's environment as a user's shell has it: the identity only in ~/.gitconfig, dun on PATH."""
    write_gitconfig(home)
    out = {k: v for k, v in env.items() if k not in IDENTITY_VARS}
    out["PATH"] = f"{sc.VENV_BIN}{os.pathsep}{out.get('PATH', os.defpath)}"
    if os.geteuid() == 0:
        out["IS_SANDBOX"] = "1"  # Claude Code refuses --dangerously-skip-permissions as root otherwise
    return out


def run_loop(name: str, repo: Path, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    started = time.monotonic()
    proc = subprocess.run([str(sc.DUN), "loop", str(repo)], cwd=cwd, env={**env, "PWD": str(cwd)},
                          capture_output=True, text=True, timeout=240, stdin=subprocess.DEVNULL)
    WALL_TIMES[name] = time.monotonic() - started
    return proc


def describe(proc: subprocess.CompletedProcess[str], repo: Path) -> str:
    logs = repo / ".dun" / "logs"
    tails = {p.name: p.read_text(errors="replace")[-2000:] for p in sorted(logs.glob("iteration-1.*"))
             if p.suffix in (".out", ".err", ".json")} if logs.is_dir() else {}
    return f"exit {proc.returncode}\nstderr: {proc.stderr[-3000:]}\n" + "\n".join(f"{k}: {v}" for k, v in tails.items())


def assert_one_iteration(proc: subprocess.CompletedProcess[str], repo: Path, shape: str) -> dict[str, Any]:
    why = describe(proc, repo)
    assert proc.returncode == 0, why
    st = sc.state(repo)
    assert (st["status"], st["stop_reason"], st["iteration"], st["errors_total"]) == ("complete", "complete", 1, 0), why
    assert st["cost_usd_total"] > 0, why
    log = sc.iteration_log(repo, 1)
    assert log["parse_outcome"] == "parsed" and log["answer_shape"] == shape, why
    assert log["status_block"]["status"] == "COMPLETE" and log["status_block"]["exit_signal"] is True
    assert log["error_kind"] is None and log["cost_estimated"] is False, why
    assert log["cost_usd"] == pytest.approx(st["cost_usd_total"], abs=1e-6)  # the state keeps 6 decimals
    assert (repo / "MISSION.md").read_text(encoding="utf-8") == TICKED
    assert git(repo, "status", "--porcelain") == "", why  # committed, nothing left behind (aider's files included)
    assert git(repo, "log", "-1", "--format=%an").strip() == "dun-e2e"  # the identity from ~/.gitconfig
    return log


def start_server(name: str, tmp_path: Path) -> AgentServer:
    server = CLIS[name].server(success_scenario(name), body_log=tmp_path / "requests.jsonl",
                               aux_text="Tick box x in MISSION.md")
    return server.start()


def require(name: str) -> Path:
    why = CLIS[name].installed()
    if why:
        pytest.skip(why)
    return CLIS[name].binary


def rate_cost(input_tokens: int, output_tokens: int, rate_in: float, rate_out: float) -> float:
    return (input_tokens * rate_in + output_tokens * rate_out) / 1e6


# --- each CLI ---------------------------------------------------------------------------------------------------------


def loop_with(name: str, tmp_path: Path, user_files: Callable[[Path, Setup], None] | None = None,
              drop_env: tuple[str, ...] = (), sandbox: str = "auto", shape: str | None = None,
              **agent: Any) -> tuple[dict[str, Any], Path]:
    """`dun loop` with the pinned CLI `name` against its server; the CLI's HOME files written as phase 1 found them
    (agent_clis.py), plus `user_files(home, setup)`; `drop_env` leaves variables out of the user's environment.
    Returns the first iteration's log, checked, and the repository."""
    binary = require(name)
    repo, home = make_repo(tmp_path / "repo"), make_home(tmp_path)
    configure(repo, name, binary, sandbox, **agent)
    server = start_server(name, tmp_path)
    try:
        setup = CLIS[name].setup(home, repo, server, PROMPT)  # config files under HOME, and the environment
        if user_files is not None:
            user_files(home, setup)
        env = {k: v for k, v in setup.env.items() if k not in drop_env}
        proc = run_loop(name, repo, user_env(env, home), tmp_path)
    finally:
        server.stop()
    return assert_one_iteration(proc, repo, shape or SHAPES[name]), repo


SHAPES = {"codex": "codex-jsonl", "gemini": "gemini-json", "opencode": "opencode-jsonl", "pi": "pi-jsonl",
          "aider": "text"}


def test_codex_in_its_workspace_write_sandbox(tmp_path: Path) -> None:
    """No skip_permissions and dun's own sandbox off: dun keeps Codex's sandbox and makes .git writable, so the
    agent's commit lands. Codex reports tokens only: priced at dun's table rate for its default model."""
    log, _ = loop_with("codex", tmp_path, sandbox="off")
    assert "--sandbox" in log["argv"] and "--dangerously-bypass-approvals-and-sandbox" not in log["argv"]
    assert log["cost_usd"] == pytest.approx(rate_cost(SPENT_IN, SPENT_OUT, 2.0, 10.0))


def test_codex_with_a_home_of_its_own_in_dun_sandbox(tmp_path: Path) -> None:
    """CODEX_HOME outside $HOME under the default `auto`: dun's sandbox binds the home the agent's environment names
    writable as it binds ~/.codex (codex writes its sessions there), so the call succeeds."""
    import shutil

    from dun.sandbox import probe

    def own_home(home: Path, setup: Setup) -> None:
        own = tmp_path / "codex-home"
        shutil.copytree(home / ".codex", own)
        shutil.rmtree(home / ".codex")
        setup.env["CODEX_HOME"] = str(own)

    log, _ = loop_with("codex", tmp_path, own_home, sandbox="auto")
    assert log["sandbox"] == ("bubblewrap" if probe("bwrap") is None else "off")
    assert "--dangerously-bypass-approvals-and-sandbox" in log["argv"] or log["sandbox"] == "off"
    assert list((tmp_path / "codex-home").rglob("*.jsonl")), "codex wrote its session into its own home"


def test_gemini_trusted_with_the_users_git_identity(tmp_path: Path) -> None:
    """dun trusts the workspace (no GEMINI_CLI_TRUST_WORKSPACE in the user's environment) and passes the git identity
    that the CLI's shell would not see. Tokens per model, priced at dun's table (the router's side call included)."""
    log, _ = loop_with("gemini", tmp_path, drop_env=("GEMINI_CLI_TRUST_WORKSPACE",), skip_permissions=True)
    assert log["cost_usd"] > rate_cost(SPENT_IN, SPENT_OUT, 0.75, 3.75) * 0.99


def test_gemini_live_streams_its_events_and_is_judged_the_same(tmp_path: Path) -> None:
    """`agent.live`: stream-json, one event per line as the CLI works (what `dun watch` shows), read to the same
    block and cost as the JSON document."""
    from dun.agents.stream import readable

    log, repo = loop_with("gemini", tmp_path, shape="gemini-stream-json", skip_permissions=True, live=True)
    assert log["argv"][log["argv"].index("--output-format") + 1] == "stream-json"
    assert log["cost_usd"] > rate_cost(SPENT_IN, SPENT_OUT, 0.75, 3.75) * 0.99
    shown = readable((repo / ".dun" / "logs" / "iteration-1.out").read_bytes())
    assert any(line.startswith("> run_shell_command: ") for line in shown), shown
    assert "(done: success)" in shown


def test_opencode_from_another_directory(tmp_path: Path) -> None:
    """opencode takes its project from $PWD: dun sets it, so the commit lands in the repository even though dun was
    started elsewhere. Its own per-step dollars are summed ($2 / $8 in its provider config)."""
    log, _ = loop_with("opencode", tmp_path, skip_permissions=True)
    assert "--auto" in log["argv"]
    assert log["cost_usd"] == pytest.approx(rate_cost(SPENT_IN, SPENT_OUT, 2.0, 8.0))


def test_pi(tmp_path: Path) -> None:
    """The provider and model are pi's defaults in ~/.pi/agent/settings.json; its own per-message dollars."""
    log, _ = loop_with("pi", tmp_path)
    assert log["cost_usd"] == pytest.approx(rate_cost(SPENT_IN, SPENT_OUT, 2.0, 8.0))


def aider_conf(home: Path, setup: Setup) -> None:
    (home / ".aider.conf.yml").write_text(
        f"model: openai/{MODEL}\nedit-format: diff\nmodel-metadata-file: {setup.files['metadata']}\n"
        "show-model-warnings: false\n", encoding="utf-8")


def test_aider_leaves_a_clean_tree(tmp_path: Path) -> None:
    """aider's model, edit format and prices in ~/.aider.conf.yml; dun's flags keep .gitignore untouched and its
    history under .dun/cache/aider/. Cost: aider's own `Cost: ... session` line."""
    log, repo = loop_with("aider", tmp_path, aider_conf)
    assert not (repo / ".gitignore").exists()
    assert (repo / ".dun" / "cache" / "aider" / "chat.history.md").is_file()
    assert log["cost_usd"] == pytest.approx(rate_cost(*FINAL_USAGE.values(), 2.0, 8.0), abs=1e-4)


CLAUDE_EPISODE = [{"tool_use": "Bash", "input": {"command": TICK_COMMAND, "description": "Tick box x"}},
                  {"text": FINAL_TEXT, "usage": FINAL_USAGE}]


def test_claude_json_array_with_verbose(tmp_path: Path, claude_bin: Path) -> None:
    """`--verbose` turns Claude Code's json output into an array of messages: the result in it is read, with the
    CLI's own total_cost_usd."""
    repo, home = make_repo(tmp_path / "repo"), make_home(tmp_path)
    configure(repo, "claude", claude_bin, skip_permissions=True, extra_args=["--verbose"])
    with ModelServer([CLAUDE_EPISODE], body_log=tmp_path / "requests.jsonl") as server:
        env = {k: v for k, v in make_claude_env(home, server).items() if not k.startswith("XDG_")}
        proc = run_loop("claude", repo, user_env({**base_env(home), **env}, home), tmp_path)
    log = assert_one_iteration(proc, repo, "claude-json")
    out = (repo / ".dun" / "logs" / "iteration-1.out").read_text(encoding="utf-8")
    assert out.lstrip().startswith("[")
    assert log["cost_usd"] == pytest.approx(json.loads(out)[-1]["total_cost_usd"])


# --- the review gate across two real CLIs ---------------------------------------------------------------------------


def review_text(word: str, reasons: str) -> str:
    return (f"Reviewed the diff.\n\n---DUN_STATUS---\nSTATUS: COMPLETE\nEXIT_SIGNAL: true\nVERDICT: {word}\n"
            f"REASONS: {reasons}\n---END_DUN_STATUS---")


def test_claude_works_and_codex_reviews(tmp_path: Path, claude_bin: Path) -> None:
    """Codex, read-only in a scratch directory, rejects Claude's first completion (a `review_rejected` discrepancy
    that the next prompt shows) and approves the confirmation; both CLIs' costs are spent."""
    codex = require("codex")
    repo, home = make_repo(tmp_path / "repo"), make_home(tmp_path)
    configure(repo, "claude", claude_bin, skip_permissions=True)
    with (repo / ".dun" / "config.yaml").open("a", encoding="utf-8") as fh:
        fh.write(f"gate:\n  reviewers: [codex]\n  commands: {{codex: [{json.dumps(str(codex))}]}}\n")
    git(repo, "commit", "-qam", "review gate")
    reviews = [[{"text": review_text("REJECT", "the commit message does not say why"),
                 "usage": {"input_tokens": 3000, "output_tokens": 200}}],
               [{"text": review_text("APPROVE", "the box is ticked and committed"),
                 "usage": {"input_tokens": 3000, "output_tokens": 100}}]]
    confirm = {"text": FINAL_TEXT, "usage": FINAL_USAGE}
    reviewer = CLIS["codex"].server(reviews, body_log=tmp_path / "review-requests.jsonl").start()
    try:
        with ModelServer([CLAUDE_EPISODE, [confirm]], body_log=tmp_path / "requests.jsonl") as server:
            claude_env = {k: v for k, v in make_claude_env(home, server).items() if not k.startswith("XDG_")}
            setup = CLIS["codex"].setup(home, repo, reviewer, PROMPT)
            env = user_env({**base_env(home), **claude_env, **setup.env}, home)
            proc = run_loop("claude+codex", repo, env, tmp_path)
    finally:
        reviewer.stop()
    why = describe(proc, repo)
    assert proc.returncode == 0, why
    st = sc.state(repo)
    assert (st["status"], st["stop_reason"], st["iteration"]) == ("complete", "complete", 2), why
    first, second = sc.iteration_log(repo, 1), sc.iteration_log(repo, 2)
    assert first["verification"]["review"]["outcome"] == "rejected", why
    assert [d["kind"] for d in first["verification"]["discrepancies"]] == ["review_rejected"]
    prompt = (repo / ".dun" / "logs" / "iteration-2.prompt.md").read_text(encoding="utf-8")
    assert "NOT VERIFIED: the review gate rejected this iteration (codex: the commit message does not say why)" \
        in prompt
    assert second["verification"]["review"]["outcome"] == "approved"
    reviewed = [log["verification"]["review"]["verdicts"][0]["cost_usd"] for log in (first, second)]
    assert reviewed == pytest.approx([rate_cost(3000, 200, 2.0, 10.0), rate_cost(3000, 100, 2.0, 10.0)])
    assert st["cost_usd_total"] == pytest.approx(sum(log["cost_usd"] for log in (first, second)), abs=1e-6)
    assert st["cost_usd_total"] > sum(reviewed)  # Claude's own dollars on top
    argv = first["verification"]["review"]["verdicts"][0]["argv"]
    assert argv[argv.index("--sandbox") + 1] == "read-only" and "<prompt>" in argv
    assert git(repo, "status", "--porcelain") == ""
