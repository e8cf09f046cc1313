"""An adversarial pass over the test runners started as `dun check` starts (dun/engine/launch.py): a command the
check adopts must leave it what a run with every cache off finds, and no plan file can make dun fail. Each dun here
runs with the test's own home (the environment is read at each call), so no plan lands in the real one."""

from __future__ import annotations

import signal
import subprocess
from pathlib import Path

from conftest import git, write
from test_launch import DISABLED, DUN, _children_hook, age, edit, env, hook_dir, plugin, project, result, started_early  # noqa: F401 (fixtures: the hook tells what started early)

from dun.engine.launch import _file as launch_file


def check(repo: Path, **extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([DUN, "check", "--format", "json"], cwd=repo, capture_output=True, text=True, timeout=60,
                          env={**env(), **extra}, check=False)


WORKSPACE = """\
id: p
checks:
  - id: suite
    type: command
    command: "echo started-a $$ > /proc/$PPID/fd/2; sh ./run.sh"
    parser: {type: junit-xml, file: .dun/cache/r.xml}
"""
# a workspace root's runner: one JUnit report per package beside the named one, as dun/checks/jsenv.py has them
RUN = """\
mkdir -p .dun/cache
for p in $(cat packages.txt); do
  echo "<testsuite name='$p'><testcase classname='$p' name='t'><failure message='$p broke'/></testcase></testsuite>" \
    > ".dun/cache/r@$p.xml"
done
exit 1
"""


def test_a_removed_packages_report_is_not_read_as_this_runs(repo: Path) -> None:
    """The check removes every per-package report before its command starts (ParserRun.before); the command started
    early removed only the named one, so a package removed since the last run still had its failure reported."""
    write(repo, ".dun/config.yaml", DISABLED)
    write(repo, ".dun/plugins/p.yaml", WORKSPACE)
    write(repo, "packages.txt", "alpha beta\n")
    write(repo, "run.sh", RUN)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "workspace")
    age(repo)
    assert "2 failed" in str(result(check(repo))["signal"])
    write(repo, "packages.txt", "alpha\n")  # beta removed
    age(repo, "packages.txt")
    early = check(repo)
    assert started_early(early), early.stderr[-2000:]
    fresh = check(repo, DUN_NO_CACHE="1")
    assert "1 failed" in str(result(fresh)["signal"])
    assert result(early)["signal"] == result(fresh)["signal"]
    assert result(early)["items"] == result(fresh)["items"]


def _damaged(how: str, plan: tuple[object, ...]) -> tuple[object, ...]:
    setup, tree, looks, entries = plan
    entry = list(entries[0])  # type: ignore[index]
    if how == "inputs of another shape":
        entry[7] = [1]
    elif how == "a variable of another type":
        entry[3] = {"VAR": 1}
    elif how == "a look at a path with NUL":
        entry[7] = [("a\0b", None)]
    return setup, tree, looks, [tuple(entry)]


def test_a_plan_of_another_shape_inside_is_a_miss(project: Path) -> None:  # noqa: F811 (the fixture)
    """Marshal data the plan's outer shape accepts, wrong further in (an input that is no pair, a variable that is
    no string): the run is as a run without a plan, never a traceback."""
    check(project)
    plan = launch_file(str(project))  # the plan's own file, as dun/engine/launch.py reads it
    stored = plan.load()
    assert stored is not None
    for n, how in enumerate(["inputs of another shape", "a variable of another type", "a look at a path with NUL"]):
        assert plan.store(_damaged(how, stored))
        edit(project, f"{n}\n")
        out = check(project)
        assert out.returncode == 0 and "Traceback" not in out.stderr, (how, out.stderr[-2000:])
        assert result(out)["status"] == "pass" and f"{n}" in str(result(out)["detail"]), how


def _ignoring(repo: Path) -> subprocess.CompletedProcess[str]:
    """`dun check` started ignoring SIGINT and SIGHUP, as `nohup` or a script's background job starts it; its
    command sends dun both signals (a terminal closed, Ctrl-C pressed in the script's terminal) and reports what
    it ignores itself."""
    def ignore() -> None:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGHUP, signal.SIG_IGN)

    return subprocess.run([DUN, "check", "--format", "json"], cwd=repo, capture_output=True, text=True, timeout=60,
                          env=env(), check=False, preexec_fn=ignore)


def test_signals_dun_was_started_ignoring_neither_kill_its_commands_nor_fail_them(project: Path) -> None:  # noqa: F811
    """A signal dun ignores (`nohup dun check`) went to the termination handlers anyway (the reaper's and the early
    runner's guard): they killed the running tests and the run reported them failed, `exit -9`, exit 1. Now it is
    ignored, the commands run to their end, and the early runner ignores it as the check's own command does."""
    plugin(project, body="kill -HUP $PPID; kill -INT $PPID; sleep 1; grep -E '^SigIgn' /proc/self/status; "
                         "cat src.txt")
    first = _ignoring(project)
    assert first.returncode == 0 and result(first)["status"] == "pass", first.stdout[-2000:]
    edit(project, "two\n")
    second = _ignoring(project)
    assert started_early(second), second.stderr[-2000:]
    assert second.returncode == 0 and result(second)["status"] == "pass", second.stdout[-2000:]
    assert str(result(second)["detail"]).splitlines()[0] == str(result(first)["detail"]).splitlines()[0]
