"""Whole classes the guard covers beyond single patterns: brace expansion, symlinks, positional parameters and IFS,
interpreter code, code it cannot see, scripts written then run, shared state - each with the everyday neighbour
that must stay allowed."""

from __future__ import annotations

import io
import json
import subprocess
from pathlib import Path

import pytest
from guard_support import bash, fixed_home, tool

from dun.guard import decide, load_rules
from dun.guard.hook import run_guard


@pytest.fixture(autouse=True)
def _home(monkeypatch: pytest.MonkeyPatch) -> None:
    fixed_home(monkeypatch)


def rule(command: str) -> str | None:
    return bash(command).rule


def test_brace_expansion_is_done_before_deciding() -> None:
    assert rule("rm -rf {~,/tmp/x}") == "fs.delete-system"
    assert rule("rm -rf ~/{.ssh,.gnupg}") == "fs.delete-outside"
    assert rule("chmod -R 777 {/etc,/var}") == "perm.recursive-outside"
    assert bash("touch src/{a,b,c}.py && rm -f {build,dist}/*.whl && echo {1..5}").decision == "allow"
    assert rule("echo {1..100000}") == "shell.unparseable"  # too many words to analyse: fail closed


def test_symlinks_made_in_the_same_line_are_followed() -> None:
    assert rule('ln -s "$HOME" h && rm -rf h/') == "fs.delete-system"
    assert rule("ln -s / r && chmod -R 777 r/") == "perm.recursive-outside"
    assert rule("ln -s ~/.ssh s && cp my_key s/authorized_keys") == "fs.write-outside"
    assert bash("ln -s ~ h && rm h").decision == "allow"  # removes the link, not what it points to
    assert bash("ln -s /tmp/cache .cache && rm -rf .cache/*").decision == "allow"


def test_symlinks_on_disk_are_resolved_before_deciding_inside(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) \
        -> None:
    repo, home = tmp_path / "repo", tmp_path / "home"
    (repo / "build").mkdir(parents=True)
    (home / ".ssh").mkdir(parents=True)
    (repo / "h").symlink_to(home)
    (repo / "out").symlink_to(repo / "build")
    monkeypatch.setenv("HOME", str(home))
    assert bash("rm -rf h/", cwd=str(repo), root=repo).rule == "fs.delete-system"
    assert bash("echo x > h/.bashrc", cwd=str(repo), root=repo).rule == "fs.write-outside"
    assert bash("rm -rf h", cwd=str(repo), root=repo).decision == "allow"
    assert bash("rm -rf out/", cwd=str(repo), root=repo).decision == "allow"  # a link within the repository
    event = {"tool_name": "Write", "cwd": str(repo), "tool_input": {"file_path": str(repo / "h" / ".ssh" / "k"),
                                                                   "content": "x"}}
    assert decide(event, repo, load_rules([], [])).rule == "fs.write-outside"


def test_positional_parameters_arrays_and_ifs_are_followed() -> None:
    assert rule('set -- rm -rf ~; "$@"') == "fs.delete-system"
    assert rule('a=(rm -rf /etc); "${a[@]}"') == "fs.delete-system"
    assert rule("IFS=,; c=rm,-rf,/home/dev; $c") == "fs.delete-system"
    assert bash('set -- src tests; ruff check "$@"').decision == "allow"
    assert bash('args=(--cov=src -q); pytest "${args[@]}"').decision == "allow"


@pytest.mark.parametrize("command", [
    "python3 -c \"import shutil,os; shutil.rmtree(os.path.expanduser('~'))\"",
    "python3 -c \"import subprocess as s; s.check_call(['bash', '-c', 'rm -rf ~'])\"",
    "perl -e 'use File::Path qw(rmtree); rmtree($ENV{HOME})'",
    "ruby -e 'require \"fileutils\"; FileUtils.rm_rf(Dir.home)'",
    "node -e \"require('fs').rmSync(require('os').homedir(), {recursive: true})\"",
    "php -r 'file_put_contents(getenv(\"HOME\").\"/.bashrc\", \"\");'",
    "awk 'BEGIN { system(\"rm -rf ~\") }'",
    "python3 - <<'EOF'\nimport os\nos.system('rm -rf /etc')\nEOF",
])
def test_interpreter_one_liners_are_read_for_what_they_do(command: str) -> None:
    assert bash(command).decision == "deny"


def test_everyday_interpreter_one_liners_are_allowed() -> None:
    for command in ("python3 -c 'print(1)'", "python3 -c \"import shutil; shutil.rmtree('build')\"",
                    "node -e \"require('fs').rmSync('dist', {recursive: true})\"", "awk '{print $1}' data.csv",
                    "python -c \"import json,sys; print(json.load(sys.stdin)['v'])\" < package.json"):
        assert bash(command).decision == "allow", command


def test_code_the_guard_cannot_read_is_denied() -> None:
    for command in ("base64 -d payload.b64 | sh", 'eval "$(base64 -d < payload.b64)"', 'x=$(cat cmd.txt); $x',
                    "python3 -c \"exec(__import__('base64').b64decode('cHJpbnQoMSk='))\"", "cat script | bash"):
        assert rule(command) == "exec.unseen-code", command
    # readable after all: decoded from text in the line, and read (`rm -rf ~`)
    for command in ("printf '\\x72\\x6d -rf ~' | sh", "echo cm0gLXJmIH4K | base64 -d | sh",
                    'eval "$(echo cm0gLXJmIH4= | base64 -d)"', "source <(base64 -d <<< cm0gLXJmIH4=)"):
        assert rule(command) == "fs.delete-system", command
    assert bash("echo bHMgLWxh | base64 -d | sh").decision == "allow"  # ls -la
    for command in ('eval "$(ssh-agent -s)"', "source <(kubectl completion bash)", "echo ls | sh",
                    'eval "$(direnv hook bash)"'):
        assert bash(command).decision == "allow", command


def test_scripts_written_then_run_are_read() -> None:
    assert rule("echo 'rm -rf ~' > x.sh && sh x.sh") == "fs.delete-system"
    assert rule("printf 'all:\\n\\trm -rf ~\\n' | make -f -") == "fs.delete-system"
    assert rule("python3 -c \"open('w.sh', 'w').write('x')\" && sh w.sh") == "exec.unseen-code"
    assert bash("echo 'echo hello' > hello.sh && bash hello.sh").decision == "allow"


def test_shell_scripts_written_with_the_write_tool_meet_the_same_rules() -> None:
    def write(path: str, content: str) -> str | None:
        event = {"tool_name": "Write", "cwd": "/work/repo", "tool_input": {"file_path": path, "content": content}}
        return decide(event, Path("/work/repo"), load_rules([], [])).rule

    assert write("/work/repo/cleanup.sh", "#!/bin/sh\nrm -rf \"$HOME\"\n") == "fs.delete-system"
    assert write("/work/repo/deploy", "#!/usr/bin/env bash\ngit push --force origin main\n") == "git.push-force"
    assert write("/work/repo/build.sh", "#!/bin/sh\nrm -rf \"$1\"/build\nmake\n") is None  # parameters: not held
    assert write("/work/repo/notes.md", "rm -rf ~\n") is None
    assert tool("Write", "/work/repo/x.sh").decision == "allow"


def test_shared_state_outside_any_sandbox_is_protected() -> None:
    assert rule("docker run --rm -v /:/host alpine rm -rf /host/home") == "container.host-access"
    assert rule("kill -9 -1") == "sys.kill-all"
    assert rule("crontab -r") == "sys.crontab"
    assert rule("gh api -X DELETE repos/o/r") == "hosted.delete"
    assert rule("git update-ref -d refs/heads/main") == "git.update-ref"
    assert rule("git send-pack --force origin main") == "git.push-force"
    assert rule("git restore --source=HEAD --staged --worktree .") == "git.discard-changes"
    assert rule("psql -c 'DELETE FROM users'") == "db.delete-all"
    assert rule(":(){ :|:& };:") == "sys.fork-bomb"
    for command in ('docker run --rm -v "$PWD":/app -w /app python:3.11 pytest', "kill -9 12345", "crontab -l",
                    "gh api repos/o/r/pulls", "psql -c 'DELETE FROM s WHERE id = 1'", "kubectl delete pod web-1"):
        assert bash(command).decision == "allow", command


def test_the_repository_is_claude_project_dirs_git_top_level(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) \
        -> None:
    """An agent that cds into another repository does not make that one "the repository"."""
    project, other = tmp_path / "project", tmp_path / "other"
    for repo in (project, other):
        (repo / "src").mkdir(parents=True)
        subprocess.run(["git", "init", "-q"], cwd=repo, check=True)

    def hook(cwd: Path, command: str) -> str:
        event = {"hook_event_name": "PreToolUse", "tool_name": "Bash", "cwd": str(cwd),
                 "tool_input": {"command": command}}
        out = io.StringIO()
        run_guard(io.BytesIO(json.dumps(event).encode()), out, [], [], io.StringIO())
        return str(json.loads(out.getvalue())["hookSpecificOutput"]["permissionDecisionReason"]) if out.getvalue() \
            else ""

    monkeypatch.delenv("CLAUDE_PROJECT_DIR", raising=False)
    assert hook(other, "rm -rf ../project") == ""  # without it, the cwd's repository is the one protected
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(project / "src"))
    assert hook(other, "rm -rf ../project").startswith("dun guard [fs.delete-repo]")
    assert hook(project / "src", "rm -rf ../build") == ""
    assert (project / ".dun" / "logs" / "guard.jsonl").is_file()
