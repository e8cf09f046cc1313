"""`dun init --k8s`: the Kubernetes manifests of one loop for this repository, in `k8s/` (dun/service/k8s.py)."""

from __future__ import annotations

import sys
from urllib.parse import urlsplit

from dun.cli.commands.init import check_cron
from dun.config.loader import dun_config
from dun.core.atomic import write_text_atomic
from dun.core.errors import UsageError
from dun.core.git import git
from dun.core.kinds import ExitCode
from dun.fleet import identity
from dun.service.k8s import AGENT_SECRET, FLEET_SECRET, GIT_SECRET, K8sOptions, default_image, manifests, render
from dun.store.layout import find_repo

DIRECTORY = "k8s"
BRANCH = "dun/loop"


def run_init_k8s(path: str | None, force: bool, schedule: str | None, budget: float, image: str | None) -> int:
    repo = find_repo(path)
    if not repo.is_git:
        raise UsageError(f"{repo.root} is not a git repository; the pod clones it from its origin remote")
    if budget <= 0:
        raise UsageError("--budget must be above 0: an unattended loop needs a spending cap")
    proc = git(repo.root, "config", "--get", "remote.origin.url", check=False)
    url = proc.stdout.decode("utf-8", "replace").strip()
    if not url:
        raise UsageError("no origin remote: the pod clones the repository from it (git remote add origin URL)")
    if urlsplit(url).password or (urlsplit(url).username and "://" in url and urlsplit(url).scheme != "ssh"):
        raise UsageError("the origin URL holds credentials: give them in the dun-git Secret instead "
                         "(docs/scale-out.md)")
    store = dun_config(repo.root).settings.fleet.store
    opts = K8sOptions(repository=identity.repository(repo.root), repo_url=url, branch=BRANCH,
                      image=image or default_image(), budget_usd=budget, store=store,
                      schedule=check_cron(schedule) if schedule is not None else None)
    written, kept = [], []
    for name, manifest in manifests(opts).items():
        dest = repo.root / DIRECTORY / name
        if dest.exists() and not force:
            kept.append(f"{DIRECTORY}/{name}")
            continue
        write_text_atomic(dest, render(manifest))
        written.append(f"{DIRECTORY}/{name}")
    for rel in written:
        sys.stdout.write(f"wrote {rel}\n")
    if kept:
        sys.stdout.write(f"kept {', '.join(kept)} (--force replaces them)\n")
    if url.startswith(("/", "file:", ".")):
        sys.stdout.write(f"note: origin is {url}, which a pod cannot reach: set DUN_REPO_URL in the manifest\n")
    if store == "local":
        sys.stdout.write("note: fleet.store is local: each pod keeps its own limits; set fleet.store to a "
                         "redis:// URL to share one window and budget across the fleet\n")
    sys.stdout.write(
        f"next: build the image ({opts.image}) from dun's Containerfile, create the Secrets "
        f"(kubectl create secret generic {AGENT_SECRET} --from-literal=ANTHROPIC_API_KEY=...; optional: "
        f"{FLEET_SECRET} with key password, {GIT_SECRET} with key credentials), then kubectl apply -f {DIRECTORY}/\n")
    return ExitCode.OK
