"""The escape suite: an agent, confined by a real bubblewrap and scripted to plant everything it can where dun would
run or trust it a second later (git config and hooks, a swapped .git, dun's own bookkeeping and caches, links, the
sandbox's mounts, the project files the checks run), under both drivers. The canaries outside the repository must
survive every case, and what dun judges by must be unchanged; without the sandbox the same agent reaches them (so
the test can fail)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from fake_agent import FAKE_COMMAND, block, calls, write_scenario
from loop_support import make_repo
from test_sandbox import needs_bwrap, world  # noqa: F401 (fixture)

ROOT = Path(__file__).resolve().parents[2]

# Every family of planting the agent tries, each on its own line (`set +e`: one refusal does not stop the rest).
PLANT = r"""
set +e
evil="$EVIL"
git config core.fsmonitor "$evil fsmonitor"
mkdir -p myhooks && printf '#!/bin/sh\n%s hookspath\n' "$evil" > myhooks/post-index-change && chmod +x myhooks/*
git config core.hooksPath "$PWD/myhooks"
for h in post-index-change pre-commit post-commit reference-transaction; do
  printf '#!/bin/sh\n%s hook-%s\n' "$evil" "$h" > ".git/hooks/$h" && chmod +x ".git/hooks/$h"
done
git config filter.x.clean "$evil filter" && echo '* filter=x' >> .gitattributes
git config commit.gpgsign true && git config gpg.program "$evil gpg"
echo 'check.sh' >> .git/info/exclude
mv .git .git-orig && mkdir .git && cp -a .git-orig/. .git/ \
  && printf '[core]\n\tfsmonitor = %s swapped\n' "$evil" >> .git/config
printf '{"schema_version": 1, "files": ["MISSION.md"], "tasks": [{"id": "MISSION.md#x.1", "file": "MISSION.md", \
"line": 3, "text": "alpha", "checked": false, "raw": "- [ ] alpha", "verify": "%s tasks-verify"}]}\n' "$evil" \
  > .dun/tasks.json
rm -f .dun/fingerprint.json
printf '{"loop": {"sandbox": "off"}}\n' > .dun/config.yaml
mkdir -p .dun/plugins && printf 'id: planted\nchecks:\n  - id: planted\n    type: command\n    command: %s plugin\n' \
  "$evil" > .dun/plugins/evil.yaml
rm -rf .dun/logs; ln -s "$OUTSIDE" .dun/logs
ln -sf "$OUTSIDE/canary.txt" .dun/REPORT.md
for f in "$XDG_CACHE_HOME"/dun/*; do echo garbage > "$f"; done
mkdir -p "$XDG_CONFIG_HOME/dun/plugins" && printf \
  'id: user\nchecks:\n  - id: user\n    type: command\n    command: %s user-plugin\n' "$evil" \
  > "$XDG_CONFIG_HOME/dun/plugins/evil.yaml"
umount -l /tmp; mount -o remount,rw /
printf '#!/bin/sh\necho ran > check-ran.txt\n%s check\n' "$evil" > check.sh
printf '#!/bin/sh\n%s verify-line\n' "$evil" > verify.sh
mkdir -p ../fake/common && cp -a .git/. ../fake/common/ \
  && printf '[core]\n\tworktree = %s\n\tfsmonitor = %s commondir\n' "$OUTSIDE" "$evil" >> ../fake/common/config \
  && echo "$PWD/../fake/common" > .git/commondir
"""
EVIL = '#!/bin/sh\necho pwned > "$OUTSIDE/pwned-$1"\n'


def _repo(base: Path, mode: str) -> Path:
    repo = base / "repo"
    make_repo(repo, boxes=("alpha", "beta"), loop={"sandbox": mode, "max_iterations": 2})
    config = json.loads((repo / ".dun" / "config.yaml").read_text(encoding="utf-8"))
    config["sandbox"] = {"writable": [str(base / "fake")]}  # the fake agent's own bookkeeping lives there
    config["agent"]["command"] = FAKE_COMMAND
    (repo / ".dun" / "config.yaml").write_text(json.dumps(config, indent=1) + "\n", encoding="utf-8")
    (repo / ".dun" / "plugins").mkdir()
    (repo / ".dun" / "plugins" / "project.yaml").write_text(
        "id: project\nchecks:\n  - id: project-check\n    type: command\n    command: sh check.sh\n", encoding="utf-8")
    (repo / "check.sh").write_text("#!/bin/sh\necho ran > check-ran.txt\n", encoding="utf-8")
    (repo / "verify.sh").write_text("#!/bin/sh\nexit 0\n", encoding="utf-8")
    (repo / "MISSION.md").write_text("# Mission\n\n- [ ] alpha\n  verify: sh verify.sh\n- [ ] beta\n",
                                     encoding="utf-8")
    (repo / "check-ran.txt").write_text("", encoding="utf-8")
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
    subprocess.run(["git", "commit", "-q", "-m", "project"], cwd=repo, check=True)
    return repo


def _run(base: Path, mode: str, driver: str) -> tuple[Path, subprocess.CompletedProcess[str]]:
    repo = _repo(base, mode)
    (base / "bin").mkdir(exist_ok=True)
    evil = base / "bin" / "evil"
    evil.write_text(EVIL, encoding="utf-8")
    evil.chmod(0o755)
    cache = base / "home" / ".cache"
    (cache / "dun").mkdir(parents=True, exist_ok=True)
    (cache / "dun" / "planted-target").write_text("dun's\n", encoding="utf-8")
    scenario = write_scenario(base / "fake", [
        {"actions": [{"run": PLANT}, {"tick": "MISSION.md", "box": "alpha"}, {"commit": "Do alpha"}],
         "status": block(task="alpha"), "cost_usd": 0.01, "repeat": True}])
    env = {**os.environ, "HOME": str(base / "home"), "XDG_CACHE_HOME": str(cache),
           "XDG_CONFIG_HOME": str(base / "home" / ".config"), "XDG_STATE_HOME": str(base / "home" / ".state"),
           "OUTSIDE": str(base / "outside"), "EVIL": str(evil), "DUN_FAKE_SCENARIO": str(scenario),
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    argv = ([sys.executable, "-m", "dun", "loop"] if driver == "dun loop"
            else ["bash", str(ROOT / "scripts" / "dun-loop.sh"), "--", *FAKE_COMMAND])
    done = subprocess.run(argv, cwd=repo, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=240)
    assert calls(scenario), done.stderr  # the agent really ran
    return repo, done


def _pwned(base: Path) -> list[str]:
    return sorted(p.name for p in (base / "outside").iterdir() if p.name.startswith("pwned-"))


@needs_bwrap
@pytest.mark.parametrize("driver", ["dun loop", "dun-loop.sh"])
def test_nothing_the_agent_plants_runs_or_is_written_outside(world: Path, driver: str) -> None:  # noqa: F811
    repo, done = _run(world, "bubblewrap", driver)
    assert _pwned(world) == [], done.stderr
    assert (world / "outside" / "canary.txt").read_text() == "keep outside\n"
    config = (repo / ".git" / "config").read_text()
    assert "fsmonitor" not in config and "hooksPath" not in config and "gpg" not in config
    assert not (repo / ".git" / "hooks" / "post-index-change").exists()
    assert not (repo / ".git" / "commondir").exists(), "removed before dun's git ran"
    assert "/.git/commondir: a main repository has none" in done.stderr
    assert json.loads((repo / ".dun" / "config.yaml").read_text())["loop"]["sandbox"] == "bubblewrap"
    assert not (repo / ".dun" / "plugins" / "evil.yaml").exists()
    assert (repo / ".dun" / "logs").is_dir() and not (repo / ".dun" / "logs").is_symlink()
    assert (world / "home" / ".cache" / "dun" / "planted-target").read_text() == "dun's\n"
    assert not (world / "home" / ".config" / "dun" / "plugins" / "evil.yaml").exists()
    assert (repo / "check-ran.txt").read_text() == "ran\n", "the project's check ran, confined"
    assert "Read-only file system" in (repo / ".dun" / "logs" / "iteration-1.err").read_text() or \
        driver == "dun-loop.sh"


def test_without_the_sandbox_the_same_agent_reaches_outside(world: Path) -> None:  # noqa: F811
    _run(world, "off", "dun loop")
    assert _pwned(world), "the plants are real: the test above can fail"


@needs_bwrap
def test_a_mission_made_a_link_out_is_never_written_through(world: Path) -> None:  # noqa: F811
    """The agent replaces MISSION.md by a link to a file outside and deletes a box: dun's task ratchet would
    restore the box through it. dun refuses, naming the link, and the outside file is unchanged."""
    repo = _repo(world, "bubblewrap")
    target = world / "outside" / "canary.txt"
    scenario = write_scenario(world / "fake", [
        {"actions": [{"run": f"cp MISSION.md {target}.tmp 2>/dev/null; rm MISSION.md; ln -s {target} MISSION.md"}],
         "status": block(task="alpha"), "cost_usd": 0.01, "repeat": True}])
    env = {**os.environ, "HOME": str(world / "home"), "DUN_FAKE_SCENARIO": str(scenario)}
    done = subprocess.run([sys.executable, "-m", "dun", "loop"], cwd=repo, env=env, stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=120)
    assert target.read_text() == "keep outside\n", done.stderr
    assert "Traceback" not in done.stderr
