"""Each pinned agent CLI (codex, gemini, opencode, aider, pi), run directly (not through dun), fully offline against
its scripted server in a temporary git repository with a private HOME: it really runs the scripted shell command (or,
for aider, applies the SEARCH/REPLACE edit) that ticks the box and commits, and prints the final answer with its
status block on stdout. The error tests pin down where each CLI reports a 429 and a 401, and its exit code.

A CLI that is not installed skips (``bash tests/e2e/install_agents.sh`` installs them). Each run takes 0.5-5 s.
"""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Iterator
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest

from dun.agents.versions import TESTED

from .agent_clis import (
    CLIS,
    PRICE_IN_PER_MTOK,
    PRICE_OUT_PER_MTOK,
    PROMPT,
    STATUS_BLOCK,
    TICKED,
    Cli,
    Run,
    error_scenario,
    final_text,
    git,
    json_lines,
    make_repo,
    success_scenario,
)
from .agent_servers import AgentServer
from .conftest import CLAUDE_VERSION

HERE = Path(__file__).resolve().parent
VERSIONS_PY = HERE.parents[1] / "dun" / "agents" / "versions.py"
WALL_TIMES: dict[str, float] = {}


def cost(input_tokens: int, output_tokens: int) -> float:
    return (input_tokens * PRICE_IN_PER_MTOK + output_tokens * PRICE_OUT_PER_MTOK) / 1e6


@pytest.fixture(scope="module", autouse=True)
def report_wall_times() -> Iterator[None]:
    yield
    if WALL_TIMES:
        shown = ", ".join(f"{k} {v:.1f}s" for k, v in sorted(WALL_TIMES.items()))
        print(f"\nagent CLI wall times: {shown}")


def require(name: str) -> Cli:
    cli = CLIS[name]
    why = cli.installed()
    if why:
        pytest.skip(why)
    return cli


def run_cli(name: str, scenario: list[list[dict[str, Any]]], tmp_path: Path, label: str = "",
            **options: Any) -> tuple[Run, AgentServer, Path]:
    cli = require(name)
    repo = make_repo(tmp_path / "repo")
    server = cli.server(scenario, body_log=tmp_path / "requests.jsonl", aux_text="Tick box x in MISSION.md")
    with server:
        run = cli.run(tmp_path / "home", repo, server, PROMPT, timeout=120, **options)
    server.dump(tmp_path / "records.json")
    WALL_TIMES[f"{name}{label}"] = run.seconds
    return run, server, repo


def describe(run: Run) -> str:
    return f"exit {run.returncode}\nstdout: {run.stdout[-3000:]}\nstderr: {run.stderr[-3000:]}"


def assert_ticked_and_committed(run: Run, repo: Path) -> None:
    assert (repo / "MISSION.md").read_text(encoding="utf-8") == TICKED, describe(run)
    assert git(repo, "status", "--porcelain") == "", describe(run)  # committed, and nothing left behind
    assert len(git(repo, "log", "--format=%H").splitlines()) == 2, describe(run)
    assert git(repo, "show", "--format=", "--name-only", "HEAD").split() == ["MISSION.md"]


# --- the one-box mission ---------------------------------------------------------------------------------------------


def test_versions_are_pinned_in_one_place() -> None:
    """dun/agents/versions.py pins them; the install scripts read it by running it (any python, no dun needed)."""
    printed = subprocess.run(["python3", str(VERSIONS_PY)], capture_output=True, text=True, check=True).stdout
    assert json.loads(printed) == {name: asdict(pin) for name, pin in TESTED.items()}
    assert TESTED["claude"].version == CLAUDE_VERSION
    assert {"claude", "codex", "gemini", "opencode", "aider", "pi"} == set(TESTED)
    assert not (HERE / "agent_versions.json").exists()


# Where each CLI reports the scripted usage: the shell step (1000 in, 50 out) and the final answer (1200 in, 100 out).


def usage_codex(run: Run) -> None:  # tokens summed per turn, never dollars
    [done] = [e for e in json_lines(run.stdout) if e.get("type") == "turn.completed"]
    assert done["usage"]["input_tokens"] == 2200 and done["usage"]["output_tokens"] == 150
    assert "cost" not in run.stdout.lower()
    assert run.stderr.startswith("Reading additional input from stdin...")


def usage_gemini(run: Run) -> None:  # tokens per model (the router's side call on its own model), never dollars
    models = json.loads(run.stdout)["stats"]["models"]
    main = [m["tokens"] for m in models.values() if "main" in m.get("roles", {})]
    assert main == [{**main[0], "prompt": 2200, "candidates": 150, "total": 2350}], models
    assert "cost" not in run.stdout.lower()


def usage_opencode(run: Run) -> None:  # tokens and dollars on every step_finish event
    steps = [e["part"] for e in json_lines(run.stdout) if e.get("type") == "step_finish"]
    assert [(s["tokens"]["input"], s["tokens"]["output"]) for s in steps] == [(1000, 50), (1200, 100)]
    assert sum(s["cost"] for s in steps) == pytest.approx(cost(1000, 50) + cost(1200, 100))


def usage_pi(run: Run) -> None:  # tokens and dollars on every assistant message_end event
    ends = [e["message"] for e in json_lines(run.stdout)
            if e.get("type") == "message_end" and e["message"].get("role") == "assistant"]
    assert [(m["usage"]["input"], m["usage"]["output"]) for m in ends] == [(1000, 50), (1200, 100)]
    assert sum(m["usage"]["cost"]["total"] for m in ends) == pytest.approx(cost(1000, 50) + cost(1200, 100))


USAGE_CHECKS = {"codex": usage_codex, "gemini": usage_gemini, "opencode": usage_opencode, "pi": usage_pi}


@pytest.mark.parametrize("name", sorted(USAGE_CHECKS))
def test_cli_runs_the_shell_step_commits_and_prints_the_status_block(name: str, tmp_path: Path) -> None:
    run, server, repo = run_cli(name, success_scenario(name), tmp_path)
    assert run.returncode == 0, describe(run)
    assert_ticked_and_committed(run, repo)
    assert STATUS_BLOCK in final_text(name, run.stdout), describe(run)
    mains = server.main_requests
    assert [(r["episode"], r["step"]) for r in mains] == [(0, 0), (0, 1)]
    assert mains[1]["tool_results"], "the second request carries the shell step's result"
    assert not server.exhausted
    USAGE_CHECKS[name](run)


def test_aider_applies_the_edit_commits_and_prints_the_status_block(tmp_path: Path) -> None:
    run, server, repo = run_cli("aider", success_scenario("aider"), tmp_path)
    assert run.returncode == 0, describe(run)
    assert_ticked_and_committed(run, repo)  # its history files live under .dun/cache/, ignored; no .gitignore edit
    assert not (repo / ".gitignore").exists()
    assert STATUS_BLOCK in run.stdout
    assert "Applied edit to MISSION.md" in run.stdout
    assert [r["kind"] for r in server.requests] == ["main", "aux"]  # the answer, then the commit message
    assert git(repo, "log", "-1", "--format=%s").strip() == "Tick box x in MISSION.md"
    # tokens and dollars in one line (with --no-stream the tokens are the server's; streamed, aider estimates them)
    match = re.search(r"Tokens: (\S+) sent, (\S+) received\. Cost: \$([\d.]+) message, \$([\d.]+) session\.",
                      run.stdout)
    assert match, run.stdout
    assert match.group(1, 2) == ("1.2k", "100")
    assert float(match.group(3)) == pytest.approx(cost(1200, 100), abs=1e-4)


# --- codex's sandbox -------------------------------------------------------------------------------------------------


def test_codex_workspace_write_sandbox_commits_when_git_is_a_writable_root(tmp_path: Path) -> None:
    run, _, repo = run_cli("codex", success_scenario("codex"), tmp_path, "-sandbox", sandbox=True)
    assert run.returncode == 0, describe(run)
    assert_ticked_and_committed(run, repo)


def test_codex_workspace_write_sandbox_keeps_git_read_only_by_default(tmp_path: Path) -> None:
    run, server, repo = run_cli("codex", success_scenario("codex"), tmp_path, "-sandbox-ro", sandbox=True,
                                git_writable=False)
    assert run.returncode == 0, describe(run)  # the command failed, the turn did not
    assert (repo / "MISSION.md").read_text(encoding="utf-8") == TICKED  # sed could write the work tree
    assert len(git(repo, "log", "--format=%H").splitlines()) == 1  # but git could not write .git
    result = server.main_requests[1]["tool_results"][0]["content"]
    assert "index.lock" in result or "Read-only file system" in result, result


def test_codex_with_a_named_model_uses_exec_command(tmp_path: Path) -> None:
    """A model Codex knows no metadata for gets the plain tool set (exec_command) instead of the JavaScript exec
    tool of its default model, and an `error` item warning about the metadata on stdout."""
    run, _, repo = run_cli("codex", success_scenario("codex"), tmp_path, "-model", model="scripted-model")
    assert run.returncode == 0, describe(run)
    assert_ticked_and_committed(run, repo)
    errors = [e["item"] for e in json_lines(run.stdout)
              if e.get("type") == "item.completed" and e["item"].get("type") == "error"]
    assert errors and "Model metadata for `scripted-model` not found" in errors[0]["message"]


# --- errors: where they are reported, and the exit codes -------------------------------------------------------------

# (cli, status) -> (exit code, the stream that carries the error, text it contains)
ERRORS = {
    ("codex", 429): (1, "stdout", "429 Too Many Requests"),
    ("codex", 401): (1, "stdout", "401 Unauthorized"),
    ("gemini", 429): (429 % 256, "stderr", "Rate limit reached"),  # exit code: the HTTP status modulo 256
    ("gemini", 401): (401 % 256, "stderr", "Incorrect API key"),
    ("opencode", 429): (1, "stdout", '"statusCode":429'),
    ("opencode", 401): (1, "stdout", '"statusCode":401'),
    ("pi", 429): (0, "stdout", '"errorMessage":"429 '),  # json mode exits 0 on an API error
    ("pi", 401): (0, "stdout", '"errorMessage":"401 '),
    ("aider", 401): (0, "stdout", "AuthenticationError"),  # aider exits 0 on an API error
}


@pytest.mark.parametrize(("name", "status"), sorted(ERRORS))
def test_api_error_is_reported(name: str, status: int, tmp_path: Path) -> None:
    run, server, repo = run_cli(name, error_scenario(status), tmp_path, f"-{status}")
    code, stream, text = ERRORS[(name, status)]
    assert run.returncode == code, describe(run)
    assert text in getattr(run, stream), describe(run)
    assert (repo / "MISSION.md").read_text(encoding="utf-8") != TICKED
    assert server.main_requests and all(r["status"] == status for r in server.main_requests)


def test_gemini_stream_json_reports_errors_on_stdout(tmp_path: Path) -> None:
    run, _, _ = run_cli("gemini", error_scenario(429), tmp_path, "-stream-429", output_format="stream-json")
    assert run.returncode == 429 % 256
    [result] = [e for e in json_lines(run.stdout) if e.get("type") == "result"]
    assert result["status"] == "error" and "Rate limit reached" in result["error"]["message"]


def test_pi_text_mode_exits_1_on_an_api_error(tmp_path: Path) -> None:
    run, _, _ = run_cli("pi", error_scenario(429), tmp_path, "-text-429", mode="text")
    assert run.returncode == 1 and run.stdout == ""
    assert "429 Rate limit reached" in run.stderr
