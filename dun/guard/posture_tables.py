"""The posture's tables (posture.py): which words change state and which read, which programs' purpose is remote,
which send to people. Data only; the per-program readers a table cannot say (an ansible module, a fleet's command, a
device's serial) are in posture_readers.py, the HTTP APIs in posture_http.py."""

from __future__ import annotations

import itertools
import re

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
    "bootstrap", "alter", "migrate", "toggle", "on", "off", "store"})
# Verbs that change what other people rely on, whatever the program: a program no rule knows using one is taken to
# reach a service (pause a queue, revoke a key, page someone, fail a cluster over)
STRONG = frozenset({"suspend", "pause", "disable", "mute", "revoke", "drain", "cordon", "seal", "unsubscribe",
                    "deregister", "expire", "acknowledge", "failover", "promote",
                    "transition", "trigger", "dispatch", "send", "notify", "broadcast", "announce", "escalate",
                    "silence", "snooze", "deactivate", "decommission", "evict", "invalidate", "rotate", "yank",
                    "deprecate", "unpublish", "transfer", "grant", "unregister", "unlock", "demote"})
# Programs whose verbs act on this machine (desktop notifications, local services and devices, editors)
LOCAL_TOOLS = frozenset({"notify-send", "dbus-send", "xdotool", "tmux", "screen", "systemctl", "launchctl",
                         "service", "ufw", "nmcli", "rfkill", "xinput", "pactl", "amixer", "gsettings", "dconf",
                         "defaults", "osascript", "code", "vim", "nvim", "emacs", "logrotate", "pm2",
                         "supervisorctl", "ssh-add", "gpg", "gpg2", "pass", "keyring", "secret-tool", "direnv",
                         "gsutil", "git-lfs", "pre-commit", "husky", "lefthook", "mise", "asdf", "sops", "git-crypt",
                         "transcrypt", "bw", "op", "age", "keepassxc-cli", "playerctl", "pg_ctl", "pg_ctlcluster",
                         "brightnessctl", "dunstctl", "rspec", "pytest", "jest", "vitest", "mocha", "phpunit",
                         "behave", "cucumber", "robot", "playwright", "cypress"})
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
    "fastlane": {"deliver": "write", "supply": "write", "match": "", "change": "write", "env": "read",
                 "beta": "write", "alpha": "write"},
    "bolt": {"plan": "", "command": "", "task": "", "script": ""}, "pulumi": {"config": "read", "stack": ""},
    "terraform": {"workspace": "", "import": "read"}, "tofu": {"workspace": "", "import": "read"},
    "supabase": {"start": "read", "stop": "read", "new": "read", "gen": "read", "link": "read"},
    "firebase": {"use": "read"},
    "dvc": {"remote": "read", "exp": "read", "add": "read", "gc": "write"}, "ollama": {"rm": "read"},
    # kubectl auth can-i delete pods asks whether it may; sf project deploy validate|preview: the verb is the last word
    "kubectl": {"can": "read"}, "oc": {"can": "read"}, "sf": {"deploy": "", "retrieve": ""},
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
    "terraform", "tofu", "terragrunt", "pulumi", "cdk", "aws-cdk", "cdktf", "serverless", "sls", "sam", "copilot",
    "flux",
    "argocd", "ansible", "ansible-playbook", "ansible-pull", "salt", "salt-key", "salt-run", "salt-ssh", "knife",
    "puppet", "puppetserver", "bolt", "pyinfra", "vault", "consul", "nomad", "boundary", "waypoint", "mlflow",
    "airflow", "prefect", "dagster", "databricks", "wandb", "huggingface-cli", "hf", "kaggle", "replicate", "cog",
    "modal",
    "firebase", "fastlane", "eas", "appcenter", "code-push", "shorebird", "snapcraft", "wingetcreate", "cachix",
    "deploy-rs", "amtool", "dog", "pd", "sentry-cli", "splunk", "twilio", "newrelic", "gcx",
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


def after(words: list[str], flag: str) -> list[str]:
    return [b for a, b in itertools.pairwise(words) if a == flag] + [
        w.split("=", 1)[1] for w in words if w.startswith(flag + "=")]


MESSAGE = frozenset({"mail", "mailx", "sendmail", "swaks", "msmtp", "mutt", "neomutt", "s-nail", "ssmtp", "twilio",
                     "slack", "slack-cli", "slackcat", "telegram-send", "signal-cli", "apprise", "ntfy", "pushover",
                     "discord", "teams", "mattermost", "mmctl", "zulip-send", "notify-slack", "onesignal", "gotify",
                     "pushbullet"})
OPS_HTTP = frozenset({"curl", "wget", "http", "https", "xh", "xhs", "httpie", "curlie"})
