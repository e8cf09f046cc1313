"""Capture what each pinned agent CLI really prints, offline against the scripted servers, into tests/e2e/corpus/.

    .venv/bin/python tests/e2e/capture_agent_corpus.py [CLI ...]     # default: all installed CLIs

For every CLI and case (a successful one-box run, a 429 on every request, a 401) it writes
``<cli>_<version>_<case>_stdout.<ext>`` and ``<cli>_<version>_<case>_stderr.txt``, and records the exit code, wall
time and command line in ``tests/e2e/corpus/agent_cli_runs.json``. Temporary paths in the files are as the CLI printed
them. aider's 429 case takes about a minute (its retry loop cannot be shortened), Claude's about 3 s.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.e2e.agent_clis import (
    CLIS,
    FINAL_TEXT,
    FINAL_USAGE,
    PROMPT,
    TICK_COMMAND,
    TOOL_USAGE,
    base_env,
    error_scenario,
    git,
    make_repo,
    success_scenario,
    write_gitconfig,
)
from tests.e2e.model_server import ModelServer

# tests/e2e/corpus/, not tests/corpus/: every file there needs an expectation in tests/test_transcript.py
CORPUS = Path(__file__).resolve().parent / "corpus"
MANIFEST = CORPUS / "agent_cli_runs.json"

# case name -> (scenario kind, setup options, stdout file extension)
CASES: dict[str, list[tuple[str, str, dict[str, Any], str]]] = {
    "codex": [("ok", "ok", {"model": None}, "jsonl"), ("429", "429", {}, "jsonl"), ("401", "401", {}, "jsonl")],
    "gemini": [("ok", "ok", {}, "json"), ("429", "429", {}, "json"), ("401", "401", {}, "json"),
               ("stream_ok", "ok", {"output_format": "stream-json"}, "jsonl"),
               ("stream_429", "429", {"output_format": "stream-json"}, "jsonl")],
    "opencode": [("ok", "ok", {}, "jsonl"), ("429", "429", {}, "jsonl"), ("401", "401", {}, "jsonl")],
    "aider": [("ok", "ok", {}, "txt"), ("429", "429", {}, "txt"), ("401", "401", {}, "txt")],
    "pi": [("ok", "ok", {}, "jsonl"), ("429", "429", {}, "jsonl"), ("401", "401", {}, "jsonl"),
           ("text_ok", "ok", {"mode": "text"}, "txt"), ("text_429", "429", {"mode": "text"}, "txt")],
}


def scenario_for(cli: str, kind: str) -> list[list[dict[str, Any]]]:
    return success_scenario(cli) if kind == "ok" else error_scenario(int(kind))


def git_facts(repo: Path) -> dict[str, Any]:
    return {"commits": len(git(repo, "log", "--format=%H").splitlines()),
            "ticked": "- [x] x" in (repo / "MISSION.md").read_text(encoding="utf-8"),
            "status": git(repo, "status", "--porcelain")}


def capture_cli(name: str, work: Path) -> list[dict[str, Any]]:
    cli = CLIS[name]
    why = cli.installed()
    if why:
        print(f"capture: skip {name}: {why}")
        return []
    rows = []
    for case, kind, options, ext in CASES[name]:
        base = work / f"{name}-{case}"
        repo = make_repo(base / "repo")
        with cli.server(scenario_for(name, kind), body_log=base / "requests.jsonl") as server:
            run = cli.run(base / "home", repo, server, PROMPT, timeout=300, **options)
            requests = server.requests
        stem = f"{name}_{cli.version}_{case}"
        (CORPUS / f"{stem}_stdout.{ext}").write_text(run.stdout, encoding="utf-8")
        (CORPUS / f"{stem}_stderr.txt").write_text(run.stderr, encoding="utf-8")
        row = {"cli": name, "version": cli.version, "case": case, "exit_code": run.returncode,
               "seconds": round(run.seconds, 2), "argv": [_anonymise(a, base) for a in run.argv],
               "requests": [(r.get("kind"), r.get("status")) for r in requests], **git_facts(repo)}
        print(f"capture: {stem}: exit {run.returncode} in {run.seconds:.1f}s, "
              f"{len(requests)} requests, ticked={row['ticked']}")
        rows.append(row)
    return rows


def capture_claude(work: Path) -> list[dict[str, Any]]:
    """Claude Code's --output-format json with --verbose: a JSON array of messages, not one result object."""
    from tests.e2e.conftest import CLAUDE_BIN, CLAUDE_VERSION, make_claude_env

    if not CLAUDE_BIN.exists():
        print("capture: skip claude: run `bash tests/e2e/install_claude.sh`")
        return []
    rows = []
    ok = [[{"tool_use": "Bash", "input": {"command": TICK_COMMAND, "description": "Tick box x"}, "usage": TOOL_USAGE},
           {"text": FINAL_TEXT, "usage": FINAL_USAGE}]]
    cases: list[tuple[str, list[list[dict[str, Any]]]]] = [("json_verbose_ok", ok), ("json_verbose_401", [[{"error": {
        "status": 401, "type": "authentication_error", "message": "invalid x-api-key"}}]]),
        ("json_verbose_429", [[{"error": {"status": 429, "type": "rate_limit_error",
                                           "message": "Number of requests has exceeded your rate limit",
                                           "retry_after": 0}}]])]
    for case, scenario in cases:
        base = work / f"claude-{case}"
        repo = make_repo(base / "repo")
        home = base / "home"
        home.mkdir(parents=True)
        write_gitconfig(home)
        with ModelServer(scenario) as server:
            env = make_claude_env(home, server, CLAUDE_CODE_MAX_RETRIES="0", TMPDIR=str(base))
            env.update({k: v for k, v in base_env(home).items() if k.startswith("GIT_")})
            argv = [str(CLAUDE_BIN), "-p", PROMPT, "--output-format", "json", "--verbose",
                    "--dangerously-skip-permissions"]
            started = time.monotonic()
            proc = subprocess.run(argv, cwd=repo, env={**env, "PWD": str(repo)}, stdin=subprocess.DEVNULL,
                                  capture_output=True, text=True, timeout=300)
            seconds = time.monotonic() - started
        stem = f"claude_{CLAUDE_VERSION}_{case}"
        (CORPUS / f"{stem}_stdout.json").write_text(proc.stdout, encoding="utf-8")
        (CORPUS / f"{stem}_stderr.txt").write_text(proc.stderr, encoding="utf-8")
        print(f"capture: {stem}: exit {proc.returncode} in {seconds:.1f}s")
        rows.append({"cli": "claude", "version": CLAUDE_VERSION, "case": case, "exit_code": proc.returncode,
                     "seconds": round(seconds, 2), "argv": [_anonymise(a, base) for a in argv], **git_facts(repo)})
    return rows


def _anonymise(arg: str, base: Path) -> str:
    root = str(Path(__file__).resolve().parents[2])
    return arg.replace(str(base), "<tmp>").replace(root, "<repo-root>")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("clis", nargs="*", help=f"any of {', '.join([*CLIS, 'claude'])} (default: all)")
    args = parser.parse_args(argv)
    names = args.clis or [*CLIS, "claude"]
    manifest: list[dict[str, Any]] = json.loads(MANIFEST.read_text()) if MANIFEST.exists() else []
    work = Path(tempfile.mkdtemp(prefix="dun-capture-"))
    try:
        for name in names:
            rows = capture_claude(work) if name == "claude" else capture_cli(name, work)
            done = {(r["cli"], r["case"]) for r in rows}
            manifest = [r for r in manifest if (r["cli"], r["case"]) not in done] + rows
    finally:
        if not os.environ.get("DUN_CAPTURE_KEEP"):
            shutil.rmtree(work, ignore_errors=True)
        else:
            print(f"capture: kept {work}")
    manifest.sort(key=lambda r: (r["cli"], r["case"]))
    MANIFEST.write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    print(f"capture: wrote {MANIFEST}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
