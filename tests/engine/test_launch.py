"""Test runners started as `dun check` starts (dun/engine/launch.py): from the plan of the last identical run, only
when its result cannot be reused, adopted only when the check would start exactly that command, killed otherwise,
and never a way around the cache rule. Each command writes a line with its shell's pid to dun's own stderr
(`/proc/$PPID/fd/2`); a `sitecustomize` the tests put on PYTHONPATH writes there the pids of dun's children at the
moment dun imports `dun.engine.runner`. A command among them was started before the checks' runner was loaded. (The
order of the lines alone was a race: under load the early command's shell wrote its line after the import.)"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import git, write

PLUGIN = """\
id: p
triggers: [{{path-exists: {trigger}}}]
checks:
  - id: suite
    type: command
    command: "echo started-{tag} $$ > /proc/$PPID/fd/2; echo run >> {log}; {body}"
    inputs: {{}}
"""
DISABLED = ("plugins: {disabled: [python, go, git, mission, hooks, beads, helix, javascript, rust, test-suites]}\n")


def age(root: Path, *paths: str) -> None:
    """The files named (all of the work tree's without) a minute old: outside the racy window, so results may be
    stored. Only what changed: dating a file again changes its ctime, which the plan's looks would see."""
    past = time.time() - 60
    if paths:
        for path in paths:
            os.utime(root / path, (past, past))
        return
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d != ".git"]
        for name in [*filenames, *dirnames, "."]:
            os.utime(os.path.join(dirpath, name), (past, past))


def plugin(repo: Path, tag: str = "a", body: str = "cat src.txt", trigger: str = "src.txt") -> None:
    write(repo, ".dun/plugins/p.yaml", PLUGIN.format(tag=tag, log=repo.parent / "runs.log", body=body,
                                                     trigger=trigger))
    age(repo, ".dun/plugins/p.yaml")


@pytest.fixture
def project(repo: Path) -> Path:
    write(repo, ".dun/config.yaml", DISABLED)
    write(repo, "src.txt", "one\n")
    plugin(repo)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "plugin")
    age(repo)
    return repo


# the console script, as a user runs dun (`python -m dun` would put the work tree on sys.path, whose look the plan
# keeps)
DUN = str(Path(sys.executable).parent / "dun")

# Loaded by every dun the tests start: as `dun.engine.runner` is imported, the pids of dun's children then (zombies
# included: nothing reaps an early command before the runner adopts it) go to stderr.
SITECUSTOMIZE = """\
import os, sys


class _Children:
    def find_spec(self, name, path=None, target=None):
        if name == "dun.engine.runner":
            me, children = str(os.getpid()), []
            for pid in filter(str.isdigit, os.listdir("/proc")):
                try:
                    with open(f"/proc/{pid}/stat") as fh:
                        stat = fh.read()
                except OSError:
                    continue
                if stat.rpartition(")")[2].split()[1] == me:
                    children.append(pid)
            sys.stderr.write(f"children-at-runner {' '.join(children)}\\n")
            sys.stderr.flush()
        return None


sys.meta_path.insert(0, _Children())
"""


@pytest.fixture(scope="module")
def hook_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("sitecustomize")
    (path / "sitecustomize.py").write_text(SITECUSTOMIZE)
    return path


_HOOK: list[Path] = []


@pytest.fixture(autouse=True)
def _children_hook(hook_dir: Path) -> Iterator[None]:
    _HOOK.append(hook_dir)
    yield
    _HOOK.pop()


def env() -> dict[str, str]:
    """The environment at the call, the test's own home with it (one taken at import had the real one: every dun
    here stored its caches and plans in the user's ~/.cache/dun), and the children hook on PYTHONPATH."""
    paths = [str(p) for p in _HOOK[-1:]] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    return {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}


def check(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([DUN, "check", "--format", "json", *args], cwd=repo, capture_output=True, text=True,
                          env=env(), check=False)


def started_early(proc: subprocess.CompletedProcess[str], tag: str = "a") -> bool:
    """Whether the command's shell was one of dun's children when the checks' runner was loaded."""
    lines = proc.stderr.splitlines()
    shells = {line.split()[1] for line in lines if line.startswith(f"started-{tag} ")}
    children = next((set(line.split()[1:]) for line in lines if line.startswith("children-at-runner")), set())
    return bool(shells & children)


def result(proc: subprocess.CompletedProcess[str]) -> dict[str, object]:
    found: dict[str, object] = next(r for r in json.loads(proc.stdout)["checks"] if r["id"] == "suite")
    return found


def runs(repo: Path) -> int:
    log = repo.parent / "runs.log"
    return len(log.read_text().splitlines()) if log.exists() else 0


def edit(repo: Path, text: str) -> None:
    write(repo, "src.txt", text)
    age(repo, "src.txt")


def test_after_an_edit_the_runner_starts_before_dun_has_loaded_and_reports_the_same(project: Path) -> None:
    first = check(project)
    assert not started_early(first) and result(first)["status"] == "pass" and "one" in str(result(first)["detail"])
    edit(project, "two\n")
    second = check(project)
    assert started_early(second), second.stderr[-2000:]
    assert result(second)["status"] == "pass" and "two" in str(result(second)["detail"]) and runs(project) == 2
    fresh = check(project, "--no-cache")
    assert {k: v for k, v in result(fresh).items() if k != "duration_s"} == {
        k: v for k, v in result(second).items() if k != "duration_s"}
    # unchanged since: the result is reused and nothing starts early (the replay prints the whole run)
    check(project)
    assert runs(project) == 3


def test_the_early_runner_runs_as_the_check_would_run_it(project: Path) -> None:
    """The same process state as a command the check starts itself: SIGPIPE at its default (Python ignores it; a
    pipeline like `yes | head` would otherwise fail with EPIPE errors), no signal blocked, a session and process
    group of its own, stdin from /dev/null."""
    # the shell itself reads its status at last (exec): a shell blocks every signal for a moment as it forks
    state = "ps -o sid= -o pgid= -p $$; readlink /proc/$$/fd/0; exec grep -E '^Sig(Ign|Blk)' /proc/self/status"
    plugin(project, body=state)
    first = check(project)
    edit(project, "two\n")
    second = check(project)
    assert started_early(second)
    assert _state(result(second)) == _state(result(first))
    assert _state(result(first))[2:] == (True, "/dev/null")


def _state(found: dict[str, object]) -> tuple[object, ...]:
    ids, stdin, blocked, ignored = str(found["detail"]).splitlines()
    sid, pgid = ids.split()
    # signals 32 and 33 are glibc's own (no program may handle them): posix_spawn leaves them ignored, fork does not
    return int(blocked.split()[1], 16), int(ignored.split()[1], 16) & ~(0b11 << 31), sid == pgid, stdin


def test_a_removed_scratch_directory_is_made_before_the_command_starts(project: Path) -> None:
    """A command writing into dun's scratch directory (`.dun/cache`, as go-test's profile): once it is gone (`git
    clean -X`), nothing starts early, and the check makes it before its command runs, as always."""
    plugin(project, body="cat src.txt > .dun/cache/copy.txt && cat .dun/cache/copy.txt")
    check(project)
    shutil.rmtree(project / ".dun" / "cache")
    edit(project, "two\n")
    out = check(project)
    assert not started_early(out)
    assert result(out)["status"] == "pass" and "two" in str(result(out)["detail"])
    edit(project, "three\n")
    assert started_early(check(project))  # there again


def test_commands_kept_apart_by_jobs_are_not_started_together(project: Path) -> None:
    """`check.jobs: 1` with two command checks (suites sharing a database): the run keeps them apart, so neither
    starts early beside the other."""
    write(project, ".dun/config.yaml", DISABLED + "check: {jobs: 1}\n")
    write(project, ".dun/plugins/q.yaml", "id: q\nchecks:\n  - {id: other, type: command, inputs: {}, "
                                          "command: 'echo started-b $$ > /proc/$PPID/fd/2'}\n")
    age(project, ".dun/config.yaml", ".dun/plugins/q.yaml", ".dun/plugins")
    check(project)
    edit(project, "two\n")
    out = check(project)
    assert not started_early(out) and not started_early(out, "b") and result(out)["status"] == "pass"


def test_a_changed_manifest_or_other_arguments_start_nothing_early(project: Path) -> None:
    check(project)
    plugin(project, tag="b")  # the check's command changed: the plan is not used, the new command runs
    edit(project, "two\n")
    changed = check(project)
    assert not started_early(changed, "b") and "started-a" not in changed.stderr
    edit(project, "three\n")
    assert started_early(check(project), "b")  # planned anew
    edit(project, "four\n")
    assert not started_early(check(project, "--only", "suite"), "b")  # another command line: no plan yet


def slow(project: Path) -> tuple[Path, Path]:
    """The command sleeps a minute in a child once a flag file outside the work tree exists, writing its pid."""
    flag, pid_file = project.parent / "slow", project.parent / "pid"
    plugin(project, body=f"if [ -f {flag} ]; then sleep 60 & echo $! > {pid_file}; wait; fi; cat src.txt")
    return flag, pid_file


STOP = """
import sys, time
from dun.core.spawn import STATUS_ARGS, start_git
from dun.engine import launch

launches = launch.start(["check", "--format", "json"], launch.TreeLook(start_git(STATUS_ARGS)))
assert launches.started == ["suite"], launches.started
deadline = time.monotonic() + 30
while not open(sys.argv[1]).read().strip():  # the command's child has started
    assert time.monotonic() < deadline
    time.sleep(0.01)
launches.stop()
"""


def test_a_guess_the_check_does_not_claim_is_killed_with_its_tree(project: Path) -> None:
    """A command started early that no check claims (its result was reused after all, or the check would run
    another command) is killed at the end of the run, its children too."""
    flag, pid_file = slow(project)
    check(project)
    flag.touch()
    pid_file.write_text("")
    edit(project, "two\n")
    subprocess.run([sys.executable, "-c", STOP, str(pid_file)], cwd=project, env=env(), check=True, timeout=60)
    assert not _alive(int(pid_file.read_text()))


def test_a_change_made_while_the_early_runner_runs_is_not_stored(project: Path) -> None:
    """The cache rule (issue 23) holds for a command started before dun looked at its inputs: the look taken before
    it started is what its result is stored under, so a file changed while it ran is run again next time."""
    plugin(project, body="cat src.txt; echo changed > src.txt")
    check(project)
    edit(project, "two\n")
    during = check(project)
    assert started_early(during) and "two" in str(result(during)["detail"])
    age(project, "src.txt")
    again = check(project)  # src.txt changed while the last run's command ran: not reused
    assert result(again)["cached"] is False and "changed" in str(result(again)["detail"])


def test_terminating_dun_kills_the_runner_it_started_early(project: Path) -> None:
    flag, pid_file = slow(project)
    check(project)
    flag.touch()
    edit(project, "two\n")
    proc = subprocess.Popen([DUN, "check", "--format", "json"], cwd=project, env=env(), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 30
    while not pid_file.exists() or not pid_file.read_text().strip():
        assert time.monotonic() < deadline and proc.poll() is None, proc.communicate()
        time.sleep(0.01)
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=30)
    pid = int(pid_file.read_text())
    deadline = time.monotonic() + 5
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not _alive(pid), (proc.returncode, out, err[-3000:])


CLAIM = """
import json, os, sys
from dun.core.spawn import STATUS_ARGS, start_git
from dun.engine import launch

def started():
    return launch.start(["check", "--format", "json"], launch.TreeLook(start_git(STATUS_ARGS)))

launches = started()
entry = launches._started["suite"].entry
lines = []
outcome = launches.claim(entry, after=False).finish(60, lines.append)
print(json.dumps({"started": launches.started == [] and sorted(launches._pre) == ["suite"], "code": outcome.exit_code,
                  "lines": lines}))
with open("src.txt", "w") as fh:
    fh.write("three\\n")
launches = started()
pid = launches._started["suite"].pid
other = (entry[0], [*entry[1][:-1], "true"], *entry[2:])
print(json.dumps({"claimed": launches.claim(other, after=False) is not None, "pid": pid}))
"""


def test_the_plan_is_claimed_only_by_the_same_command(project: Path) -> None:
    """`start` starts the planned command once the tree moved, and `claim` hands it over only for the same command
    line, directory, environment and report file: another has the guess killed. Run in a process of its own, as
    dun runs it (one thread, its own signal handlers)."""
    check(project)
    edit(project, "two\n")
    out = subprocess.run([sys.executable, "-c", CLAIM], cwd=project, capture_output=True, text=True, env=env(),
                         check=True)
    first, second = (json.loads(line) for line in out.stdout.splitlines())
    assert first == {"started": True, "code": 0, "lines": ["two"]}
    assert second["claimed"] is False and not _alive(second["pid"])


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie is gone: its state is Z
        with open(f"/proc/{pid}/stat", "rb") as fh:
            return fh.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except OSError:
        return False
