"""The posture's tables (posture.py): which words change state and which read, which programs' purpose is remote,
which change this machine's system, which send to people or devices. Data only, with the few per-program readers
that a table cannot say (an ansible module, a fleet's command, a device's serial)."""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable

from dun.guard.hosts import host_of, is_local

# Parts of a leading word (split at - _ : . and camelCase) that change state somewhere
WRITE = frozenset({
    "apply", "deploy", "redeploy", "undeploy", "release", "promote", "publish", "push", "upload", "send", "submit",
    "distribute", "trigger", "dispatch", "launch", "delete", "destroy", "remove", "rm", "purge", "revoke", "disable",
    "mute", "transition", "switch", "activate", "scale", "restart", "reboot", "stop",
    "shutdown", "suspend", "pause", "drain", "cordon", "seal", "set", "put", "patch", "update", "post", "create",
    "add", "clear", "backfill", "reset", "cancel", "expire", "resolve", "close", "rollback", "invalidate",
    "deregister", "unregister", "unsubscribe", "unlock", "rotate", "replace", "taint", "deactivate", "clean",
    "deprecate", "yank", "retire", "bump", "gc", "prune", "down", "kill", "terminate", "wipe", "erase", "drop",
    "truncate", "flush", "import", "acknowledge", "ack", "archive", "unpublish", "nuke", "forget", "evict", "edit",
    "modify", "move", "rename", "transfer", "grant", "enable", "notify", "announce", "tag", "untag", "unmute", "up",
    "bootstrap", "alter", "migrate"})
# Verbs that change what other people rely on, whatever the program: a program no rule knows using one is taken to
# reach a service (pause a queue, revoke a key, page someone, fail a cluster over)
STRONG = frozenset({"suspend", "pause", "disable", "mute", "revoke", "drain", "cordon", "seal", "unsubscribe",
                    "deregister", "expire", "acknowledge", "failover", "promote", "rollback",
                    "transition", "trigger", "dispatch", "send", "notify", "broadcast", "announce", "escalate",
                    "silence", "snooze", "deactivate", "decommission", "evict", "invalidate", "rotate", "yank",
                    "deprecate", "unpublish", "transfer", "grant", "unregister", "unlock", "demote"})
# Programs whose verbs act on this machine (desktop notifications, local services and devices, editors)
LOCAL_TOOLS = frozenset({"notify-send", "dbus-send", "xdotool", "tmux", "screen", "systemctl", "launchctl",
                         "service", "ufw", "nmcli", "rfkill", "xinput", "pactl", "amixer", "gsettings", "dconf",
                         "defaults", "osascript", "code", "vim", "nvim", "emacs", "logrotate", "certbot", "pm2",
                         "supervisorctl", "ssh-add", "gpg", "gpg2", "pass", "keyring", "secret-tool", "direnv",
                         "gsutil", "git-lfs", "pre-commit", "husky", "lefthook", "mise", "asdf", "sops", "git-crypt",
                         "transcrypt", "bw", "op", "age", "keepassxc-cli", "playerctl", "pg_ctl", "pg_ctlcluster",
                         "brightnessctl", "dunstctl"})
# Parts that only look, build here, or rehearse
READ = frozenset({
    "list", "ls", "get", "describe", "show", "status", "logs", "log", "plan", "diff", "preview", "query", "search",
    "view", "inspect", "info", "whoami", "version", "help", "check", "validate", "lint", "test", "fmt",
    "download", "pull", "fetch", "doctor", "lanes", "graph", "output", "outputs", "history", "top", "watch",
    "tail", "cat", "print", "explain", "dag", "metrics", "params", "plots", "ping", "uptime", "verify",
    "synth", "emulators", "action", "scan", "files", "routes", "dev", "local", "console", "cache",
    "completion", "docs", "login", "logout", "whois", "receive", "estimate", "validate_only", "readonly", "summary",
    "report", "dump", "export"})
# Words a program uses for something else than their table meaning
VERB_OVERRIDE: dict[str, dict[str, str]] = {
    "kaggle": {"version": "write"}, "nomad": {"run": "write"}, "salt": {"item": "read", "items": "read"},
    "home-manager": {"build": "read"}, "nix": {"build": "read"},
    "nixos-rebuild": {"test": "write", "build": "read", "dry": "read"},
    "fastlane": {"deliver": "write", "supply": "write", "match": "", "change": "write", "env": "read"},
    "bolt": {"plan": "", "command": "", "task": "", "script": ""}, "pulumi": {"config": "read", "stack": ""},
    "terraform": {"workspace": "", "import": "read"}, "tofu": {"workspace": "", "import": "read"},
    "supabase": {"start": "read", "stop": "read", "new": "read", "gen": "read", "link": "read"},
    "firebase": {"use": "read"},
    "dvc": {"remote": "read", "exp": "read", "add": "read", "gc": "write"}, "ollama": {"rm": "read"},
}
# Options meaning a dry run or a check, alone or with their value
DRY = frozenset({"--help", "-help", "--dry-run", "--dryrun", "--dry", "--check", "--what-if",
                 "--whatif", "--noop", "--plan",
                 "--preview", "--simulate", "--syntax-check", "--list-hosts", "--list-tasks", "--publish never",
                 "-p never", "--validate", "-WhatIf", "--no-publish", "--skip-publish", "--build-only", "--diff-only"})
DRY_BY_PROGRAM = {"ansible-playbook": ("-C",), "ansible": ("-C",), "gradle": ("-m",), "gradlew": ("-m",),
                  "./gradlew": ("-m",)}
# Options naming where a command goes; a value not local makes the call remote
TARGET_OPTIONS = frozenset({"--context", "--kube-context", "--profile", "--project", "--env", "--environment",
                            "--stage", "--target", "--stack", "--inventory", "--app", "--site", "--account", "--org",
                            "--workspace", "--cluster", "--targets", "--target-host"})

# Programs whose purpose is remote: every verb that changes state reaches a platform, fleet or registry (a set names
# the only verbs that do, where the rest of the program is local)
REMOTE: dict[str, frozenset[str] | None] = {name: None for name in (
    "terraform", "tofu", "terragrunt", "pulumi", "cdk", "cdktf", "serverless", "sls", "sam", "copilot", "flux",
    "argocd", "ansible", "ansible-playbook", "ansible-pull", "salt", "salt-key", "salt-run", "salt-ssh", "knife",
    "puppet", "puppetserver", "bolt", "pyinfra", "vault", "consul", "nomad", "boundary", "waypoint", "mlflow",
    "airflow", "prefect", "dagster", "databricks", "wandb", "huggingface-cli", "hf", "kaggle", "replicate", "cog",
    "modal",
    "firebase", "fastlane", "eas", "appcenter", "code-push", "shorebird", "snapcraft", "wingetcreate", "cachix",
    "deploy-rs", "amtool", "dog", "pd", "datadog-ci", "sentry-cli", "splunk", "twilio", "newrelic", "gcx",
    "opsgenie", "statuspage", "crane", "juju", "maas", "tf", "tg", "helmfile", "skaffold", "okteto", "salt-cloud",
    "nixops", "colmena", "morph", "checkly", "garden",
    # SaaS and platform CLIs: their writes reach a service others use
    "auth0", "okta", "algolia", "linear", "jira", "acli", "doppler", "infisical", "ldcli", "contentful", "sanity",
    "shopify", "sf", "sfdx", "zcli", "hubspot", "launchdarkly", "flagsmith", "unleash", "statsig", "segment",
    "posthog", "mixpanel", "amplitude", "cloudinary", "mux", "pusher", "ably", "sendgrid", "mailgun", "postmark",
    "mailchimp", "intercom", "zendesk", "asana", "notion", "trello", "clickup", "todoist", "circleci", "buildkite",
    "travis", "codemagic", "bitrise", "expo", "supabase", "pscale", "neonctl", "turso", "upstash", "convex",
    "incident", "rootly", "firehydrant", "victorops", "grafana-cloud", "logdna", "papertrail", "honeycomb",
    "lightstep", "signalfx", "stripe")}
REMOTE |= {"ollama": frozenset({"push"}), "brew": frozenset({"bump"}),
           "pod": frozenset({"deprecate", "push", "delete"}),
           "gradle": frozenset({"promote"}), "gradlew": frozenset({"promote"}), "dvc": frozenset({"push"})}
# Programs whose writes are a test mode unless a flag says otherwise (stripe trigger: test mode, unless --live)
LIVE_ONLY = {"stripe": "--live"}
CLOUD = frozenset({"aws", "gcloud", "az"})
_ALERTING = re.compile(r"alertmanager|prometheus|grafana|loki|datadog|monitoring|pagerduty|opsgenie|falco|fluent"
                       r"|vector|otel", re.I)


def alerting_off(prog: str, words: list[str], verb: str) -> bool:
    """kubectl scale or patch of the alerting stack down to nothing (-n monitoring ... --replicas=0)."""
    return prog in ("kubectl", "oc") and verb in ("scale", "patch", "edit") and any(
        re.search(r"replicas\W+0\b", w) for w in words) and any(_ALERTING.search(w) for w in words)


# Cloud CLIs are left to their rules but for silencing alarms, pages and messages, and undeploying
CLOUD_ALWAYS = re.compile(r"^(?:undeploy[\w-]*|disable-alarm-actions|set-alarm-state|unsubscribe|put-retention-policy"
                          r"|send-(?:email|raw-email|bulk-\w+|templated-email)|delete-alarms|disable-rule)$")


def _after(words: list[str], flag: str) -> list[str]:
    return [b for a, b in itertools.pairwise(words) if a == flag] + [
        w.split("=", 1)[1] for w in words if w.startswith(flag + "=")]


_LIVE_KEY = re.compile(r"\b(?:sk|rk)_live_\w+")
_REMOTE_CMD_WRITE = re.compile(r"\b(?:stop|restart|reload|kill|pkill|killall|rm|reboot|shutdown|halt|poweroff|drop"
                               r"|delete|truncate|userdel|purge|remove|mv|dd|mkfs|chmod|chown|disable|mask|tee|sed"
                               r"|deploy|apply|upgrade|install)\b|>", re.I)
_ANSIBLE_READ = frozenset({"ping", "setup", "gather_facts", "debug", "stat", "ansible.builtin.ping",
                           "ansible.builtin.setup", "ansible.builtin.stat", "service_facts", "package_facts",
                           "ansible.builtin.debug", "slurp", "find", "fetch", "uri"})


def _fleet_local(words: list[str]) -> bool:
    inventories = _after(words, "-i") + _after(words, "--inventory")
    pattern = next((w for w in words[:1] if not w.startswith("-")), "")
    limits = _after(words, "-l") + _after(words, "--limit")
    return ("local" in _after(words, "-c") + _after(words, "--connection")) or (
        bool(limits) and all(x in ("localhost", "127.0.0.1") for x in limits)) or (
        bool(inventories) and all(i.rstrip(",") in ("localhost", "127.0.0.1") for i in inventories)) or \
        pattern in ("localhost", "127.0.0.1")


def _ansible(words: list[str]) -> str | None:
    modules = _after(words, "-m") + _after(words, "--module-name")
    command = " ".join(_after(words, "-a") + _after(words, "--args"))
    if _fleet_local(words):
        return None
    if modules and modules[-1] not in ("command", "shell", "raw", "ansible.builtin.command", "ansible.builtin.shell"):
        return None if modules[-1] in _ANSIBLE_READ else f"ansible module {modules[-1]} changes the hosts it targets"
    return f"ansible runs {command[:40]!r} on the hosts it targets" if _REMOTE_CMD_WRITE.search(command) else None


def _playbook(words: list[str]) -> str | None:
    return None if _fleet_local(words) else "ansible-playbook applies a playbook to the hosts of a non-local inventory"


def _fleet_command(name: str, start: int) -> Callable[[list[str]], str | None]:
    def judge(words: list[str]) -> str | None:
        lead = [w for w in words if not w.startswith("-")]
        command = " ".join(lead[start:start + 2])
        if lead[:2] in (["command", "run"],) or name == "knife":
            return f"{name} runs {command[:40]!r} on a fleet" if _REMOTE_CMD_WRITE.search(command) else None
        if lead[:2] in (["plan", "run"], ["task", "run"], ["script", "run"], ["apply"]) and not _fleet_local(words):
            return f"{name} {' '.join(lead[:2])} changes the hosts it targets"
        return None
    return judge


_PROD_HOST = re.compile(r"(?:^|[@.\-_])(?:prod|production|prd|live)(?:$|[.\-_:\d])", re.I)


def _ssh(words: list[str]) -> str | None:
    """A change run over ssh on a machine named for production (ssh deploy@web1.prod.acme.com 'git pull && ...')."""
    lead = [w for w in words if not w.startswith("-")]
    host = next((w for w in lead[:1] if _PROD_HOST.search(w.split("@", 1)[-1])), None)
    command = " ".join(lead[1:])
    return f"runs {command[:40]!r} on {host}, a production machine" if host and (
        _REMOTE_CMD_WRITE.search(command) or re.search(r"\bgit\s+(?:pull|checkout|reset|merge)\b", command)) else None


def _copy_to_prod(words: list[str]) -> str | None:
    """Files copied onto a machine named for production (rsync --delete dist/ deploy@web1.prod.acme.com:/var/www)."""
    dest = next((w for w in reversed(words) if not w.startswith("-")), "")
    host = dest.split(":", 1)[0] if ":" in dest and "://" not in dest else ""
    return f"copies files onto {host}, a production machine" if host and _PROD_HOST.search(host.split("@", 1)[-1]) \
        else None


# Programs that run things on other machines: judged by what they run
RUN_REMOTE: dict[str, Callable[[list[str]], str | None]] = {
    "ssh": _ssh, "rsync": _copy_to_prod, "scp": _copy_to_prod,
    "ansible": _ansible, "ansible-playbook": _playbook, "bolt": _fleet_command("bolt", 2),
    "knife": _fleet_command("knife", 2),
    "prefect": lambda w: "prefect runs a deployment on its server" if w[:2] == ["deployment", "run"] else None,
}


def _host_switch(words: list[str]) -> bool:
    return bool({"switch", "boot", "test", "activate"}.intersection(words[:3]))


# Programs that change this machine's system or the user's profile outside the repository
HOST: dict[str, Callable[[list[str]], bool]] = {
    "nixos-rebuild": _host_switch, "darwin-rebuild": _host_switch, "home-manager": _host_switch,
    "nix-collect-garbage": lambda w: True, "nix-env": lambda w: True, "nix-channel": lambda w: True,
    "nix": lambda w: w[:2] in (["profile", "remove"], ["profile", "wipe-history"], ["store", "gc"],
                                ["store", "delete"]),
    "machinectl": lambda w: True, "microk8s": lambda w: True, "virsh": lambda w: True,
    "podman": lambda w: w[:1] == ["machine"], "lxc": lambda w: w[:1] == ["config"],
    "incus": lambda w: w[:1] == ["config"],
}

_K3S = re.compile(r"^(?:k3s|k3s-agent|rke2|rke2-agent|microk8s)-(?:uninstall|killall)\.sh$")


def _electron(words: list[str]) -> str | None:
    values = _after(words, "-p") + _after(words, "--publish")
    return "electron-builder publishes the release" if values and values[-1] != "never" else None


def _nix_gc(words: list[str]) -> str | None:
    return "deletes the profile generations a rollback needs" if {"-d", "--delete-old"}.intersection(words) or any(
        w.startswith("--delete-older-than") for w in words) else None


def _nix_env(words: list[str]) -> str | None:
    return "removes packages or generations from the user's profile" if any(
        w in ("-e", "--uninstall", "--delete-generations") for w in words) else None


def _salt_key(words: list[str]) -> str | None:
    return "deletes or rejects minion keys on the salt master" if any(
        w in ("-d", "-D", "-r", "-R", "--delete", "--delete-all", "--reject", "--reject-all") for w in words) else None


# Programs that change state with no verb word: judged by their flags
WRITE_ALWAYS: dict[str, Callable[[list[str]], str | None]] = {
    "electron-builder": _electron, "nix-collect-garbage": _nix_gc, "nix-env": _nix_env, "salt-key": _salt_key,
    "nix-channel": lambda w: "removes a channel" if "--remove" in w else None,
    "deploy-rs": lambda w: "deploy-rs deploys a system to its hosts",
    "ansible-pull": lambda w: "ansible-pull applies a playbook fetched from a repository to this machine",
    "matrix-commander": lambda w: "matrix-commander sends a message to people" if {"-m", "--message"} & set(w) else
    None,
    "eas": lambda w: "eas submits the build to the store" if "--auto-submit" in w else None,
    "dvc": lambda w: "dvc gc removes data from the remote storage" if "gc" in w[:1] and (
        "-c" in w or "--cloud" in w) else None,
    "pyinfra": lambda w: None if any(x.startswith("@local") for x in w) or "--dry" in w else
    "pyinfra applies operations to the hosts of an inventory",
    "deploy": lambda w: "deploy-rs deploys a system to its hosts" if any("#" in x for x in w) else None,
    "fwupdmgr": lambda w: "flashes this machine's firmware" if w[:1] in (["update"], ["install"], ["upgrade"]) else
    None,
}
def _host_switch_why(words: list[str]) -> str | None:
    return "switches this machine's system or the user's profile to a new generation" if _host_switch(words) else None


_NOTEBOOKS = frozenset({"8888", "8889", "8890"})


def _exposed_notebook(words: list[str]) -> str | None:
    ips = _after(words, "--ip") + _after(words, "--NotebookApp.ip") + _after(words, "--ServerApp.ip")
    open_ip = any(ip in ("0.0.0.0", "*", "::") for ip in ips)
    no_token = any(re.match(r"--(?:NotebookApp|ServerApp|IdentityProvider)\.(?:token|password)=(?:''|\"\")?$", w)
                   for w in words)
    return "serves a notebook (it runs code) to the network without a token" if open_ip and no_token else None


def _tunnel(words: list[str]) -> str | None:
    ports = {m.group(1) for w in words if (m := re.search(r"(?:^|[:=])(\d{4,5})/?$", w))}
    return "publishes a notebook server (it runs code) on the internet" if ports & _NOTEBOOKS else None


def _dockerd(words: list[str]) -> str | None:
    hosts = _after(words, "-H") + _after(words, "--host")
    open_tcp = [h for h in hosts if h.startswith("tcp://") and not re.match(r"tcp://(?:127\.|localhost|\[::1\])", h)]
    return "serves the container engine's API to the network" if open_tcp and "--tlsverify" not in words else None


def _qemu_img(words: list[str]) -> str | None:
    if words[:1] not in (["create"], ["resize"], ["commit"], ["rebase"], ["amend"], ["convert"], ["snapshot"]):
        return None
    outside = [w for w in words[1:] if w.startswith("/") and not w.startswith(("/tmp/", "/var/tmp/"))]
    return f"rewrites a VM disk image outside the repository ({outside[0]})" if outside else None


MONITOR_AGENTS = re.compile(r"^(?:datadog-agent|dd-agent|newrelic-infra|nri-agent|telegraf|node_exporter"
                             r"|elastic-agent|filebeat|metricbeat|auditbeat|fluent-bit|fluentd|vector|otelcol\S*"
                             r"|grafana-agent|alloy|splunkd|falco|osqueryd|wazuh-agent|crowdstrike|falcon-sensor)$")


WRITE_ALWAYS |= {
    "nixos-rebuild": _host_switch_why, "darwin-rebuild": _host_switch_why, "home-manager": _host_switch_why,
    "jupyter": _exposed_notebook, "jupyter-notebook": _exposed_notebook, "jupyter-lab": _exposed_notebook,
    "ngrok": _tunnel, "cloudflared": _tunnel, "lt": _tunnel, "localtunnel": _tunnel, "bore": _tunnel,
    "dockerd": _dockerd, "qemu-img": _qemu_img,
    "journalctl": lambda w: "deletes this machine's logs" if any(x.startswith("--vacuum") for x in w) else None,
    "auditctl": lambda w: "turns off or empties this machine's audit rules" if "-D" in w or "-e 0" in " ".join(w)
    else None,
}
for _name in ("k3s-uninstall.sh", "k3s-agent-uninstall.sh", "rke2-uninstall.sh", "k3s-killall.sh"):
    WRITE_ALWAYS[_name] = lambda w: "uninstalls the cluster on this machine with its data"

MESSAGE = frozenset({"mail", "mailx", "sendmail", "swaks", "msmtp", "mutt", "neomutt", "s-nail", "ssmtp", "twilio",
                     "slack", "slack-cli", "slackcat", "telegram-send", "signal-cli", "apprise", "ntfy", "pushover",
                     "discord", "teams", "mattermost", "mmctl", "zulip-send", "notify-slack"})
OPS_HTTP = frozenset({"curl", "wget", "http", "https", "xh", "xhs", "httpie", "curlie"})
# Hosts that carry messages, pages and alerting, store listings; paths that silence or stop on any server
_OPS_HOSTS = re.compile(r"(?:^|\.)(?:hooks\.slack\.com|slack\.com|discord(?:app)?\.com|webhook\.office\.com"
                        r"|outlook\.office\.com|pagerduty\.com|opsgenie\.com|statuspage\.io|mailgun\.net"
                        r"|sendgrid\.com|twilio\.com|postmarkapp\.com|sparkpost\.com|resend\.com|api\.telegram\.org"
                        r"|appstoreconnect\.apple\.com"
                        r"|androidpublisher\.googleapis\.com|api\.mailchimp\.com|mandrillapp\.com"
                        r"|api\.pushover\.net|ntfy\.sh|chat\.googleapis\.com|api\.victorops\.com"
                        r"|events\.splunk\w*\.com|api\.incident\.io|api\.firehydrant\.io|rootly\.com|zapier\.com"
                        r"|ifttt\.com|pushbullet\.com|graph\.microsoft\.com|gmail\.googleapis\.com|api\.brevo\.com"
                        r"|api\.sendinblue\.com|api\.mailjet\.com|api\.smtp2go\.com|api\.elasticemail\.com"
                        r"|rest\.nexmo\.com|api\.vonage\.com|api\.messagebird\.com|api\.plivo\.com|api\.sinch\.com"
                        r"|api\.line\.me|api\.twitter\.com|api\.x\.com|graph\.facebook\.com|api\.linkedin\.com"
                        r"|webexapis\.com|api\.zoom\.us|victorops\.com|betterstack\.com|uptimerobot\.com"
                        r"|squadcast\.com|grafana\.net)$", re.I)
_OPS_PATHS = re.compile(r"/send(?:Mail|Message|_message|-message)?/?$|/chat\.postMessage\b|/hooks?/|/webhooks?/"
                        r"|/api/v\d/statuses/?$|/silences?\b|/-/(?:quit|reload)\b|/downtime\b|/maintenance_windows\b|/mute\b|/heartbeats/"
                        r"[^/]+/disable\b|/alertmanager/[^?]*/silences|/api/(?:v\d/)?(?:alerts|incidents)/?$", re.I)
_WRITE_FLAGS = frozenset({"-d", "--data", "--data-raw", "--data-binary", "--data-urlencode", "-F", "--form", "--json",
                          "-T", "--upload-file", "--post-data", "--post-file"})
_RESERVED_MAIL = re.compile(r"@(?:[\w-]+\.)*(?:example\.(?:com|org|net)|[\w-]+\.(?:example|test|invalid|localhost))>?$",
                            re.I)
# Telemetry services take data all day (metrics, events, errors); their monitors, downtimes and issue states are
# what others rely on
_TELEMETRY = re.compile(r"(?:^|\.)(?:datadoghq\.(?:com|eu)|newrelic\.com|sentry\.io|honeycomb\.io"
                        r"|logz\.io|sumologic\.com)$", re.I)
_TELEMETRY_PATHS = re.compile(r"/(?:monitor|downtime|mute|synthetics|slo|issues|alert|policies|triggers)", re.I)
_READ_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


def ops_url(words: list[str]) -> str | None:
    """The URL of a write to a messaging, paging, alerting or store API, or to a path that silences a server."""
    methods = [w.upper() for w in _after(words, "-X") + _after(words, "--request") + [
        w[2:] for w in words if w.startswith("-X") and len(w) > 2]]
    methods += [w for w in words[:2] if w.upper() in ("POST", "PUT", "PATCH", "DELETE")]  # httpie: http POST url
    if any(host_of(w) and w.split("?", 1)[0].endswith("/graphql") for w in words if "://" in w) and not any(
            "mutation" in w for w in words):
        return None  # a GraphQL query reads
    writes = (methods and methods[-1].upper() not in _READ_METHODS) or (
        not methods and (any(w.split("=", 1)[0] in _WRITE_FLAGS for w in words) or any(
            re.match(r"^[\w.\[\]-]+:?=", w) for w in words[1:] if not w.startswith("-") and "://" not in w)))
    rcpt = _after(words, "--mail-rcpt")
    if any(w.startswith(("smtp://", "smtps://")) for w in words) and any(not _RESERVED_MAIL.search(r) for r in rcpt):
        return next(w for w in words if w.startswith(("smtp://", "smtps://")))  # curl smtp://... --mail-rcpt
    if not writes:
        return None
    if any(_LIVE_KEY.search(w) for w in words):
        return "a payment service's live key"  # curl https://api.stripe.com/v1/refunds -u sk_live_...
    for word in words:
        host = host_of(word) if "://" in word else None
        if host is None or is_local(host):
            continue
        path = word.split(host, 1)[1]
        bare = path.split("?", 1)[0]
        if _OPS_HOSTS.search(host) or _OPS_PATHS.search(bare) or (_TELEMETRY.search(host) and (
                _TELEMETRY_PATHS.search(bare) or any("mutation" in w for w in words) or
                (methods and methods[-1].upper() in ("PUT", "DELETE")))):
            return host
    return None


_EMULATOR_SERIAL = re.compile(r"^(?:emulator-\d+|localhost:\d+|127\.0\.0\.1:\d+)$")
_ADB_WRITE = re.compile(r"\b(?:pm (?:uninstall|clear|disable\S*|hide)|settings put|tcpip|uninstall|wipe|rm -r"
                        r"|reboot (?:bootloader|recovery)|am force-stop|dpm|svc \w+ disable)\b")


def _adb(words: list[str]) -> str | None:
    serials = _after(words, "-s")
    if "-e" in words or (serials and all(_EMULATOR_SERIAL.match(s) for s in serials)):
        return None
    command = " ".join(w for w in words if w not in ("-d", "-s", *serials))
    return "changes a real device over adb (not an emulator)" if _ADB_WRITE.search(command) else None


def _fastboot(words: list[str]) -> str | None:
    return "flashes, erases or unlocks a real device" if any(w in ("flash", "flashall", "erase", "format", "-w",
                                                                  "update", "flashing", "oem") for w in words) \
        else None


DEVICE: dict[str, Callable[[list[str]], str | None]] = {
    "adb": _adb, "fastboot": _fastboot,
    "ideviceinstaller": lambda w: "uninstalls an app from a real device" if {"-U", "--uninstall"} & set(w) else None,
    "xcrun": lambda w: "changes a real device (devicectl)" if w[:1] == ["devicectl"] and any(
        x in ("uninstall", "erase", "reboot", "install") for x in w) else None,
    "ios-deploy": lambda w: "changes a real device" if {"--uninstall_only", "--uninstall", "-9"} & set(w) else None,
    "cfgutil": lambda w: "erases or changes a real device" if {"erase", "restore", "remove-app"} & set(w) else None,
    "idevicediagnostics": lambda w: "restarts or shuts down a real device" if {"restart", "shutdown"} & set(w) else
    None,
}
