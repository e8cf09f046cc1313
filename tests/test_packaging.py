"""The wheel is what users install: build it, install it into a fresh venv, run it outside the source tree."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest
from conftest import git, write

SOURCE = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(out),
                    str(SOURCE)], check=True, capture_output=True, timeout=300)
    (whl,) = out.glob("dun_loop-*.whl")  # the distribution dun-loop ("dun" on the public index is another project)
    return whl


def test_wheel_carries_plugins_templates_and_console_script(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    for plugin in ("git", "python", "go", "helix", "mission"):
        assert f"dun/_data/plugins/{plugin}.yaml" in names
    assert "dun/_data/templates/MISSION.md" in names
    entry_points = next(n for n in names if n.endswith("entry_points.txt"))
    assert "dun = dun.entry:run" in zipfile.ZipFile(wheel).read(entry_points).decode()


def test_installed_wheel_checks_a_repo_outside_the_source_tree(wheel: Path, tmp_path: Path) -> None:
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    pip = subprocess.run([str(env_dir / "bin" / "python"), "-m", "pip", "install", "-q", str(wheel)],
                         capture_output=True, text=True, timeout=600)
    assert pip.returncode == 0, pip.stderr[-2000:]
    dun = env_dir / "bin" / "dun"
    project = tmp_path / "project"
    project.mkdir()
    git(project, "init", "-q", "-b", "main")
    write(project, "MISSION.md", "# Mission\n- [ ] ship it\n")
    git(project, "add", "-A")
    git(project, "commit", "-qm", "start")
    proc = subprocess.run([str(dun), "check", "--format", "json"], cwd=project, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 1, proc.stderr
    checks = {c["id"]: c for c in json.loads(proc.stdout)["checks"]}
    assert checks["mission-boxes"]["items"] == [{"file": "MISSION.md", "line": 2, "text": "ship it"}]
    listing = subprocess.run([str(dun), "plugins", "list", "--json"], cwd=project, capture_output=True, text=True,
                             timeout=120)
    sources = {m["id"]: m["source"] for m in json.loads(listing.stdout)["manifests"]}
    assert sources["mission"].startswith(str(env_dir)), "built-in manifests must come from the installed wheel"
    init = subprocess.run([str(dun), "init"], cwd=project, capture_output=True, text=True, timeout=120)
    assert init.returncode == 0 and "kept MISSION.md" in init.stdout, init.stderr  # what exists is never overwritten
    assert (project / "MISSION.md").read_text() == "# Mission\n- [ ] ship it\n"
    assert (project / ".dun" / "config.yaml").is_file()  # the templates come from the installed wheel


def test_what_the_ci_workflows_install_resolves_to_this_wheel(wheel: Path, tmp_path: Path) -> None:
    """pip, asked for the workflow's DUN_PIP_SPEC with only this project's wheel to choose from, picks it: the
    name and version the workflow names are the ones pyproject.toml builds."""
    from dun.cli.commands.init import render_workflow
    from dun.config.yamlio import load_yaml_text

    spec = load_yaml_text(render_workflow("github", "0 2 * * *", 5.0, 2), "dun.yml")["env"]["DUN_PIP_SPEC"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")} | {"PIP_CONFIG_FILE": os.devnull}
    # --ignore-installed: the editable dun-loop of this venv would satisfy it without a look at the wheel
    proc = subprocess.run([sys.executable, "-m", "pip", "install", "--dry-run", "--ignore-installed", "--no-deps",
                           "--no-index", "--quiet", "--find-links", str(wheel.parent), "--report", "-", spec],
                          capture_output=True, text=True, timeout=300, env=env, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    (item,) = json.loads(proc.stdout)["install"]
    wheel_name, wheel_version = wheel.name.split("-")[:2]
    assert item["metadata"]["name"] == "dun-loop" and wheel_name == "dun_loop"
    assert item["metadata"]["version"] == wheel_version and item["download_info"]["url"].endswith(wheel.name)
