"""The posture: a call that changes state somewhere other than this machine is denied unless its target is local or a
resource the same command made (posture_own.py), whether or not a rule names the program.

It is judged by shape, from tables: a verb that changes state (apply, deploy, promote, push, send, trigger, delete,
revoke, disable, silence, switch, scale, restart, set, ...; the first verb among the leading words decides, so
`amtool silence query` reads) together with a target that is not this machine: a program whose purpose is remote
(`REMOTE`: platform, fleet, registry, paging and messaging CLIs), a host or URL, or an option naming where it goes
(`--context`, `--profile`, `--project`, `--env`, `--stage`, `--target`, `-i INVENTORY`). Reads (`list`, `get`,
`show`, `status`, `logs`, `plan`, `diff`, `preview`, ...) and rehearsals (`--dry-run`, `--check`, `--what-if`,
`--readonly`, `--validate-only`, `-p never`) stay free, and so does everything aimed at this machine. Programs whose
own rules split the everyday from the dangerous (git, kubectl, helm, docker, the cloud CLIs, package managers, HTTP
clients, database shells) are left to them but for the classes here (silences, pages, messages, devices).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Mapping

from dun.guard import posture_own
from dun.guard.context import Val
from dun.guard.effects import Facts, program_name
from dun.guard.hosts import remote_hosts
from dun.guard.longtail import nonprod_target, prod_target
from dun.guard.posture_http import ops_url
from dun.guard.posture_readers import CONSOLE_REMOTE, DEVICE, HOST, MONITOR_AGENTS, RUN_REMOTE, WRITE_ALWAYS
from dun.guard.posture_tables import (
    CLOUD,
    CLOUD_ALWAYS,
    DRY,
    DRY_BY_PROGRAM,
    LIVE_ONLY,
    LOCAL_TOOLS,
    MESSAGE,
    OPS_HTTP,
    READ,
    REMOTE,
    STRONG,
    TARGET_OPTIONS,
    VERB_OVERRIDE,
    WRITE,
    alerting_off,
)
from dun.guard.remotestate import _named as left_to_rules
from dun.guard.rules_generic import DEVICE_TOOLS, PACKAGE_TOOLS, TEXT_AND_OWN

FREE_ON_READ = frozenset({"publish.release", "tool.destroy", "remote.posture"})
_PUBLISHING = frozenset({"--push", "--publish", "--upload", "--auto-submit", "--deploy", "--release"})
_LOCAL_TRANSPORTS = ("oci:", "oci-archive:", "docker-archive:", "dir:", "containers-storage:", "docker-daemon:")
_DESTROY_ENDS = ("delete", "destroy", "purge", "remove")  # cli53 rrdelete, zkCli deleteall
_CAMEL = re.compile(r"(?<=[a-z])(?=[A-Z])")


_FILE = re.compile(r"\.(?:ya?ml|json|toml|tf|tfvars|hcl|py|sh|js|ts|txt|cfg|ini|xml|csv|sql|db|apk|aab|ipa|zip|tgz|gz"
                   r"|tar|whl|md|conf|env|lock|plist|keychain)$", re.I)


def _parts(word: str) -> list[str]:
    """A leading word's parts in the order they decide: `delete-cache` (verb first), `hosting:channel:deploy` and
    salt's `system.reboot` (verb last)."""
    parts = [p for p in re.split(r"[-_:.]", _CAMEL.sub("-", word).lower()) if p]
    return parts[::-1] if ":" in word or "." in word else parts


def decisive_verb(prog: str, words: list[str]) -> tuple[str, str] | None:
    """("read" or "write", the word) for the first leading word that is a verb, or None."""
    override = VERB_OVERRIDE.get(prog, {})
    for word in words[1:6] if prog in CLOUD else words[:5]:  # aws logs put-retention-policy: `logs` is the service
        if word.startswith("-") or "/" in word or "=" in word or " " in word or len(word) > 40 or _FILE.search(word):
            continue
        if "cache" in word.lower():
            return "read", word  # huggingface-cli delete-cache, npm cache clean: this machine's caches
        for part in _parts(word):
            kind = override.get(part, "read" if part in READ else "write" if part in WRITE or part.endswith(
                _DESTROY_ENDS) else "")
            if kind:
                return kind, word
    return None


def _dry(prog: str, words: list[str]) -> bool:
    pairs = {f"{a} {b}" for a, b in itertools.pairwise(words)}
    return bool(DRY.intersection(words) or DRY.intersection(pairs) or set(DRY_BY_PROGRAM.get(prog, ())) & set(words)
                or any(w.startswith(("--dry-run", "--check", "--validate_only", "--validate-only", "--readonly"))
                       and not w.endswith(("=false", "=none", "=0", "=no")) for w in words))


def _target(prog: str, words: list[str]) -> str | None:
    """What non-local place the words name: a host, or an option naming a remote context, project or inventory."""
    urls = [v.removeprefix("jdbc:") for w in words if "://" in w
            for v in [w.split("=", 1)[1] if w.startswith("-") and "=" in w else w]]  # -url=jdbc:postgresql://...
    if hosts := remote_hosts(words + urls):
        return hosts[0]
    for i, word in enumerate(words):
        flag, eq, value = word.partition("=")
        if flag in TARGET_OPTIONS and (eq or i + 1 < len(words)):
            value = value if eq else words[i + 1]
            if value and not value.startswith("-") and not posture_own.local_target(prog, [flag, value], {}, ()) \
                    and value.rstrip(",") not in ("localhost", "127.0.0.1") and not is_local_inventory(value):
                return f"{flag} {value}"
    return None


def is_local_inventory(value: str) -> bool:
    return value.rstrip(",") in ("localhost", "127.0.0.1", "local") or value.startswith("localhost,")


# Programs that change nothing off this machine whatever their words: skipped at once (the common path)
_NOTHING_ELSEWHERE = frozenset({
    "git", "echo", "printf", "grep", "egrep", "fgrep", "rg", "ag", "cat", "ls", "cd", "pwd", "head", "tail", "sed",
    "awk", "gawk", "jq", "yq", "wc", "sort", "uniq", "cut", "tr", "find", "xargs", "test", "[", "true", "false",
    "mkdir", "touch", "cp", "mv", "ln", "rm", "chmod", "chown", "tee", "diff", "pytest", "ruff", "mypy", "black",
    "eslint", "prettier", "tsc", "export", "set", "read", "declare", "local", "source", ".", "sleep", "date", "which",
    "type", "basename", "dirname", "realpath", "readlink", "stat", "file", "du", "df", "ps", "less", "more", "man",
    "tar", "gzip", "unzip", "zip", "wait", "exit", "return", "shift", "unset", "cmp", "comm", "paste", "column",
    "nl", "od", "xxd", "base64", "sha256sum", "md5sum", "tree", "bat", "fd", "fzf", "watch", "time", "timeout"})


_FLEET = {**RUN_REMOTE, **CONSOLE_REMOTE}  # heroku run CODE: a console, judged as a fleet run


def fleet(argv: list[Val]) -> Facts | None:
    """A fleet tool's run (ansible -m service ... on an inventory), judged before unwrap.py takes it apart for the
    command it runs elsewhere (which meets every rule too)."""
    at = next((i for i, a in enumerate(argv[:6]) if program_name(a) in _FLEET), 0)  # sudo -u x ansible ...
    prog = program_name(argv[at]) if argv else ""
    words = [a.text for a in argv[at + 1:]]
    if prog not in _FLEET or _dry(prog, words) or (nonprod_target(argv[1:]) and not prod_target(argv[1:]) and
                                                       prog not in ("ssh", "rsync", "scp")) or (
            why := _FLEET[prog](words)) is None:
        return None
    return Facts(unit=" ".join(a.text for a in argv), program=prog, signals={"posture"},
                 notes={"posture": f"why: {why}"})


def judge(facts: Facts, words: list[str], env: Mapping[str, str | None], temp: tuple[str, ...],
          made: set[str]) -> None:
    """Mark what is local or the agent's own as free of the rules about shared resources; raise `posture` where
    the command changes state elsewhere."""
    prog = facts.program
    if not prog or prog in _NOTHING_ELSEWHERE:
        return
    if "--" in words and prog not in RUN_REMOTE:
        words = words[:words.index("--")]  # hostrun exec -- kubectl ...: what runs after `--` is judged on its own
    try:
        _judge(facts, prog, words, env, temp, made)
    finally:
        posture_own.remember(prog, words, made)


def _judge(facts: Facts, prog: str, words: list[str], env: Mapping[str, str | None], temp: tuple[str, ...],
           made: set[str]) -> None:
    verb = decisive_verb(prog, words)
    if words[-1:] in (["-h"], ["--version"], ["-v"], ["version"], ["help"]) and len(words) <= 2:
        return  # twilio --version, pd help: the program prints
    if (verb is not None and verb[0] == "read") or _dry(prog, words):
        never = {"--publish never", "-p never"} & {f"{a} {b}" for a, b in itertools.pairwise(words)}
        if prog != "git" and (never or not _PUBLISHING.intersection(w.split("=", 1)[0] for w in words)):
            facts.free |= FREE_ON_READ
        return
    if prog in ("skopeo", "crane") and words[-1:] and words[-1].startswith(_LOCAL_TRANSPORTS):
        facts.free |= {"publish.release"}  # skopeo copy docker://... oci:/tmp/x: a copy on this machine
        return
    engine = prog in posture_own.LOCAL_ENGINES
    remote_engine = engine and ("engine:remote" in made or "--remote" in words or posture_own.engine_elsewhere(env)
                                or bool(remote_hosts(words)) or posture_own.engine_named_elsewhere(prog, words))
    if prog in ("docker", "podman") and words[:2] == ["context", "use"] and len(words) > 2 and words[2] != "default" \
            and not posture_own.local_target(prog, ["--context", words[2]], {}, ()):
        made.add("engine:remote")  # docker context use prod && docker compose up -d: the rest goes there
    if facts.test_db and not remote_engine and not remote_hosts(words):
        facts.free |= posture_own.FREE_RULES  # supabase db reset: the local stack's database (testdb.py)
        return
    if not remote_engine and posture_own.own(prog, words, made):
        facts.free |= posture_own.FREE_RULES
        return
    if not remote_engine and (local := posture_own.local_target(prog, words, env, temp)):
        facts.free |= posture_own.frees(local)
        return
    why = _why(facts, prog, words, verb[1] if verb else None, remote_engine)
    if why:
        facts.signals.add("posture")
        facts.notes["posture"] = f"why: {why}"


def _why(facts: Facts, prog: str, words: list[str], verb: str | None, remote_engine: bool) -> str | None:
    if prog in MESSAGE and (why := _message(prog, words)):
        return why
    if prog in OPS_HTTP:
        url = ops_url(words)
        return f"{url} messages or pages people, or changes alerting or a store" if url else None
    if prog in DEVICE:
        return DEVICE[prog](words)
    nonprod = "nonprod-target" in facts.signals and "prod-target" not in facts.signals
    prod = "prod-target" in facts.signals
    if prog in RUN_REMOTE:
        return None if nonprod else RUN_REMOTE[prog](words)
    if prog in WRITE_ALWAYS and (why := WRITE_ALWAYS[prog](words)):
        return why
    if prod and (why := _prod_entry(prog, words, verb or words[0] if words else "")):
        return why
    if (zero := next((w for w in words if _RETENTION_ZERO.match(w)), None)) or "--keep-last 0" in " ".join(words):
        return f"{prog} keeps no backups or history ({zero or '--keep-last 0'})"
    if verb is None and _prod_named(words) and not _local_tool(prog) and prog not in _PROD_LEFT and any(
            p in _ENTRY_VERBS - _BUILD_VERBS for w in words if not w.startswith("-") for p in _parts(w)):
        return f"{prog} runs a production deploy or teardown by name"  # spinnaker pipeline execute ... deploy-prod
    if verb is None and prog not in _FLAGS_LEFT and (target := _target(prog, words)) and (
            flag := _flag_verb(prog, words)):
        return f"{prog} --{flag} changes state on {target}, not this machine"  # kafka-consumer-groups --reset-offsets
    if verb is None:
        return None
    if MONITOR_AGENTS.match(prog):
        return f"{prog} {verb} stops or changes this machine's monitoring"
    if prog in HOST and HOST[prog](words):
        return f"{prog} {verb} changes this machine's system, its VMs or the user's profile beyond the repository"
    if remote_engine:
        return f"{prog} {verb} changes a container engine on another machine"
    if words[:1] and words[0] in _CHOOSING and prog not in REMOTE:
        return None  # gcloud config set project x, aws configure set: where later calls go, kept on this machine
    at = words.index(verb) if verb in words else 0
    strong = None if at and re.fullmatch(r"-[A-Za-z]", words[at - 1]) else next(  # rspec -e disable: a value
        (p for p in _parts(verb) if p in STRONG), None)
    if prog in CLOUD:
        if any(CLOUD_ALWAYS.match(w) for w in words[:4]) or strong:
            return f"{prog} {verb} silences alarms, pauses, revokes, sends messages or undeploys"
        named = facts.notes.get("prod-target", "")[5:] or _prod_named(words)
        return f"{prog} {verb} changes production ({named})" if prod or named else None
    if prod and not _local_tool(prog) and prog not in _PROD_LEFT:
        return f"{prog} {verb} changes production ({facts.notes.get('prod-target', '')[5:]})"
    if prog in ("kubectl", "oc", "helm") and (named := _cluster_prod(words)):
        return f"{prog} {verb} changes the production cluster or namespace {named}"
    if alerting_off(prog, words, verb):
        return f"{prog} {verb} turns off alerting or monitoring"
    if prog == "firebase" and "channel" in verb and "live" not in words:
        return None  # hosting:channel:deploy pr-17: a preview channel
    if prog in LIVE_ONLY and LIVE_ONLY[prog] not in words:
        return None  # stripe trigger: its test mode
    if prog in REMOTE and posture_own.named_local(words):
        return None  # helmfile -e local apply, --context kind-dev
    if prog in REMOTE and not nonprod:
        verbs = REMOTE[prog]
        if verbs is None or any(p in verbs for p in _parts(verb)) or verb in verbs:
            return f"{prog} {verb} changes state on a platform, fleet or registry, not this machine"
        return None
    if strong and prog in _HOSTING and not nonprod:
        return f"{prog} {verb}: {strong} changes what others rely on"  # render services suspend, heroku ps:... pause
    if left_to_rules(prog) or nonprod or prog in DEVICE_TOOLS:
        return None
    if target := _target(prog, words):
        return f"{prog} {verb} changes state on {target}, not this machine"
    if credential := _credential(words, facts):
        return f"{prog} {verb} changes state on the service {credential} opens"
    if strong and not _local_tool(prog):
        return f"{prog} {verb}: {strong} changes what others rely on, on a service no rule knows"
    return None


# Programs whose own rules split the everyday from the dangerous even where production is named (text, git, local
# runtimes, package managers and build tools; a production name in their words is text, a branch, a file or a build
# configuration)
_PROD_LEFT = frozenset({*TEXT_AND_OWN, *PACKAGE_TOOLS, *DEVICE_TOOLS, "python", "python3", "node", "ruby", "perl",
                        "php", "rails", "docker", "podman", "docker-compose", "nerdctl", "make", "gmake", "just",
                        "task", "ssh", "scp", "rsync", "sed", "awk", "jq", "yq", "echo", "printf", "cat", "tee", "cp",
                        "mv", "ln", "mkdir", "touch", "rm", "git", "gh", "glab", "dotnet", "msbuild", "xcodebuild",
                        "gradle", "gradlew", "./gradlew", "mvn", "bazel", "cmake", "ninja", "go", "cargo", "deno",
                        "bun", "tsc", "vite", "webpack", "esbuild", "nx", "turbo", "lerna", "sops", "openssl", "gpg",
                        "ansible-vault", "ansible-lint", "terraform-docs", "tflint", "checkov", "tfsec", "conftest",
                        "kustomize", "envsubst", "dbt"})


# Hosting platforms whose own rules decide their deletes and deploys; a verb that pauses, revokes or transfers
# is theirs to hold back too
_HOSTING = frozenset({"heroku", "fly", "flyctl", "vercel", "netlify", "railway", "render", "wrangler", "doctl",
                      "linode-cli", "hcloud", "scw", "exo", "civo", "vultr-cli", "ibmcloud", "oci", "aliyun"})


def _local_tool(prog: str) -> bool:
    """A script of the repository, or a program whose verbs act on this machine."""
    return "/" in prog or prog.endswith((".sh", ".py", ".js", ".ts", ".rb", ".pl")) or prog in LOCAL_TOOLS


# Flags that name where or what, not what is done (--bootstrap-server, --group, --topic)
_VALUE_FLAG = re.compile(r"server|host|url|endpoint|broker|zookeeper|config|file|group|topic|name|type|id$|token|key"
                         r"|user|password|port|region|context|profile|namespace|output|format|bootstrap", re.I)
# Programs whose own rules read their flags (git push --delete, curl -X DELETE, kubectl --force)
_FLAGS_LEFT = frozenset({"git", "kubectl", "oc", "docker", "podman", "helm", "ssh", "scp", "rsync", "curl", "wget",
                         "http", "https", "xh", "aws", "gcloud", "az", "gsutil", "rclone", "npm", "pnpm", "yarn", "pip",
                         "cargo", "gem", "twine"})
def _flag_verb(prog: str, words: list[str]) -> str | None:
    """The flag that says what a command does when no word does (--reset-offsets, --alter; --describe reads)."""
    flags = [f for w in words if w.startswith("--") and not _VALUE_FLAG.search(f := w.lstrip("-").split("=", 1)[0])]
    found = decisive_verb(prog, flags)
    return found[1] if found and found[0] == "write" else None


_CHOOSING = frozenset({"config", "configure", "account", "accounts", "auth", "login", "logout", "profile", "profiles",
                       "context", "contexts", "use", "use-context", "select", "completion"})
_BUILD_VERBS = frozenset({"run", "build", "seed", "snapshot"})  # a warehouse's writes (dbt), a build elsewhere
_RETENTION_ZERO = re.compile(r"^--(?:keep-[\w-]+|[\w-]*retention[\w-]*)=0+(?:[dhmswy]|days?)?$")
_PROD_WORD = re.compile(r"(?:^|[-_.:/@])(?:prod|production|prd)(?:$|[-_.:/\d])", re.I)


def _prod_named(words: list[str]) -> str:
    """A word naming production (prod-web-1, acme-prod, production), not a flag and not a file."""
    return next((w for w in words if not w.startswith("-") and "://" not in w and not _FILE.search(w)
                 and _PROD_WORD.search(w)), "")


def _cluster_prod(words: list[str]) -> str:
    """The production context, cluster or namespace a kubectl or helm command names (--context prod-eu, -n prod)."""
    options = ("--context", "--kube-context", "--cluster", "-n", "--namespace")
    named = [b for a, b in itertools.pairwise(words) if a in options] + [
        w.split("=", 1)[1] for w in words if w.split("=", 1)[0] in options and "=" in w]
    return next((n for n in named if _PROD_WORD.search(n)), "")


_ENTRY_VERBS = frozenset({"destroy", "deploy", "apply", "promote", "release", "rollback", "teardown", "delete", "drop",
                          "reset", "run", "build", "seed", "snapshot", "dispatches", "publish", "switch", "scale"})
_RUNNERS = frozenset({"make", "gmake", "just", "task", "mage", "invoke", "rake", "nx", "turbo", "npm", "pnpm",
                      "yarn", "bun", "dbt", "gh", "dotnet", "cargo", "gradle", "gradlew", "mvn"})


def _prod_entry(prog: str, words: list[str], verb: str) -> str | None:
    """A task runner's target, a warehouse build or a repository dispatch aimed at production by name
    (make destroy-prod, dbt run --target prod, gh api -X POST .../dispatches -f event_type=deploy-prod)."""
    if prog not in _RUNNERS:
        return None
    named = {p for w in words for p in _parts(w.rsplit("/", 1)[-1].split("=", 1)[-1]) if "." not in w or "/" in w}
    if prog == "dotnet" and any("PublishProfile=" in w for w in words):
        return "dotnet publish deploys with a production publish profile"
    if named & _ENTRY_VERBS:
        return f"{prog} {verb} aims at production"
    return None


_CREDENTIAL_FLAGS = frozenset({"--token", "--api-key", "--apikey", "--api-token", "--auth-token", "--access-token",
                               "--secret-key", "--password"})


def _credential(words: list[str], facts: Facts) -> str | None:
    """A credential given to a program no rule names: what it changes is on the service the credential opens."""
    return next((w.split("=", 1)[0] for w in words if w.split("=", 1)[0] in _CREDENTIAL_FLAGS), None)


_MAIL_RESERVED = re.compile(r"@(?:[\w-]+\.)*(?:example\.(?:com|org|net)|[\w-]+\.(?:example|test|invalid|localhost)"
                            r"|localhost)>?$", re.I)


def _message(prog: str, words: list[str]) -> str | None:
    """A message to people: mail to an address outside the reserved example domains, or any chat or SMS send."""
    recipients = [w for w in words if "@" in w and not w.startswith("-") and "://" not in w and " " not in w]
    if prog in ("mail", "mailx", "sendmail", "swaks", "msmtp", "mutt", "neomutt", "s-nail", "ssmtp"):
        if "-t" in words or (recipients and not all(_MAIL_RESERVED.search(r) for r in recipients)):
            return f"{prog} sends mail to people ({(recipients or ['the message headers'])[0]})"
        return None
    return f"{prog} sends a message to people"  # its reads (list, receive, ...) were let through before
