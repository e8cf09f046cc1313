"""`dun init --k8s`: the manifests validate against the Kubernetes schemas of two versions (kubernetes-validate,
offline), carry what a loop on a cluster needs, and the pod's script clones, resumes and returns the loop's exit
code (run here against a real bare repository, a recording `dun` on PATH)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
from conftest import git, write
from ruamel.yaml import YAML
from service_support import invoke

from dun import __version__
from dun.service.k8s import SCRIPT

VERSIONS = ("1.30.0", "1.34.0")  # two Kubernetes releases the manifests must both be valid for


def load(path: Path) -> dict[str, Any]:
    data = YAML(typ="safe").load(path.read_text())
    assert isinstance(data, dict)
    return data


def validate(data: dict[str, Any]) -> None:
    for version in VERSIONS:
        kubernetes_validate.validate(data, version, strict=True)  # raises ValidationError naming the field


@pytest.fixture
def origin(repo: Path) -> Path:
    git(repo, "remote", "add", "origin", "https://git.example/acme/widgets.git")
    write(repo, ".dun/config.yaml", "fleet:\n  store: redis://fleet.example:6379/2\n")
    return repo


def test_a_job_with_its_state_on_a_volume_and_the_fleet_store_from_config(origin: Path) -> None:
    code, out, err = invoke(["init", str(origin), "--k8s", "--budget", "12"])
    assert code == 0, err
    assert "wrote k8s/dun-widgets-state.yaml\nwrote k8s/dun-widgets-job.yaml\n" in out
    pvc, job = load(origin / "k8s/dun-widgets-state.yaml"), load(origin / "k8s/dun-widgets-job.yaml")
    validate(pvc)
    validate(job)
    assert (job["kind"], job["spec"]["completionMode"], job["spec"]["completions"]) == ("Job", "Indexed", 1)
    pod = job["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    assert container["image"] == f"dun:{__version__}"
    assert container["envFrom"] == [{"secretRef": {"name": "dun-agent"}}]  # the agent's key from a Secret
    env = {e["name"]: e for e in container["env"]}
    assert env["DUN_FLEET_STORE"]["value"] == "redis://fleet.example:6379/2"
    assert env["DUN_FLEET_PASSWORD"]["valueFrom"]["secretKeyRef"] == {"name": "dun-fleet", "key": "password",
                                                                      "optional": True}
    assert (env["DUN_REPO_URL"]["value"], env["DUN_BUDGET_USD"]["value"]) == \
        ("https://git.example/acme/widgets.git", "12")
    assert container["resources"]["requests"] == {"cpu": "1", "memory": "2Gi"}
    (volume,) = [v for v in pod["volumes"] if "persistentVolumeClaim" in v]
    assert volume["persistentVolumeClaim"]["claimName"] == pvc["metadata"]["name"]
    assert {"name": volume["name"], "mountPath": "/work"} in container["volumeMounts"]
    rules = job["spec"]["podFailurePolicy"]["rules"]
    assert rules[0]["onExitCodes"]["values"] == [1, 2, 5]  # the loop's own stops are final, a crash is retried


def test_a_cronjob_per_schedule(origin: Path) -> None:
    code, _, err = invoke(["init", str(origin), "--k8s", "--schedule", "0 2 * * *", "--image", "reg.example/dun:1"])
    assert code == 0, err
    cron = load(origin / "k8s/dun-widgets-cronjob.yaml")
    validate(cron)
    assert (cron["spec"]["schedule"], cron["spec"]["concurrencyPolicy"]) == ("0 2 * * *", "Forbid")
    pod = cron["spec"]["jobTemplate"]["spec"]["template"]["spec"]
    assert pod["containers"][0]["image"] == "reg.example/dun:1"
    assert not (origin / "k8s/dun-widgets-job.yaml").exists()


def test_kept_unless_forced_and_bad_input_is_one_line(origin: Path, repo: Path) -> None:
    assert invoke(["init", str(origin), "--k8s"])[0] == 0
    code, out, _ = invoke(["init", str(origin), "--k8s"])
    assert code == 0 and "kept k8s/dun-widgets-state.yaml, k8s/dun-widgets-job.yaml (--force replaces them)" in out
    assert invoke(["init", str(origin), "--k8s", "--schedule", "nightly"])[0] == 2
    assert invoke(["init", str(origin), "--k8s", "--ci", "github"])[0] == 2
    assert invoke(["init", str(origin), "--image", "x"])[0] == 2
    git(repo, "remote", "set-url", "origin", "https://user:tok3n@git.example/acme/widgets.git")
    code, _, err = invoke(["init", str(origin), "--k8s", "--force"])
    assert code == 2 and "holds credentials" in err and "tok3n" not in err


def test_no_origin_no_manifests(repo: Path) -> None:
    code, _, err = invoke(["init", str(repo), "--k8s"])
    assert code == 2 and "no origin remote" in err
    assert not (repo / "k8s").exists()


def test_the_pod_script_clones_once_resumes_and_returns_the_loops_code(repo: Path, tmp_path: Path) -> None:
    bare = tmp_path / "origin.git"
    git(tmp_path, "clone", "-q", "--bare", str(repo), str(bare))
    bindir = tmp_path / "bin"
    write(bindir, "dun", '#!/bin/sh\necho "$PWD $(git branch --show-current) $*" >> "$DUN_TEST_LOG"\nexit 5\n')
    os.chmod(bindir / "dun", 0o755)
    volume, log = tmp_path / "volume", tmp_path / "dun.log"
    volume.mkdir()
    env = {**os.environ, "PATH": f"{bindir}:{os.environ['PATH']}", "DUN_REPO_URL": str(bare),
           "DUN_BRANCH": "dun/loop", "DUN_BUDGET_USD": "3", "DUN_TEST_LOG": str(log)}
    for _ in range(2):  # the second pod finds the clone on the volume
        proc = subprocess.run(["/bin/sh", "-c", SCRIPT], cwd=volume, env=env, capture_output=True, text=True,
                              timeout=60)
        assert proc.returncode == 5, proc.stderr
    command = "loop --skip-permissions --max-budget-usd 3"
    assert log.read_text().splitlines() == [f"{volume / 'repo'} dun/loop {command}"] * 2
    assert sorted(p.name for p in volume.iterdir()) == ["repo"]
