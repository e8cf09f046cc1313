"""What the posture counts as this machine, and as the agent's own (posture.py denies the rest of what changes state
elsewhere).

This machine: a server on localhost, a unix socket, a one-word compose service (hosts.py), an emulator (the
`*_EMULATOR_HOST` variables, Firebase's `demo-*` projects), a local cluster's context (`kind-*`, `k3d-*`, `minikube`,
`docker-desktop`, ...), LocalStack (`awslocal`, `tflocal`, an endpoint on localhost), and a data file under the
temporary directory (`duckdb /tmp/scratch.duckdb`).

The agent's own, two ways, both decided inside one command line and nothing else:
- a resource the same command made first (`kind create cluster --name t && ... && kind delete cluster --name t`,
  `docker run --name x ... ; docker rm -f x`, `compose -p x up ... down -v`); `made` lives for one decision only.
  Nothing the agent can write is read as a record of what it made in earlier calls: the hook runs with the agent's
  own rights (inside its sandbox), so any file it kept could be forged by the agent;
- a local engine's resource whose name says it is thrown away (`api-test-db`, `agent-e2e`, `ci-runner-tmp`,
  `docker-compose.test.yml`), as testdb.py treats a database named for tests. A test harness's own instances
  (`molecule destroy`, `kitchen destroy`) and simulators (`xcrun simctl erase`) are the same.
Bulk forms (`--all`, `$(docker ps -q)`, no name at all where the tool then takes its default) are never the agent's
own.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping

from dun.guard.hosts import host_of
from dun.guard.remotestate import DUMPERS, KV_CLIENTS, SQL_CLIENTS

# The rules a local or own target is free of: they guard shared or lasting resources, which these are not
FREE_RULES = frozenset({"tool.destroy", "container.destroy", "cluster.destroy", "infra.destroy", "cloud.delete",
                        "hosted.delete", "sql.drop", "db.drop", "db.delete-all", "remote.posture", "remote.write",
                        "http.destroy"})
THROWAWAY = re.compile(r"(?:^|[-_.:/])(?:tests?|testing|e2e|ci|tmp|temp|scratch|throwaway|ephemeral|sandbox|fixtures?"
                       r"|spec)(?:$|[-_.:/\d])", re.I)
_LOCAL_CONTEXT = re.compile(r"^(?:kind-.+|k3d-.+|minikube|docker-desktop|desktop-linux|rancher-desktop|orbstack"
                            r"|colima(?:-.+)?|microk8s|local|localstack|emulator|default-local|kind)$")
_CONTEXT_OPTIONS = frozenset({"--context", "--kube-context", "--kubecontext", "-c", "--profile", "-p"})
LOCAL_WRAPPERS = frozenset({"awslocal", "tflocal", "cdklocal", "samlocal", "azlocal", "pulumilocal", "sls-local"})
# Variables naming the server a tool talks to, and the ones that point a cloud SDK at an emulator
_ADDR_VARS = frozenset({"VAULT_ADDR", "CONSUL_HTTP_ADDR", "NOMAD_ADDR", "MLFLOW_TRACKING_URI", "AWS_ENDPOINT_URL",
                        "DOCKER_HOST", "CONTAINER_HOST", "ALERTMANAGER_URL", "KAFKA_BOOTSTRAP_SERVERS",
                        "ELASTICSEARCH_URL", "OPENSEARCH_URL", "PREFECT_API_URL", "DAGSTER_HOST", "AIRFLOW_URL",
                        "DD_SITE", "GRAFANA_URL", "SENTRY_URL", "WANDB_BASE_URL", "HF_ENDPOINT", "RABBITMQ_URL",
                        "MINIO_ENDPOINT", "S3_ENDPOINT", "TF_VAR_endpoint"})
_EMULATOR = re.compile(r"^[A-Z_]*EMULATOR_HOST$")
_ENDPOINT_OPTIONS = frozenset({"--endpoint-url", "--endpoint", "--url", "--addr", "--address", "-address",
                               "--alertmanager.url", "--host", "--server", "--bootstrap-server",
                               "--bootstrap-servers", "--tracking-uri", "--backend-store-uri", "--api-url",
                               "--broker", "--brokers", "--zookeeper", "--uri"})
_LOOPBACK = re.compile(r"^(?:localhost|.*\.localhost|127(?:\.\d+){3}|::1|\[::1\]|host\.docker\.internal"
                       r"|host\.containers\.internal|ip6-localhost)$", re.I)
# A server on this machine may still hold a developer's data: only scratch targets (a file under the temporary
# directory, an emulator, an emulator-only project) are free of the database rules; those keep to test databases
DATA_RULES = frozenset({"sql.drop", "db.drop", "db.delete-all"})
MACHINE_FREE = FREE_RULES - DATA_RULES


def frees(why: str) -> frozenset[str]:
    """The rules a local target's reason frees."""
    return FREE_RULES if any(k in why for k in ("scratch", "emulator")) else MACHINE_FREE


# Clients whose own rules already tell this machine's servers from others (a local search node's delete_by_query
# of everything is still denied): the posture frees nothing for them
_OWN_LOCAL_RULES = frozenset({"curl", "wget", "http", "https", "xh", "xhs", "httpie", "curlie", "mongorestore",
                              *SQL_CLIENTS, *KV_CLIENTS, *DUMPERS}) - {"duckdb"}
_DATA_FILE = re.compile(r"(?:data source|datasource|filename|dbname)\s*=\s*(/[^;'\" ]+)", re.I)
_FILE_DB = frozenset({"duckdb", "sqlite3", "sqlite", "litecli", "security"})  # their operands are files


def _values(words: list[str], options: frozenset[str]) -> list[str]:
    out = []
    for i, word in enumerate(words):
        flag, eq, value = word.partition("=")
        if flag in options and (eq or i + 1 < len(words)):
            out.append(value if eq else words[i + 1])
    return out


def local_value(value: str) -> bool:
    """This machine itself: loopback, a unix socket, a file (`sqlite:///...`); not a one-word service name, which
    may be anywhere its network says."""
    if value.startswith(("/", "unix:", "sqlite:", "file:")):
        return True
    host = host_of(value) or (value.split(",", 1)[0].rsplit(":", 1)[0] if re.fullmatch(r"[\w.-]+(?::\d+)?(?:,.*)?",
                                                                                        value) else "")
    return bool(host) and bool(_LOOPBACK.match(host))


def local_target(prog: str, words: list[str], env: Mapping[str, str | None], temp: tuple[str, ...]) -> str | None:
    """Why this command's target is this machine, or None when nothing says so."""
    if prog in LOCAL_WRAPPERS:
        return f"{prog} talks to LocalStack on this machine"
    if prog in _OWN_LOCAL_RULES:
        return None
    if "--local" in words:
        return "--local: the tool's own local instance"  # supabase db push --local
    for name, value in env.items():
        if value and (_EMULATOR.match(name) or name in _ADDR_VARS or name.startswith("AWS_ENDPOINT_URL")) and \
                local_value(value):
            return f"{name}={value} is {'an emulator on ' if _EMULATOR.match(name) else ''}this machine"
    if (home := env.get("AIRFLOW_HOME")) and home.startswith(tuple(t + "/" for t in temp)) and prog == "airflow":
        return f"AIRFLOW_HOME={home} is a scratch installation"
    named = [h for w in words if "://" in w and (h := host_of(w))]
    if named and all(_LOOPBACK.match(h) for h in named) and prog not in ("curl", "wget"):
        return f"{named[0]} is this machine"  # mc alias set local http://localhost:9000
    endpoints = _values(words, _ENDPOINT_OPTIONS)
    if endpoints and all(local_value(v) for v in endpoints):
        return f"{endpoints[0]} is this machine"
    projects = _values(words, frozenset({"--project", "-P", "--projectId"}))
    if projects and all(p.startswith("demo-") for p in projects):
        return f"{projects[0]} is an emulator-only project"
    contexts = _values(words, _CONTEXT_OPTIONS - {"--profile", "-p"}) or _values(words, _CONTEXT_OPTIONS)
    if contexts and all(_LOCAL_CONTEXT.match(c) for c in contexts):  # skaffold -p dev --kube-context kind-x
        return f"{contexts[0]} is a cluster on this machine"
    files = [m.group(1) for w in words for m in _DATA_FILE.finditer(w)]
    files += [w for w in words[:3] if prog in _FILE_DB and w.startswith("/")]
    if files and all(posixpath.normpath(f).startswith(tuple(t + "/" for t in temp)) for f in files):
        return f"{files[0]} is a scratch file on this machine"
    return None


# -- the agent's own ------------------------------------------------------------------------------------------------
_DOCKER = frozenset({"docker", "podman", "nerdctl", "docker-compose", "podman-compose", "finch"})
# Engines whose resources live on this machine (unless pointed elsewhere: posture.py checks the target first)
LOCAL_ENGINES = _DOCKER | frozenset({"kind", "k3d", "minikube", "multipass", "lxc", "incus", "virsh", "vagrant",
                                     "limactl", "colima", "vboxmanage", "VBoxManage", "prlctl", "utmctl", "tart"})
_HARNESSES = frozenset({"molecule", "kitchen"})  # test harnesses: `destroy` removes only the instances they made
_NAME_OPTIONS = frozenset({"--name", "-n", "--project-name", "-p", "--profile", "--cluster", "--cluster-name"})
_CREATE = re.compile(r"^(?:create|run|launch|init|new|start|up|mb|add|define|make)(?:-\w+)?$")
_REMOVE = frozenset({"rm", "delete", "destroy", "remove", "down", "stop", "kill", "undefine", "purge", "rmi", "erase",
                     "del", "rb", "delete-keychain"})
_NOUNS = frozenset({"cluster", "clusters", "container", "volume", "network", "pod", "machine", "image", "repo"})
# A container or pod named for development is a local instance, had back by running it again (its volumes are not:
# `docker volume rm app-dev_data` and `compose down -v` keep to the names above)
_INSTANCES = frozenset({"docker", "docker-pod"})
_DEV = re.compile(r"(?:^|[-_.])dev(?:$|[-_.\d])", re.I)
# Containers and clusters on the local engine, removed by name: this machine's, had back by running them again.
# Volumes (`rm -v`, `compose down -v`, `volume rm`) keep to throwaway names: they may hold a developer's data
_CLUSTERS = frozenset({"kind", "k3d", "minikube"})
_CONTAINER_VERBS = frozenset({"rm", "stop", "kill"})
_PLAIN_NAME = re.compile(r"[A-Za-z0-9][\w.-]*")
_PROD = re.compile(r"(?:^|[-_.])(?:prod|production|live)(?:$|[-_.\d])", re.I)


def _machine_resource(fam: str, words: list[str], found: list[str]) -> bool:
    """Containers (docker rm -f agent-pg, docker container stop x) and local clusters (kind delete cluster), named
    plainly and not for production; not swarm services or stacks, which span machines, nor anonymous volumes."""
    if not all(_PLAIN_NAME.fullmatch(n) and not _PROD.search(n) for n in found):
        return False
    if fam in _CLUSTERS:
        return True
    lead = words[1:2] if words[:1] == ["container"] else words[:1]
    return fam == "docker" and bool(_CONTAINER_VERBS.intersection(lead)) and not any(
        w == "--volumes" or (w.startswith("-") and not w.startswith("--") and "v" in w) for w in words)


_BULK = frozenset({"--all", "-a", "--all-namespaces", "-A", "--prune"})


def engine_elsewhere(env: Mapping[str, str | None]) -> bool:
    """The container engine is on another machine: DOCKER_HOST or CONTAINER_HOST not local, a remote DOCKER_CONTEXT."""
    hosts = [v for name in ("DOCKER_HOST", "CONTAINER_HOST") if (v := env.get(name))]
    context = env.get("DOCKER_CONTEXT")
    return any(not local_value(h) for h in hosts) or bool(context and context != "default"
                                                            and not _LOCAL_CONTEXT.match(context))


def engine_named_elsewhere(prog: str, words: list[str]) -> bool:
    """docker --context prod, podman --connection prod: the engine a command names is not this machine's."""
    if prog not in _DOCKER:
        return False
    named = _values(words, frozenset({"--context", "--connection"}))
    named += _values(words, frozenset({"-c"})) if prog == "docker" and words[:1] == ["-c"] else []
    return any(n != "default" and not _LOCAL_CONTEXT.match(n) for n in named)


def named_local(words: list[str]) -> bool:
    """Every environment, context or profile the words name is a local one (`-e local`, `--context kind-dev`)."""
    named = _values(words, frozenset({"-e", "--env", "--environment", "--context", "--kube-context", "--profile"}))
    return bool(named) and all(_LOCAL_CONTEXT.match(n) for n in named)


def family(prog: str, words: list[str]) -> str:
    """Where names live: docker's containers, volumes, pods, networks and compose projects are apart."""
    if prog in _DOCKER:
        lead = [w for w in words[:3] if not w.startswith("-")]
        if "compose" in words[:4] or prog.endswith("-compose"):
            return "compose"
        for noun in ("volume", "network", "pod", "image", "machine"):
            if noun in lead:
                return f"docker-{noun}"
        return "docker"
    return {"incus": "lxc", "k3d": "k3d"}.get(prog, prog)


def names(prog: str, words: list[str], creating: bool) -> list[str]:
    """The resources a create or destroy command names: its name options and the operands after its verb."""
    if prog == "kind":
        given = _values(words, frozenset({"--name", "-n"}))
        return given or ["kind"]  # kind's default cluster
    if prog == "minikube":
        return _values(words, frozenset({"-p", "--profile"})) or ["minikube"]
    given = _values(words, _NAME_OPTIONS if prog not in _DOCKER or "compose" in words[:4] or creating
                    else frozenset({"--name"}))
    if "compose" in words[:4] or prog.endswith("-compose"):
        return given  # the project's name: a compose file named for tests may still hold a developer's data
    if creating:
        if prog in _DOCKER and words[:1] in (["run"], ["create"]):
            volumes = [v.split(":", 1)[0] for v in _values(words, frozenset({"-v", "--volume"}))]
            return given + [f"docker-volume:{v}" for v in volumes if v and not v.startswith(("/", ".", "~", "$"))]
        verb = next((i for i, w in enumerate(words) if _CREATE.match(w)), None)
        rest = [w for w in words[verb + 1:] if not w.startswith("-")] if verb is not None else []
        if prog in ("lxc", "incus", "multipass") and len(rest) >= 2 and words[verb or 0] in ("launch", "init"):
            rest = rest[1:]  # lxc launch IMAGE NAME
        return given if given else given + rest[:1]
    verb = next((i for i, w in enumerate(words) if w in _REMOVE), None)
    values = _NAME_OPTIONS | {"-t", "--time", "--timeout", "-s", "--signal"}
    operands = [w for i, w in enumerate(words) if i > (verb if verb is not None else -1) and not w.startswith("-")
                and w not in _NOUNS and not (i and words[i - 1] in values)]
    return given + operands


def remember(prog: str, words: list[str], made: set[str]) -> None:
    """Record what a command makes, for the commands after it in the same line."""
    lead = [w for w in words[:4] if not w.startswith("-")]
    if not any(_CREATE.match(w) for w in lead):
        return
    fam = family(prog, words)
    for name in names(prog, words, True):
        made.add(name if name.startswith("docker-volume:") else f"{fam}:{name}")


def own(prog: str, words: list[str], made: set[str]) -> str | None:
    """Why the resources this command removes are the agent's own, or None."""
    if prog in _HARNESSES:
        return f"{prog} removes only the test instances it made"
    if prog == "xcrun" and words[:1] == ["simctl"]:
        return "a simulator is a test device on this machine"
    if _BULK.intersection(words) or any("$(" in w or "`" in w or "*" in w for w in words):
        return None
    fam = family(prog, words)
    found = names(prog, words, False)
    files = _values(words, frozenset({"-f", "--file"})) if fam == "compose" else []
    if "down" in words and files and all(THROWAWAY.search(n) for n in [*map(posixpath.basename, files), *found]):
        return f"{files[0]} is a throwaway environment"  # compose -f docker-compose.test.yml down -v
    if not found:
        return None
    if all(f"{fam}:{n}" in made or (fam == "docker-volume" and f"docker-volume:{n}" in made) for n in found):
        return f"{found[0]} was made earlier in this command"
    if prog in LOCAL_ENGINES and _machine_resource(fam, words, found):
        return f"{found[0]} is a container or cluster of this machine's engine"  # named one by one, never in bulk
    if prog in LOCAL_ENGINES and all(THROWAWAY.search(n) or (fam in _INSTANCES and _DEV.search(n)) for n in found):
        return f"{found[0]} is named as a throwaway"
    return None
