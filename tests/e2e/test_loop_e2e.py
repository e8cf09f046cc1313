"""`dun loop`, `scripts/dun-loop.sh` and the `dun iterate | claude -p | dun respond` pipe, end to end: the real Claude
Code CLI runs every iteration against the scripted model server, really executes the Bash calls (ticking boxes,
committing), and dun is judged on what it leaves behind: .dun/state.json, the iteration logs, .dun/REPORT.md, the
handoff and git.

Each scenario builds its own mission repository (scenarios.make_mission_repo). A CLI run takes about 0.6 s; the
slowest scenarios wait on purpose (a timeout of 5 s, a usage limit that resets a few seconds ahead).
"""

from __future__ import annotations

import datetime
import json
import os
import re
import signal
import subprocess
import time
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from dun.sandbox import probe

from . import scenarios as sc
from .conftest import make_claude_env
from .model_server import ModelServer

pytestmark = pytest.mark.e2e


@pytest.fixture
def dun_bin() -> Path:
    if not sc.DUN.exists():
        pytest.skip(f"{sc.DUN} is missing: install dun into the venv running the tests (`make test`)")
    return sc.DUN


@pytest.fixture
def env(claude_env: dict[str, str], dun_bin: Path) -> dict[str, str]:
    """The environment `dun` runs in: the CLI's (pointed at this test's model server) plus the venv on PATH."""
    return sc.dun_env(claude_env)


def main_requests(server: ModelServer, episode: int | None = None) -> list[dict[str, Any]]:
    return [r for r in server.main_requests if episode is None or r["episode"] == episode]


SCRIPT_AGENT = 'exec "$CLAUDE" -p "$(cat)" --output-format json --dangerously-skip-permissions'
DRIVERS = ["dun-loop", "dun-loop.sh"]


def drive(driver: str, root: Path, env: dict[str, str], claude_bin: Path) -> subprocess.CompletedProcess[str]:
    """Run the loop to its end, either as `dun loop` or as scripts/dun-loop.sh around the same CLI."""
    if driver == "dun-loop":
        return sc.run_dun(root, env, "loop")
    return subprocess.run(["bash", str(sc.DUN_LOOP_SH), "-C", str(root), "--", "sh", "-c", SCRIPT_AGENT],
                          env={**env, "DUN": str(sc.DUN), "CLAUDE": str(claude_bin)}, capture_output=True, text=True,
                          timeout=120, stdin=subprocess.DEVNULL)


def assert_honest_run(root: Path, server: ModelServer) -> None:
    """What scenario 1 must leave, however it was driven (dun loop or scripts/dun-loop.sh)."""
    st = sc.state(root)
    assert (st["status"], st["stop_reason"], st["iteration"]) == ("complete", "complete", 3)
    assert (st["in_progress"], st["agent_pgid"], st["errors_total"], st["resume_at"]) == (None, None, 0, None)
    assert st["circuit"]["state"] == "CLOSED" and st["circuit"]["no_progress"] == 0
    assert st["last_exit_signal"] is True

    # The spend is exactly what Claude Code itself printed, iteration by iteration.
    printed = sc.printed_costs(root, 3)
    assert all(c > 0 for c in printed) and len(set(printed)) == 3
    # $5/M input and $25/M output tokens; each episode's Bash step adds the default 10 in / 5 out tokens.
    expected = [(u["input_tokens"] + 10) * 5e-6 + (u["output_tokens"] + 5) * 25e-6 for u in sc.HONEST_USAGE]
    assert printed == pytest.approx(expected, abs=1e-9)
    assert st["cost_usd_total"] == pytest.approx(sum(printed), abs=1e-6)
    assert st["budget_left_usd"] == pytest.approx(50 - sum(printed), abs=1e-4)
    assert len(st["calls"]) == 3

    logs = sc.iteration_logs(root)
    assert [log["iteration"] for log in logs] == [1, 2, 3]
    assert len({log["run_id"] for log in logs} | {st["run_id"]}) == 1
    subjects = [f"Task {name}: tick the box, add done-{name}.txt" for name in sc.TASKS]
    for n, (log, cost, subject) in enumerate(zip(logs, printed, subjects, strict=True), start=1):
        last = n == 3
        assert log["exit_code"] == 0 and log["timed_out"] is False and log["error_kind"] is None
        assert log["cost_usd"] == pytest.approx(cost, abs=1e-12) and log["cost_estimated"] is False
        assert log["session_id"] == sc.cli_result(root, n)["session_id"]
        assert log["parse_outcome"] == "parsed" and log["answer_shape"] == "claude-json"
        assert log["status_block"]["task_completed"] == f"mission-boxes@MISSION.md:{sc.FIRST_BOX_LINE + n - 1}"
        assert (log["status_block"]["status"], log["status_block"]["exit_signal"]) == ("COMPLETE", last)
        assert log["checks_before"] == {"actionable": 1, "ids": ["mission-boxes"]}
        assert log["checks_after"] == ({"actionable": 0, "ids": []} if last
                                       else {"actionable": 1, "ids": ["mission-boxes"]})
        progress = log["progress"]
        assert progress["head_before"] != progress["head_after"]
        assert [c.split(" ", 1)[1] for c in progress["commits"]] == [subject]
        assert progress["files_changed"] == 2
        assert progress["newly_passing"] == (["mission-boxes"] if last else [])
        assert log["flags"] == [] and log["circuit"]["no_progress"] == 0
        assert log["decision"]["action"] == ("stop" if last else "continue")
        assert log["decision"]["reason"] == ("complete" if last else "work_remains")
    assert [logs[i]["progress"]["head_after"] for i in range(2)] == [logs[i]["progress"]["head_before"]
                                                                      for i in range(1, 3)]

    # git: three real commits on top of the initial one, every box ticked, a clean tree.
    assert sc.commit_subjects(root) == [*reversed(subjects), "initial"]
    assert sc.git(root, "rev-parse", "HEAD").strip() == logs[-1]["progress"]["head_after"]
    assert "- [ ]" not in (root / "MISSION.md").read_text() and (root / "MISSION.md").read_text().count("- [x]") == 3
    assert sorted(p.name for p in root.glob("done-*.txt")) == [f"done-{name}.txt" for name in sorted(sc.TASKS)]
    assert sc.git(root, "status", "--porcelain") == ""

    handoff = sc.read_json(root / ".dun" / "handoff.json")
    assert handoff["iteration"] == 3 and handoff["status"]["exit_signal"] is True
    assert [c.split(" ", 1)[1] for c in handoff["git"]["commits"]] == [subjects[2]]

    rep = sc.report(root)
    assert "status: **complete**, stop reason: **complete**" in rep
    assert f"cost: ${sum(printed):.4f} of $50 budget" in rep
    assert "iterations: 3 (3 logged), failed calls: 0" in rep
    for n, cost in enumerate(printed, start=1):
        assert f"| {n} | 0 | ${cost:.4f} |" in rep

    assert server.episode_count == 3 and not server.exhausted


# --- 1. an honest multi-step mission ---------------------------------------------------------------------------------


@pytest.mark.scenario(sc.honest_scenario())
@pytest.mark.parametrize("sandbox", ["off", "bubblewrap"])
def test_honest_mission_completes_in_three_iterations(tmp_path: Path, claude_bin: Path, server: ModelServer,
                                                      env: dict[str, str], sandbox: str) -> None:
    if sandbox == "bubblewrap" and probe() is not None:
        pytest.skip(f"bubblewrap cannot run here: {probe()}")
    root = sc.make_mission_repo(tmp_path / "mission", claude_bin, loop={"sandbox": sandbox})
    proc = sc.run_dun(root, env, "loop")
    assert proc.returncode == 0, proc.stderr
    assert_honest_run(root, server)  # the real CLI works with $HOME read-only but for its own state
    log = sc.iteration_log(root, 1)
    assert log["agent"] == "claude" and log["sandbox"] == sandbox
    argv = log["argv"]
    assert argv[0] == str(claude_bin) and argv[1] == "-p" and argv[2].startswith("<prompt:")
    settings = str(root / ".dun" / "cache" / "guard-settings.json")
    assert argv[3:] == ["--output-format", "json", "--max-budget-usd", "5", "--settings", settings,
                        "--dangerously-skip-permissions"]
    assert "stopped: complete after 3 iteration(s)" in proc.stderr


# --- 2. the total budget ---------------------------------------------------------------------------------------------

# 80,000 input tokens cost $0.40: every iteration spends a little over $0.40 of a $1.00 cap.
EXPENSIVE = {"input_tokens": 80_000, "output_tokens": 100}


@pytest.mark.scenario([sc.tick_episode(i, name, False, EXPENSIVE) for i, name in enumerate(sc.TASKS)])
def test_budget_stops_before_the_cap_is_crossed(tmp_path: Path, claude_bin: Path, server: ModelServer,
                                                env: dict[str, str]) -> None:
    root = sc.make_mission_repo(tmp_path / "mission", claude_bin,
                                loop={"max_budget_usd": 1.0, "budget_per_iteration_usd": 0.45})
    proc = sc.run_dun(root, env, "loop")
    assert proc.returncode == 1, proc.stderr
    st = sc.state(root)
    printed = sc.printed_costs(root, 2)
    spent = sum(printed)
    assert printed == pytest.approx([0.40 + 0.0025 + 0.000175] * 2, abs=1e-9)
    # after two iterations $0.805 is spent; a third could spend $0.45 more and cross $1.00: stop before it
    assert (st["status"], st["stop_reason"], st["iteration"]) == ("stopped", "budget", 2)
    assert st["cost_usd_total"] == pytest.approx(spent, abs=1e-6) and spent <= 1.0 < spent + 0.45
    assert st["budget_left_usd"] == pytest.approx(1.0 - spent, abs=1e-4)
    assert server.episode_count == 2  # the third episode never started
    assert sc.commit_subjects(root)[:2] == ["Task two: tick the box, add done-two.txt",
                                            "Task one: tick the box, add done-one.txt"]
    for n in (1, 2):
        log = sc.iteration_log(root, n)
        settings = str(root / ".dun" / "cache" / "guard-settings.json")
        assert log["argv"][-5:] == ["--max-budget-usd", "0.45", "--settings", settings,
                                    "--dangerously-skip-permissions"]
        assert log["cost_usd"] == pytest.approx(printed[n - 1], abs=1e-12)
        assert log["decision"] == {"action": "continue", "reason": "work_remains", "wait_s": 0.0}
    assert not (root / ".dun" / "logs" / "iteration-3.json").exists()
    rep = sc.report(root)
    assert "status: **stopped**, stop reason: **budget**" in rep
    assert f"cost: ${spent:.4f} of $1 budget" in rep


# --- 3. rate limited, then recovered ---------------------------------------------------------------------------------

RATE_WAIT_MIN = 0.02  # 1.2 s


@pytest.mark.scenario([
    sc.error_episode(429, "Number of requests has exceeded your per-minute rate limit"),
    sc.tick_episode(0, "one", True),
])
@pytest.mark.parametrize("driver", DRIVERS)
def test_rate_limit_waits_without_counting_no_progress(tmp_path: Path, claude_bin: Path, server: ModelServer,
                                                       env: dict[str, str], driver: str) -> None:
    # no_progress_limit 1: were the rate-limited iteration counted as no progress, the circuit would open at once.
    root = sc.make_mission_repo(tmp_path / "mission", claude_bin, tasks=("one",),
                                loop={"usage_limit_wait_min": RATE_WAIT_MIN},
                                circuit={"half_open_after": 1, "no_progress_limit": 1})
    proc = drive(driver, root, {**env, "CLAUDE_CODE_MAX_RETRIES": "1"}, claude_bin)

    first = sc.cli_result(root, 1)
    assert (first["is_error"], first["api_error_status"]) == (True, 429)  # the CLI gave up after its retry
    assert len(main_requests(server, 0)) == 2 and all(r["status"] == 429 for r in main_requests(server, 0))
    assert proc.returncode == 0, proc.stderr
    st = sc.state(root)
    assert (st["status"], st["stop_reason"], st["iteration"]) == ("complete", "complete", 2)
    assert st["errors_total"] == 0  # a limit is waited out, not counted as a failed call
    assert st["circuit"]["state"] == "CLOSED" and st["circuit"]["no_progress"] == 0

    log = sc.iteration_log(root, 1)
    assert (log["exit_code"], log["error_kind"], log["reset_at"]) == (1, "rate_limit", None)
    assert "429" in log["error"] and log["status_block"] is None
    assert log["circuit"]["no_progress"] == 0 and log["circuit"]["state"] == "CLOSED"
    assert log["decision"] == {"action": "wait", "reason": "rate_limit", "wait_s": RATE_WAIT_MIN * 60}
    assert log["cost_usd"] == 0

    # the loop really waited the configured time between the failed call and the next one
    gap = main_requests(server, 1)[0]["time"] - main_requests(server, 0)[-1]["time"]
    assert gap >= RATE_WAIT_MIN * 60
    assert len(st["calls"]) == 2

    second = sc.iteration_log(root, 2)
    assert second["error_kind"] is None and second["decision"]["reason"] == "complete"
    assert sc.commit_subjects(root)[0] == "Task one: tick the box, add done-one.txt"
    assert "stop reason: **complete**" in sc.report(root)
    assert "| 1 | 1 | $0.0000 |" in sc.report(root) and "rate_limit" in sc.report(root)


# --- 4. a usage limit with a reset time survives a restart -----------------------------------------------------------


def wait_for_usage_wait(root: Path, proc: subprocess.Popen[str]) -> dict[str, Any]:
    """Block until the loop has concluded iteration 1 with a usage-limit wait; returns the state then."""
    def waiting() -> dict[str, Any] | None:
        st = sc.try_state(root)
        ok = st is not None and st.get("resume_at") and st.get("iteration") == 1 and not st.get("in_progress")
        return st if ok else None
    st: dict[str, Any] = sc.wait_for(waiting, 30, "the usage-limit wait", proc=proc)
    return st


def test_usage_limit_reset_epoch_survives_restart(tmp_path: Path, claude_bin: Path, model_server: Any,
                                                  isolated_home: Path, dun_bin: Path) -> None:
    reset = int(time.time()) + 9
    server = model_server([sc.error_episode(429, f"Claude AI usage limit reached|{reset}"),
                           sc.tick_episode(0, "one", True)])
    env = sc.dun_env(make_claude_env(isolated_home, server, CLAUDE_CODE_MAX_RETRIES="0"))
    # usage_limit_wait_min 0.02: a reset time that is ignored would show up as a 1.2 s wait
    root = sc.make_mission_repo(tmp_path / "mission", claude_bin, tasks=("one",),
                                loop={"usage_limit_wait_min": RATE_WAIT_MIN})

    loop = sc.start_loop(root, env)
    try:
        st = wait_for_usage_wait(root, loop)
        assert st["resume_at"] == reset
        time.sleep(0.3)
        _, err = sc.stop_process(loop, signal.SIGTERM)
    finally:
        if loop.poll() is None:
            loop.kill()
    assert loop.returncode == 143, err
    assert time.time() < reset - 2, "the test machine is too slow for this scenario"

    st = sc.state(root)
    assert (st["status"], st["stop_reason"], st["iteration"], st["resume_at"]) == ("stopped", "interrupted", 1, reset)
    assert st["errors_total"] == 0 and st["circuit"]["no_progress"] == 0
    log = sc.iteration_log(root, 1)
    assert (log["error_kind"], log["reset_at"]) == ("usage_limit", reset)
    assert log["decision"]["action"] == "wait" and log["decision"]["reason"] == "usage_limit"
    assert "usage limit reached" in log["error"].lower()
    assert sc.cli_result(root, 1)["result"].endswith(f"Claude AI usage limit reached|{reset}")
    assert "stop reason: **interrupted**" in sc.report(root)
    status = sc.run_dun(root, env, "status")
    assert status.returncode == 0, status.stderr
    assert "waiting for a usage limit until" in status.stdout

    # A restarted loop keeps waiting: no agent call before the reset, resume_at unchanged.
    loop = sc.start_loop(root, env)
    try:
        sc.wait_for(lambda: (sc.try_state(root) or {}).get("status") == "running", 15, "the restart", proc=loop)
        while time.time() < reset - 1:
            st = sc.state(root)
            assert st["resume_at"] == reset and st["iteration"] == 1 and not st["in_progress"]
            assert server.episode_count == 1, "the restarted loop called the agent before the limit reset"
            time.sleep(0.2)
        _, err = loop.communicate(timeout=60)
    finally:
        if loop.poll() is None:
            loop.kill()
    assert loop.returncode == 0, err
    [first_after] = main_requests(server, 1)[:1]
    assert first_after["time"] >= reset
    st = sc.state(root)
    assert (st["status"], st["stop_reason"], st["iteration"]) == ("complete", "complete", 2)
    assert len({log["run_id"] for log in sc.iteration_logs(root)}) == 1  # the restart resumed the same run
    assert sc.iteration_log(root, 2)["decision"]["reason"] == "complete"


def next_nine_pm_london(now: float) -> float:
    zone = ZoneInfo("Europe/London")
    local = datetime.datetime.fromtimestamp(now, zone)
    candidate = local.replace(hour=21, minute=0, second=0, microsecond=0)
    if candidate.timestamp() < now:
        candidate = (local + datetime.timedelta(days=1)).replace(hour=21, minute=0, second=0, microsecond=0)
    return datetime.datetime(candidate.year, candidate.month, candidate.day, 21, 0, tzinfo=zone).timestamp()


@pytest.mark.scenario([sc.error_episode(429, "You've hit your limit · resets 9pm (Europe/London)"),
                       sc.tick_episode(0, "one", True)])
def test_usage_limit_wall_clock_reset_survives_restart(tmp_path: Path, claude_bin: Path, server: ModelServer,
                                                       env: dict[str, str]) -> None:
    env = {**env, "CLAUDE_CODE_MAX_RETRIES": "0"}
    root = sc.make_mission_repo(tmp_path / "mission", claude_bin, tasks=("one",),
                                loop={"usage_limit_wait_min": RATE_WAIT_MIN})
    before = time.time()
    loop = sc.start_loop(root, env)
    try:
        st = wait_for_usage_wait(root, loop)
        _, err = sc.stop_process(loop)
    finally:
        if loop.poll() is None:
            loop.kill()
    expected = next_nine_pm_london(before)
    assert expected == next_nine_pm_london(time.time()), "9pm London passed during the test: run it again"
    assert loop.returncode == 143, err
    assert st["resume_at"] == pytest.approx(expected)
    log = sc.iteration_log(root, 1)
    assert (log["error_kind"], log["reset_at"]) == ("usage_limit", pytest.approx(expected))
    assert log["decision"]["wait_s"] == pytest.approx(expected - before, abs=30)
    assert sc.cli_result(root, 1)["result"] == "API Error: Request rejected (429) · You've hit your limit · resets " \
                                               "9pm (Europe/London)"

    loop = sc.start_loop(root, env)
    try:
        sc.wait_for(lambda: (sc.try_state(root) or {}).get("pid") == loop.pid, 15, "the restart", proc=loop)
        time.sleep(2)
        assert loop.poll() is None, "the restarted loop should still be waiting"
        st = sc.state(root)
        assert (st["status"], st["resume_at"], st["iteration"]) == ("running", pytest.approx(expected), 1)
        assert server.episode_count == 1
        _, err = sc.stop_process(loop)
    finally:
        if loop.poll() is None:
            loop.kill()
    assert loop.returncode == 143, err
    assert sc.state(root)["resume_at"] == pytest.approx(expected)


# --- 5. no status block, ever ----------------------------------------------------------------------------------------


@pytest.mark.scenario([[{"text": f"I looked around the repository ({n}). It is a fine repository."}]
                       for n in range(4)])
@pytest.mark.parametrize("driver", DRIVERS)
def test_no_status_block_opens_the_circuit(tmp_path: Path, claude_bin: Path, server: ModelServer,
                                           env: dict[str, str], driver: str) -> None:
    root = sc.make_mission_repo(tmp_path / "mission", claude_bin, circuit={"half_open_after": 1,
                                                                           "no_progress_limit": 2})
    proc = drive(driver, root, env, claude_bin)
    assert proc.returncode == 1, proc.stderr
    st = sc.state(root)
    assert (st["status"], st["stop_reason"], st["iteration"]) == ("stopped", "circuit_open", 2)
    assert (st["circuit"]["state"], st["circuit"]["reason"], st["circuit"]["no_progress"]) == ("OPEN", "no_progress",
                                                                                               2)
    assert st["errors_total"] == 0 and st["last_exit_signal"] is None
    assert server.episode_count == 2
    for n, (circuit, action) in enumerate([("HALF_OPEN", "continue"), ("OPEN", "stop")], start=1):
        log = sc.iteration_log(root, n)
        assert log["exit_code"] == 0 and log["error_kind"] is None
        assert (log["parse_outcome"], log["status_block"]) == ("no_status_block", None)
        assert log["progress"]["commits"] == [] and log["progress"]["files_changed"] == 0
        assert (log["circuit"]["state"], log["circuit"]["no_progress"]) == (circuit, n)
        assert log["decision"]["action"] == action
    assert sc.iteration_log(root, 2)["decision"]["reason"] == "circuit_open"
    assert sc.commit_subjects(root) == ["initial"]
    rep = sc.report(root)
    assert "stop reason: **circuit_open**" in rep and "circuit: OPEN (no_progress)" in rep
    assert rep.count("| no_status_block | no progress |") == 2

    # the open circuit holds on a restart (its cooldown has not passed): no agent call
    again = drive(driver, root, env, claude_bin)
    assert again.returncode == 1 and sc.state(root)["stop_reason"] == "circuit_open"
    assert server.episode_count == 2


# --- 6. an agent hanging in a tool call ------------------------------------------------------------------------------

# Claude Code runs each Bash call in a shell of its own session (setsid), outside the CLI's process group. On SIGTERM
# the CLI stops that shell itself, sends the interrupted tool result to the model, and may or may not finish the turn
# before it exits. A command that ignores SIGTERM keeps the CLI waiting until dun's SIGKILL.
# Long enough for the CLI to start and run its Bash tool on a loaded machine (5 s was not, at load 10-14: the
# iteration timed out before the tool's `sleep` existed)
HANG_TIMEOUT_S = 12
HANG_CASES = {
    "model-answers-after-sigterm": ("sleep 60", 0.0),
    "model-slow-after-sigterm": ("sleep 60", 30.0),
    "tool-ignores-sigterm": ("trap '' TERM; sleep 60", 30.0),
}
ESCAPED_TOOL_BUG = (
    "BUG: on timeout dun kills only the agent's process group (dun/agent_run.py run_agent, dun/proc.py kill_group); "
    "Claude Code's Bash tool runs in its own session, so a tool ignoring SIGTERM outlives the SIGKILLed CLI, "
    "reparented to init, still running in the repository")


@pytest.mark.parametrize("case", [
    "model-answers-after-sigterm",
    "model-slow-after-sigterm",
    "tool-ignores-sigterm",
])
def test_hanging_agent_is_killed_with_all_its_processes(tmp_path: Path, claude_bin: Path, model_server: Any,
                                                        isolated_home: Path, dun_bin: Path, case: str) -> None:
    command, model_delay = HANG_CASES[case]
    server = model_server([
        [{"tool_use": "Bash", "input": {"command": command, "description": "Wait a minute"}},
         {"text": "The command was interrupted.", "delay": model_delay}],
        sc.tick_episode(0, "one", True),
    ])
    env = sc.dun_env(make_claude_env(isolated_home, server))
    root = sc.make_mission_repo(tmp_path / "mission", claude_bin, tasks=("one",),
                                loop={"iteration_timeout_s": HANG_TIMEOUT_S, "kill_grace_s": 1,
                                      "budget_per_iteration_usd": 0.5})
    loop = sc.start_loop(root, env)
    try:
        pgid = sc.wait_for(lambda: (sc.try_state(root) or {}).get("agent_pgid"), 20, "the agent's pgid", proc=loop)
        sleeper = sc.wait_for(lambda: [p for p, cmd in sc.processes_in(root) if cmd.startswith("sleep 60")],
                              HANG_TIMEOUT_S, "the agent's `sleep 60`", proc=loop)
        assert sc.group_alive(pgid)
        _, err = loop.communicate(timeout=60)
        assert loop.returncode == 0, err
        assert not sc.group_alive(pgid), "processes of the killed agent's group survive"
        left = sc.processes_in(root)
        assert left == [], f"processes of the agent left running in the repository: {left} (sleep: {sleeper})"
    finally:
        if loop.poll() is None:
            loop.kill()
        for pid, _ in sc.processes_in(root):  # what the test's agent left behind: do not leave it to the machine
            os.kill(pid, signal.SIGKILL)

    st = sc.state(root)
    assert (st["status"], st["stop_reason"], st["iteration"]) == ("complete", "complete", 2)
    assert st["agent_pgid"] is None and st["errors_total"] == 1
    log = sc.iteration_log(root, 1)
    assert (log["timed_out"], log["error_kind"], log["error"]) == (True, "other", f"timed out after {HANG_TIMEOUT_S}s")
    assert HANG_TIMEOUT_S <= log["duration_s"] < HANG_TIMEOUT_S + 1 + 3
    assert log["status_block"] is None and log["progress"]["commits"] == []
    out = (root / ".dun" / "logs" / "iteration-1.out").read_text()
    # Whether the CLI still prints a result after SIGTERM, and its exit code (0, 143, or -9 from dun's SIGKILL),
    # is a race inside the CLI; dun must take the CLI's own figure when there is one and charge the cap otherwise.
    assert log["exit_code"] in ((0, 143, -signal.SIGKILL) if case != "tool-ignores-sigterm" else (-signal.SIGKILL,))
    if '"type":"result"' in out.replace(" ", ""):
        assert case == "model-answers-after-sigterm"
        result = sc.cli_result(root, 1)
        assert result["result"] == "The command was interrupted."
        assert (log["cost_usd"], log["cost_estimated"]) == (result["total_cost_usd"], False)
    else:
        assert (log["cost_usd"], log["cost_estimated"]) == (0.5, True)
    if case == "model-answers-after-sigterm":  # the CLI stopped its Bash call itself and told the model so
        [tool_result] = main_requests(server, 0)[1]["tool_results"]
        assert tool_result["is_error"] is True
    assert log["circuit"]["no_progress"] == 1
    assert log["decision"] == {"action": "continue", "reason": "work_remains", "wait_s": 0.0}
    assert st["cost_usd_total"] == pytest.approx(log["cost_usd"] + sc.cli_result(root, 2)["total_cost_usd"], abs=1e-6)
    assert sc.iteration_log(root, 2)["decision"]["reason"] == "complete"
    assert sc.commit_subjects(root)[0] == "Task one: tick the box, add done-one.txt"
    assert "other; timed out" in sc.report(root)


# --- 7. the pure Ralph pipe gives the loop's handoff -----------------------------------------------------------------


def comparable_handoff(handoff: dict[str, Any]) -> dict[str, Any]:
    """The handoff without what differs between two repositories by nature (hashes, times, session ids)."""
    agent = {k: v for k, v in handoff["agent"].items() if k != "session_id"}
    git = handoff["git"]
    return {"outcome": handoff["outcome"], "status": handoff["status"], "error": handoff["error"], "agent": agent,
            "commits": [c.split(" ", 1)[1] for c in git["commits"]], "files_changed": git["files_changed"],
            "moved": git["base_head"] != git["head"]}


def previous_iteration(prompt: str) -> str:
    """The prompt's "Previous iteration" section, commit hashes masked."""
    start = prompt.index("## Previous iteration")
    end = prompt.index("\n## ", start + 1)
    return re.sub(r"\b[0-9a-f]{7,40}\b", "<sha>", prompt[start:end].strip())


@pytest.mark.scenario([sc.tick_episode(0, "one", False), sc.tick_episode(0, "one", False)])
def test_iterate_pipe_respond_matches_the_loop(tmp_path: Path, claude_bin: Path, server: ModelServer,
                                               env: dict[str, str]) -> None:
    by_hand = sc.make_mission_repo(tmp_path / "by-hand", claude_bin, tasks=("one", "two"))
    looped = sc.make_mission_repo(tmp_path / "looped", claude_bin, tasks=("one", "two"))
    base = sc.git(by_hand, "rev-parse", "HEAD").strip()

    answer_file = tmp_path / "out.json"  # outside the repository: it is not part of the agent's work
    pipe = subprocess.run(
        ["bash", "-c", 'set -o pipefail; dun iterate | "$CLAUDE" -p "$(cat -)" --output-format json '
                       '--dangerously-skip-permissions > "$OUT"'],
        cwd=by_hand, env={**env, "CLAUDE": str(claude_bin), "OUT": str(answer_file)}, capture_output=True, text=True,
        timeout=60, stdin=subprocess.DEVNULL)
    assert pipe.returncode == 0, pipe.stderr
    assert sc.git(by_hand, "status", "--porcelain") == ""
    respond = sc.run_dun(by_hand, env, "respond", "--file", str(answer_file))
    assert respond.returncode == 0, respond.stderr
    answer = json.loads(respond.stdout)
    assert answer["outcome"] == "parsed" and answer["shape"] == "claude-json"
    manual = sc.read_json(by_hand / ".dun" / "handoff.json")
    assert manual["git"]["base_head"] == base
    assert manual["git"]["head"] == sc.git(by_hand, "rev-parse", "HEAD").strip() != base

    loop = sc.run_dun(looped, env, "loop", "--max-iterations", "1")
    assert loop.returncode == 1, loop.stderr
    assert sc.state(looped)["stop_reason"] == "max_iterations"
    auto = sc.read_json(looped / ".dun" / "handoff.json")

    assert comparable_handoff(manual) == comparable_handoff(auto)
    assert manual["status"] == {"task_completed": f"mission-boxes@MISSION.md:{sc.FIRST_BOX_LINE}",
                                "status": "COMPLETE", "files_modified": 2, "exit_signal": False,
                                "next_recommendation": "tick the next box", "extra": {}}
    assert comparable_handoff(manual)["commits"] == ["Task one: tick the box, add done-one.txt"]
    assert manual["git"]["files_changed"] == 2
    assert manual["agent"]["cost_usd"] == json.loads(answer_file.read_text())["total_cost_usd"]
    # the same commit, touching the same files, in both repositories
    for root in (by_hand, looped):
        assert sc.git(root, "show", "--name-only", "--format=%s", "HEAD").split() == \
            ["Task", "one:", "tick", "the", "box,", "add", "done-one.txt", "MISSION.md", "done-one.txt"]
    assert (by_hand / "MISSION.md").read_text() == (looped / "MISSION.md").read_text()
    # the next prompt of both shows the previous iteration the same way
    sections = {previous_iteration(sc.run_dun(root, env, "iterate").stdout) for root in (by_hand, looped)}
    assert sections == {"## Previous iteration\n\n"
                        f"Claimed: mission-boxes@MISSION.md:{sc.FIRST_BOX_LINE}, STATUS COMPLETE, EXIT_SIGNAL false, "
                        "FILES_MODIFIED 2\nIts NEXT_RECOMMENDATION: tick the next box\n"
                        "It made 1 commit(s): <sha> Task one: tick the box, add done-one.txt"}
    assert server.episode_count == 2


# --- 8. scripts/dun-loop.sh drives scenario 1 ------------------------------------------------------------------------


@pytest.mark.scenario(sc.honest_scenario())
def test_dun_loop_sh_drives_the_honest_mission(tmp_path: Path, claude_bin: Path, server: ModelServer,
                                               env: dict[str, str]) -> None:
    root = sc.make_mission_repo(tmp_path / "mission", claude_bin)
    proc = drive("dun-loop.sh", root, env, claude_bin)
    assert proc.returncode == 0, proc.stderr
    assert_honest_run(root, server)
    assert "stop complete" in proc.stderr
    assert os.path.exists(root / ".dun" / "logs" / "iteration-3.prompt.md")
