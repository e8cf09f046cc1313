"""Building blocks for the loop's end-to-end scenarios (tests/e2e/test_loop_e2e.py): a mission repository configured
for `dun loop` with the real Claude Code CLI, the model-server episodes that work through it, and readers for what
the loop leaves behind (.dun/state.json, the iteration logs, the CLI's own JSON in .dun/logs/iteration-N.out)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[2]
VENV_BIN = Path(sys.executable).parent  # the venv running the tests holds the `dun` under test
DUN = VENV_BIN / "dun"
DUN_LOOP_SH = REPO_ROOT / "scripts" / "dun-loop.sh"
GITIGNORE_TEMPLATE = REPO_ROOT / "templates" / "dun.gitignore"

Step = dict[str, Any]
Episode = list[Step]

TASKS = ("one", "two", "three")
MISSION_HEAD = "# Mission\n\nShip the three tasks.\n\n"
FIRST_BOX_LINE = 5  # MISSION_HEAD is four lines: the first box is on line 5


def mission_text(tasks: tuple[str, ...] = TASKS) -> str:
    return MISSION_HEAD + "".join(f"- [ ] Task {name}\n" for name in tasks)


def yaml_map(values: dict[str, Any], indent: str = "") -> str:
    """Enough YAML for .dun/config.yaml: nested maps of scalars and flow lists."""
    out = []
    for key, value in values.items():
        if isinstance(value, dict):
            out.append(f"{indent}{key}:\n{yaml_map(value, indent + '  ')}")
        elif isinstance(value, list):
            out.append(f"{indent}{key}: [{', '.join(json.dumps(str(v)) for v in value)}]\n")
        elif isinstance(value, bool):
            out.append(f"{indent}{key}: {'true' if value else 'false'}\n")
        else:
            out.append(f"{indent}{key}: {value}\n")
    return "".join(out)


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, text=True).stdout


def make_mission_repo(root: Path, claude_bin: Path, tasks: tuple[str, ...] = TASKS,
                      loop: dict[str, Any] | None = None, circuit: dict[str, Any] | None = None) -> Path:
    """A fresh git repository with MISSION.md (one box per task) and .dun/config.yaml running the pinned CLI, all
    committed, so that the only actionable check is `mission-boxes`."""
    root.mkdir(parents=True, exist_ok=True)
    git(root, "init", "-q", "-b", "main")
    (root / "MISSION.md").write_text(mission_text(tasks), encoding="utf-8")
    dun_dir = root / ".dun"
    dun_dir.mkdir()
    config: dict[str, Any] = {
        "plugins": {"disabled": ["python"]},
        # the scenarios pin the CLI's own process behaviour (exit codes on SIGTERM...); the sandbox has its own test
        "loop": {"cooldown_s": 0, "sandbox": "off", **(loop or {})},
        "agent": {"name": "claude", "command": [str(claude_bin)], "skip_permissions": True},
    }
    if circuit:
        config["circuit"] = circuit
    (dun_dir / "config.yaml").write_text(yaml_map(config), encoding="utf-8")
    shutil.copyfile(GITIGNORE_TEMPLATE, dun_dir / ".gitignore")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "initial")
    return root


def status_block(task: str, status: str = "COMPLETE", files: int = 2, exit_signal: bool = False,
                 next_rec: str = "tick the next box") -> str:
    return ("---DUN_STATUS---\n"
            f"TASK_COMPLETED: {task}\n"
            f"STATUS: {status}\n"
            f"FILES_MODIFIED: {files}\n"
            f"EXIT_SIGNAL: {'true' if exit_signal else 'false'}\n"
            f"NEXT_RECOMMENDATION: {next_rec}\n"
            "---END_DUN_STATUS---")


def tick_command(index: int, name: str) -> str:
    """Tick box `name`, create done-<name>.txt and commit both: the honest work of one iteration."""
    return (f"sed -i 's/^- \\[ \\] Task {name}$/- [x] Task {name}/' MISSION.md && "
            f"echo 'task {index} done' > done-{name}.txt && "
            f"git add MISSION.md done-{name}.txt && git commit -q -m 'Task {name}: tick the box, add done-{name}.txt'")


def tick_episode(index: int, name: str, last: bool, usage: dict[str, int] | None = None) -> Episode:
    """One honest episode: a Bash call doing the work for real, then a truthful status block."""
    block = status_block(f"mission-boxes@MISSION.md:{FIRST_BOX_LINE + index}", exit_signal=last,
                         next_rec="nothing left" if last else "tick the next box")
    final: Step = {"text": f"Ticked task {name} and committed it.\n\n{block}"}
    if usage:
        final["usage"] = usage
    return [{"tool_use": "Bash", "input": {"command": tick_command(index, name), "description": f"Do task {name}"}},
            final]


# Different usage per episode, so that a cost read from the wrong iteration cannot add up to the right total.
HONEST_USAGE = ({"input_tokens": 1000, "output_tokens": 100}, {"input_tokens": 2000, "output_tokens": 300},
                {"input_tokens": 4000, "output_tokens": 500})


def honest_scenario() -> list[Episode]:
    """Scenario 1: three episodes, one box each, the last saying EXIT_SIGNAL: true."""
    return [tick_episode(i, name, i == len(TASKS) - 1, HONEST_USAGE[i]) for i, name in enumerate(TASKS)]


def error_episode(status: int, message: str, kind: str = "rate_limit_error", retry_after: int | None = 0) -> Episode:
    error: dict[str, Any] = {"status": status, "type": kind, "message": message}
    if retry_after is not None:
        error["retry_after"] = retry_after
    return [{"error": error}]


# --- reading what the loop left -------------------------------------------------------------------------------------


def read_json(path: Path) -> dict[str, Any]:
    data = json.loads(path.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def state(root: Path) -> dict[str, Any]:
    return read_json(root / ".dun" / "state.json")


def try_state(root: Path) -> dict[str, Any] | None:
    try:
        return state(root)
    except (OSError, ValueError):
        return None


def iteration_log(root: Path, n: int) -> dict[str, Any]:
    return read_json(root / ".dun" / "logs" / f"iteration-{n}.json")


def iteration_logs(root: Path) -> list[dict[str, Any]]:
    paths = sorted((root / ".dun" / "logs").glob("iteration-*.json"), key=lambda p: int(p.stem.split("-")[1]))
    return [read_json(p) for p in paths]


def cli_result(root: Path, n: int) -> dict[str, Any]:
    """The result object Claude Code printed in iteration n (the .out file may also hold stderr lines)."""
    text = (root / ".dun" / "logs" / f"iteration-{n}.out").read_text(encoding="utf-8")
    for line in reversed(text.splitlines()):
        if line.startswith("{") and '"type":"result"' in line.replace(" ", ""):
            data = json.loads(line)
            assert isinstance(data, dict)
            return data
    raise AssertionError(f"no Claude Code result in iteration-{n}.out: {text[-2000:]!r}")


def printed_costs(root: Path, iterations: int) -> list[float]:
    return [float(cli_result(root, n)["total_cost_usd"]) for n in range(1, iterations + 1)]


def commit_subjects(root: Path) -> list[str]:
    return git(root, "log", "--format=%s").splitlines()


def report(root: Path) -> str:
    return (root / ".dun" / "REPORT.md").read_text(encoding="utf-8")


# --- running dun -----------------------------------------------------------------------------------------------------


def dun_env(claude_env: dict[str, str], **extra: str) -> dict[str, str]:
    """claude_env (the CLI pointed at the model server) with the venv's bin first on PATH: `dun loop` passes its own
    environment on to the agent."""
    env = dict(claude_env)
    env["PATH"] = f"{VENV_BIN}{os.pathsep}{env.get('PATH', os.defpath)}"
    env.pop("CLAUDECODE", None)
    env.update(extra)
    return env


def run_dun(root: Path, env: dict[str, str], *args: str, timeout: float = 120,
            stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(DUN), *args], cwd=root, env=env, capture_output=True, text=True, timeout=timeout,
                          input=stdin, stdin=None if stdin is not None else subprocess.DEVNULL)


def start_loop(root: Path, env: dict[str, str], *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen([str(DUN), "loop", *args], cwd=root, env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def wait_for(predicate: Callable[[], Any], timeout: float, what: str, interval: float = 0.05,
             proc: subprocess.Popen[str] | None = None) -> Any:
    """Poll until `predicate()` is truthy; fail naming `what` (and the loop's output when it ended early)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        if proc is not None and proc.poll() is not None:
            _, err = proc.communicate()
            raise AssertionError(f"the loop exited ({proc.returncode}) before {what}; stderr: {err[-3000:]}")
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")


def stop_process(proc: subprocess.Popen[str], sig: int = signal.SIGTERM, timeout: float = 20) -> tuple[str, str]:
    proc.send_signal(sig)
    return proc.communicate(timeout=timeout)


def processes_in(root: Path) -> list[tuple[int, str]]:
    """(pid, command line) of every live process whose working directory is `root` or below it."""
    found = []
    target = os.path.realpath(root)
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cwd = os.readlink(entry / "cwd")
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
        except OSError:
            continue
        if stat.rsplit(")", 1)[-1].split()[0] == "Z":
            continue  # a zombie has already exited
        if cwd == target or cwd.startswith(target + os.sep):
            found.append((int(entry.name), cmdline))
    return found


def group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # killpg succeeds while zombies remain in the group: count only members that are not zombies
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[-1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":
            return True
    return False
