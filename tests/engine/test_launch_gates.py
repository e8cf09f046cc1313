"""A check that has stopped applying never sees its old command started early (dun/engine/launch.py): the plan keeps
the looks of what decided that it applies and its command line (its plugin's trigger, the places on PATH of its
`requires:` programs, the files its `uses:` and its placeholders read), and a command starts only while they hold.
Each command first touches a marker outside the work tree: the side effect a user would see. Before, the old
command ran for the tenth of a second before dun decided and killed it, and the marker was there."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from conftest import git, write
from test_launch import DISABLED, DUN, age, result

PLUGIN = """\
id: p
triggers: [{{path-exists: {trigger}}}]
checks:
  - id: suite
    type: command
    command: "touch {marker}; echo started-a > /proc/$PPID/fd/2; {body}"
    inputs: {{files: [{inputs}]}}
"""


def setup(repo: Path, trigger: str = "src.txt", body: str = "cat src.txt", extra: str = "", inputs: str = "") -> Path:
    """The plugin, committed with the tree and dated outside the racy window; returns the marker its command
    touches."""
    marker = repo.parent / "marker"
    write(repo, ".dun/config.yaml", DISABLED)
    write(repo, ".dun/plugins/p.yaml", PLUGIN.format(trigger=trigger, marker=marker, body=body, inputs=inputs) + extra)
    write(repo, "src.txt", "one\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "plugin")
    age(repo)
    return marker


def environment(path: str | None) -> dict[str, str]:
    env = {**os.environ, "PYTHONPROFILEIMPORTTIME": "1"}
    if path is not None:
        env["PATH"] = f"{path}{os.pathsep}{env['PATH']}"
    return env


def check(repo: Path, path: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([DUN, "check", "--format", "json"], cwd=repo, capture_output=True, text=True, timeout=120,
                          env=environment(path), check=False)


START = """
import json
from dun.core.spawn import STATUS_ARGS, start_git
from dun.engine import launch

launches = launch.start(["check", "--format", "json"], launch.TreeLook(start_git(STATUS_ARGS)))
print(json.dumps(launches.started if launches is not None else None))
if launches is not None:
    launches.stop()
"""


def early(repo: Path, path: str | None = None) -> list[str] | None:
    """The commands `dun check` would start as it starts, from its plan (killed at once): what `dun check` itself
    does first, run alone, so that what starts is told without racing the command's output against dun's own."""
    out = subprocess.run([sys.executable, "-c", START], cwd=repo, capture_output=True, text=True, timeout=60,
                         env=environment(path), check=True)
    started: list[str] | None = json.loads(out.stdout)
    return started


def planned(repo: Path, marker: Path, path: str | None = None) -> None:
    """The first run makes the plan; after an edit the command starts early (what the looks hold still holds)."""
    check(repo, path)
    write(repo, "src.txt", "two\n")
    age(repo, "src.txt")
    assert early(repo, path) == ["suite"]
    marker.unlink(missing_ok=True)


def test_a_removed_trigger_file_starts_nothing(repo: Path) -> None:
    marker = setup(repo)
    planned(repo, marker)
    os.remove(repo / "src.txt")
    age(repo, ".")
    assert early(repo) == []
    out = check(repo)
    assert result(out)["status"] == "skip" and "no trigger matched" in str(result(out)["signal"])
    assert not marker.exists() and "started-a" not in out.stderr


def test_a_required_program_gone_from_path_starts_nothing(repo: Path, tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    write(bin_dir, "mytool", "#!/bin/sh\necho tool\n").chmod(0o755)
    marker = setup(repo, extra="    requires: [mytool]\n", body="mytool; cat src.txt")
    planned(repo, marker, str(bin_dir))
    os.remove(bin_dir / "mytool")
    write(repo, "src.txt", "three\n")
    age(repo, "src.txt")
    assert early(repo, str(bin_dir)) == []
    out = check(repo, str(bin_dir))
    assert result(out)["status"] == "skip" and "not installed: mytool" in str(result(out)["signal"])
    assert not marker.exists()


def test_a_tool_the_project_no_longer_uses_starts_nothing(repo: Path) -> None:
    """`uses: mocha` while package.json's test script runs mocha; then it runs jest."""
    write(repo, "package.json", json.dumps({"scripts": {"test": "mocha"}}))
    marker = setup(repo, trigger="package.json", extra="    uses: mocha\n")
    planned(repo, marker)
    write(repo, "package.json", json.dumps({"scripts": {"test": "jest"}}))
    age(repo, "package.json")
    assert early(repo) == []
    out = check(repo)
    assert result(out)["status"] == "skip" and "does not use mocha" in str(result(out)["signal"])
    assert not marker.exists()


def test_a_placeholders_program_removed_starts_nothing(repo: Path) -> None:
    """`{js:mytool}` is node_modules/.bin/mytool: removed (an uninstall), the check reports it missing and runs
    nothing. node_modules is ignored: the work tree's fingerprint does not see it go; the plan's looks do."""
    write(repo, ".gitignore", "node_modules/\n")
    tool = write(repo, "node_modules/.bin/mytool", "#!/bin/sh\necho tool\n")
    tool.chmod(0o755)
    marker = setup(repo, body="{js:mytool}; cat src.txt")
    planned(repo, marker)
    shutil.rmtree(repo / "node_modules")
    write(repo, "src.txt", "three\n")
    age(repo, "src.txt")
    assert early(repo) == []
    out = check(repo)
    assert result(out)["status"] == "error" and "mytool not installed" in str(result(out)["signal"])
    assert not marker.exists()


def test_the_projects_interpreter_removed_does_not_start_the_old_command(repo: Path) -> None:
    """`{python}` was the project's .venv/bin/python: once the environment is removed it is `python3`, another
    command line; the old one, naming the removed interpreter, does not start."""
    write(repo, ".gitignore", ".venv/\n")
    venv = write(repo, ".venv/bin/python", "#!/bin/sh\necho venv-python\n")
    venv.chmod(0o755)
    marker = setup(repo, body="echo {python} >> ../ran; cat src.txt")
    planned(repo, marker)
    shutil.rmtree(repo / ".venv")
    write(repo, "src.txt", "three\n")
    age(repo, "src.txt")
    assert early(repo) == []
    (repo.parent / "ran").unlink(missing_ok=True)
    out = check(repo)
    assert result(out)["status"] == "pass"
    assert (repo.parent / "ran").read_text().split() == ["python3"]


def test_the_plan_is_written_only_when_it_changed(repo: Path) -> None:
    """A check without `inputs:` runs on every `dun check`, an unchanged tree too: its plan is the one the file
    holds, which is not written again (atomically written, a new file each time: its inode tells)."""
    from dun.core.cachedir import cache_dir_path

    setup(repo)
    write(repo, ".dun/plugins/p.yaml", (repo / ".dun/plugins/p.yaml").read_text().replace("    inputs: {files: []}\n",
                                                                                            ""))
    age(repo, ".dun/plugins/p.yaml")
    plan = Path(cache_dir_path(str(repo))) / "launch.marshal"
    check(repo)
    check(repo)  # the first run read no cache (it loaded the config's parser, whose sources the plan names)
    first = plan.stat().st_ino
    assert early(repo) == ["suite"]  # planned, and started again on the same tree (no inputs: never reused)
    again = check(repo)
    assert result(again)["cached"] is False
    assert plan.stat().st_ino == first
    write(repo, "src.txt", "two\n")
    age(repo, "src.txt")
    check(repo)
    assert plan.stat().st_ino != first  # the tree it was made on moved: written anew
