"""The Kubernetes manifests of `dun init --k8s`: one loop per repository, as a Job (an Indexed Job of one
completion: the pod's index and name are stable) or, with a schedule, a CronJob; its work tree and `.dun/` state on
a PersistentVolumeClaim, so that a pod rescheduled onto another node resumes the run where the last one stopped.

The agent's keys come from the Secret `dun-agent` (every key becomes a variable), the fleet store's address from
the repository's config (`fleet.store`) and its password from the Secret `dun-fleet` (key `password`, optional),
the git credentials for a private repository from the Secret `dun-git` (key `credentials`, a git-credential-store
file, optional). docs/scale-out.md says how a fleet is run, watched and stopped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from dun import __version__
from dun.core.kinds import ExitCode

MOUNT = "/work"  # the volume: the clone in /work/repo, with its .dun/
AGENT_SECRET, FLEET_SECRET, GIT_SECRET = "dun-agent", "dun-fleet", "dun-git"
# The loop stopped itself with work remaining, on a bad config, or unconfirmed: a new pod would change nothing
FINAL_EXIT_CODES = [int(ExitCode.WORK_REMAINS), int(ExitCode.USAGE), int(ExitCode.UNCONFIRMED)]

# Clone once onto the volume (a rescheduled pod finds it there), work on the loop branch, run the loop, and push the
# branch when git credentials were given. The loop's exit code is the pod's. The pod is a throwaway machine whose
# commands `dun guard` screens: the agent runs without permission prompts (--skip-permissions), which headless
# agents need to run tests and commit.
SCRIPT = """set -u
if [ -r /etc/dun-git/credentials ]; then
  git config --global credential.helper 'store --file=/etc/dun-git/credentials'
fi
if [ ! -d repo/.git ]; then
  git clone --quiet "$DUN_REPO_URL" repo.tmp && mv repo.tmp repo || exit 3
fi
cd repo
git switch --quiet "$DUN_BRANCH" 2>/dev/null || git switch --quiet -c "$DUN_BRANCH" || exit 3
dun loop --skip-permissions --max-budget-usd "$DUN_BUDGET_USD"
code=$?
if [ -r /etc/dun-git/credentials ]; then
  git push --quiet origin "HEAD:refs/heads/$DUN_BRANCH" || echo "dun-k8s: push of $DUN_BRANCH failed" >&2
fi
exit $code
"""


@dataclass(frozen=True)
class K8sOptions:
    repository: str  # owner/name or a directory name: names the resources
    repo_url: str  # what the pod clones
    branch: str  # the branch the loop works on
    image: str
    budget_usd: float
    store: str  # fleet.store from the config ("local": none given to the pod)
    schedule: str | None = None  # a CronJob on this schedule, else a Job
    storage: str = "10Gi"
    cpu: str = "1"
    memory: str = "2Gi"


def default_image() -> str:
    return f"dun:{__version__}"


def resource_name(repository: str) -> str:
    """`dun-NAME`: a DNS label (lowercase, digits and dashes, at most 52 characters: a CronJob's limit)."""
    slug = re.sub(r"[^a-z0-9]+", "-", repository.rsplit("/", 1)[-1].lower()).strip("-")[:44] or "repo"
    return f"dun-{slug}"


def _labels(name: str, repository: str) -> dict[str, str]:
    value = re.sub(r"[^A-Za-z0-9_.-]+", "_", repository).strip("_.-")[:63] or "repo"
    return {"app.kubernetes.io/name": "dun", "app.kubernetes.io/instance": name, "dun/repository": value}


def _env(opts: K8sOptions) -> list[dict[str, object]]:
    env: list[dict[str, object]] = [{"name": "DUN_REPO_URL", "value": opts.repo_url},
                                 {"name": "DUN_BRANCH", "value": opts.branch},
                                 {"name": "DUN_BUDGET_USD", "value": f"{opts.budget_usd:g}"}]
    if opts.store != "local":
        env += [{"name": "DUN_FLEET_STORE", "value": opts.store},
                {"name": "DUN_FLEET_PASSWORD",
                 "valueFrom": {"secretKeyRef": {"name": FLEET_SECRET, "key": "password", "optional": True}}}]
    return env


def pod_spec(opts: K8sOptions, name: str) -> dict[str, object]:
    container = {
        "name": "loop", "image": opts.image, "imagePullPolicy": "IfNotPresent",
        "command": ["/bin/sh", "-c", SCRIPT], "workingDir": MOUNT, "env": _env(opts),
        "envFrom": [{"secretRef": {"name": AGENT_SECRET}}],
        "resources": {"requests": {"cpu": opts.cpu, "memory": opts.memory}, "limits": {"memory": opts.memory}},
        "volumeMounts": [{"name": "state", "mountPath": MOUNT},
                         {"name": "git", "mountPath": "/etc/dun-git", "readOnly": True}],
    }
    return {
        "restartPolicy": "Never",  # a failed pod is replaced by a new one (podFailurePolicy decides when)
        "securityContext": {"runAsUser": 1000, "runAsGroup": 1000, "fsGroup": 1000},
        "terminationGracePeriodSeconds": 60,  # SIGTERM: the loop stops its agent and saves its state
        "containers": [container],
        "volumes": [{"name": "state", "persistentVolumeClaim": {"claimName": f"{name}-state"}},
                    {"name": "git", "secret": {"secretName": GIT_SECRET, "optional": True}}],
    }


def job_spec(opts: K8sOptions, name: str, labels: dict[str, str]) -> dict[str, Any]:
    return {
        "completionMode": "Indexed", "completions": 1, "parallelism": 1,
        "backoffLimit": 4,  # crashes (exit 3, out of memory) before the Job fails
        "podFailurePolicy": {"rules": [
            {"action": "FailJob", "onExitCodes": {"containerName": "loop", "operator": "In",
                                                  "values": FINAL_EXIT_CODES}},
            # drained, evicted, preempted: a new pod resumes from the volume, and it is not counted as a failure
            {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget", "status": "True"}]},
        ]},
        "template": {"metadata": {"labels": labels}, "spec": pod_spec(opts, name)},
    }


def manifests(opts: K8sOptions) -> dict[str, dict[str, Any]]:
    """File name -> manifest."""
    name = resource_name(opts.repository)
    labels = _labels(name, opts.repository)
    pvc = {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": f"{name}-state",
                                                                            "labels": labels},
           "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": opts.storage}}}}
    out = {f"{name}-state.yaml": pvc}
    if opts.schedule is None:
        out[f"{name}-job.yaml"] = {"apiVersion": "batch/v1", "kind": "Job",
                                   "metadata": {"name": name, "labels": labels},
                                   "spec": job_spec(opts, name, labels)}
    else:
        out[f"{name}-cronjob.yaml"] = {
            "apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": name, "labels": labels},
            "spec": {"schedule": opts.schedule, "concurrencyPolicy": "Forbid",  # one loop per work tree, ever
                     "successfulJobsHistoryLimit": 3, "failedJobsHistoryLimit": 3,
                     "jobTemplate": {"metadata": {"labels": labels}, "spec": job_spec(opts, name, labels)}}}
    return out


HEADER = """# Written by `dun init --k8s` (dun {version}); docs/scale-out.md says how to run, watch and stop it.
# Secrets it reads: {agent} (the agent's API keys, every key a variable), {fleet} (key `password`: the fleet
# store's, optional), {git} (key `credentials`: a git-credential-store file for a private repository, optional).
"""


def render(manifest: dict[str, object]) -> str:
    """YAML text of one manifest, with the header."""
    import io

    from ruamel.yaml import YAML
    from ruamel.yaml.scalarstring import LiteralScalarString

    def literal(value: object) -> object:  # the script as a block, readable in the file
        if isinstance(value, dict):
            return {k: literal(v) for k, v in value.items()}
        if isinstance(value, list):
            return [literal(v) for v in value]
        return LiteralScalarString(value) if isinstance(value, str) and "\n" in value else value

    yaml = YAML()
    yaml.default_flow_style = False
    yaml.width = 120
    buffer = io.StringIO()
    yaml.dump(literal(manifest), buffer)
    return HEADER.format(version=__version__, agent=AGENT_SECRET, fleet=FLEET_SECRET, git=GIT_SECRET) + \
        buffer.getvalue()
