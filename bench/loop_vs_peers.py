"""loop_vs_peers: `dun loop` against the floor every agent loop shares, a shell `while` loop calling the agent.

Both call the same instant fake agent (tests/fake_agent.py: it reads the prompt, answers with a status block that
says IN_PROGRESS, changes nothing) the same number of times, on a 2,000-file repository with 50 open boxes. The shell
loop is what ralph-style loops reduce to with their sleeps removed: no checks, no prompt, no state. What dun adds
per iteration (checks, prompt, answer parsing, trust checks, state, logs) is its time per iteration less the
floor's. The two are timed alternately, one run of each per round.
Target: dun's overhead at most 0.1 s per iteration above the bare shell loop.
`--dirty` leaves one changed and one untracked file in the tree throughout (more git work per look: the tree hash
is built from a copy of the index instead of read from HEAD).
`--sandbox` runs dun's agent and its checks in the bubblewrap sandbox (the judge confined: one `command` check added
so that a confined command really runs each iteration); the floor stays a bare, unconfined loop.
Run: .venv/bin/python bench/loop_vs_peers.py [--runs N] [--iterations 20] [--dirty] [--sandbox]
"""

from __future__ import annotations

import json
import os
import shlex
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from _common import Run, dun_command, loop_repo, parser, time_command
from fake_agent import FAKE_COMMAND, SCENARIO_ENV, block, write_scenario

TARGET_S = 0.1


def make_repo(root: Path, iterations: int) -> Path:
    """The repository, its config driving the fake agent for `iterations` calls, and the scenario's path."""
    loop_repo(root, iterations, {"name": "command", "command": FAKE_COMMAND, "prompt_via": "stdin"})
    steps = [{"format": "text", "status": block(None, "IN_PROGRESS", 0, False, "keep going"), "repeat": True}]
    return write_scenario(root.parent / "agent", steps)


def shell_loop(iterations: int, prompt: Path, answer: Path) -> list[str]:
    """The floor: call the agent `iterations` times, prompt on stdin, answer to a file (outside the repository, so
    that the floor leaves the tree as clean as the agent does), nothing else."""
    agent = shlex.join(FAKE_COMMAND)
    script = (f'i=0; while [ "$i" -lt {iterations} ]; do {agent} < {shlex.quote(str(prompt))} > '
              f'{shlex.quote(str(answer))}; i=$((i + 1)); done')
    return ["sh", "-c", script]


def confine(root: Path, agent_dir: Path) -> None:
    """loop.sandbox: bubblewrap (the fake agent's own directory writable) and one command check, committed."""
    import subprocess

    config = root / ".dun" / "config.yaml"
    text = config.read_text(encoding="utf-8").replace("sandbox: off", "sandbox: bubblewrap")
    config.write_text(text + f"sandbox: {{writable: [{json.dumps(str(agent_dir))}]}}\n", encoding="utf-8")
    (root / ".dun" / "plugins").mkdir(exist_ok=True)
    (root / ".dun" / "plugins" / "confined.yaml").write_text(
        "id: confined\nchecks:\n  - id: confined-true\n    type: command\n    command: 'true'\n", encoding="utf-8")
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    subprocess.run(["git", "commit", "-qm", "sandbox"], cwd=root, check=True)


def main() -> int:
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--iterations", type=int, default=20)
    p.add_argument("--dirty", action="store_true",
                   help="leave an uncommitted change and an untracked file in the tree (as an agent mid-task does)")
    p.add_argument("--sandbox", action="store_true",
                   help="dun's agent and checks in the bubblewrap sandbox (the floor stays unconfined)")
    args = p.parse_args()
    n = args.iterations
    with tempfile.TemporaryDirectory(prefix="dun-bench-peers-") as tmp:
        root = Path(tmp) / "repo"
        root.mkdir()
        scenario = make_repo(root, n)
        if args.sandbox:
            confine(root, scenario.parent)
        if args.dirty:
            (root / "src/pkg0/mod0.py").write_text("VALUE = 'edited'\n", encoding="utf-8")
            (root / "notes.txt").write_text("work in progress\n", encoding="utf-8")
        prompt = Path(tmp) / "prompt.md"
        prompt.write_text((root / "MISSION.md").read_text(), encoding="utf-8")
        # its own state directory: a benchmark's calls must not fill the user's shared hourly window (dun/fleet)
        env = {**os.environ, SCENARIO_ENV: str(scenario), "XDG_STATE_HOME": str(Path(tmp) / "state")}
        loop = [*dun_command(), "loop", "--fresh"]

        def finished(run: Run) -> str | None:
            if run.returncode != 1:
                return f"exit {run.returncode}"
            state = json.loads((root / ".dun" / "state.json").read_text())
            if state["stop_reason"] != "max_iterations" or state["iteration"] != n:
                return f"unexpected stop: {state['stop_reason']} after {state['iteration']}"
            return None

        floor_runs, dun_runs = [], []
        for i in range(args.runs + 1):  # round 0 is the warm-up
            floor = time_command(shell_loop(n, prompt, Path(tmp) / "answer.out"), root, runs=1, warmup=0, env=env,
                                 accept=lambda run: None if run.returncode == 0 else f"exit {run.returncode}")
            dun = time_command(loop, root, runs=1, warmup=0, env=env, accept=finished)
            if i:
                floor_runs.append(floor.runs[0])
                dun_runs.append(dun.runs[0])
    floor_s = statistics.median(r.seconds for r in floor_runs) / n
    dun_s = statistics.median(r.seconds for r in dun_runs) / n
    floor_cpu = statistics.median(r.cpu_seconds for r in floor_runs) / n
    dun_cpu = statistics.median(r.cpu_seconds for r in dun_runs) / n
    overhead = dun_s - floor_s
    ok = overhead <= TARGET_S
    print("== loop_vs_peers: dun loop against a shell while loop, same instant fake agent")
    print(f"  iterations {n} per run, {args.runs} runs each, alternating; the tree "
          f"{'dirty (one changed, one untracked file)' if args.dirty else 'clean'}"
          f"{'; dun in the bubblewrap sandbox, its checks confined' if args.sandbox else ''}")
    print(f"  floor      {floor_s * 1000:.0f} ms per iteration (CPU {floor_cpu * 1000:.0f} ms)   shell while loop")
    print(f"  dun loop   {dun_s * 1000:.0f} ms per iteration (CPU {dun_cpu * 1000:.0f} ms)")
    print(f"  ratio      {dun_s / floor_s:.2f}x the floor")
    print(f"  overhead   {overhead * 1000:.0f} ms per iteration (CPU {(dun_cpu - floor_cpu) * 1000:.0f} ms)   "
          f"target <= {TARGET_S * 1000:.0f} ms   {'PASS' if ok else 'FAIL'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
