"""Built-in rules about cloud, infrastructure and hosted services, and about any tool destroying what it manages
(clusters, VMs, apps, releases, secrets, datasets): state shared with others, which no filesystem sandbox protects."""

from __future__ import annotations

from dun.guard.rules_generic import GENERIC_DESTROY, TEXT_AND_OWN
from dun.guard.ruletypes import Match, Rule

# Verbs a tool uses to destroy what it manages (clusters, VMs, apps, secrets, packages, datasets), as its command or
# the command after a noun: `multipass delete`, `hcloud server delete`, `security delete-generic-password`
_DESTROY_VERBS = ("delete", "destroy", "purge", "undefine", "unregistervm", "teardown", "delete-*", "destroy-*",
                  "purge-*")
# mc's `local` alias is the MinIO on this machine: one object removed there is the developer's own test data
_NOT_LOCAL = (*(f"{'local/'[:i]}[!{c}]*" for i, c in enumerate("local/")), "l", "lo", "loc", "loca", "local")

CLOUD_RULES: tuple[Rule, ...] = (
    Rule("cloud.delete", "deletes cloud resources or data (aws, gcloud, gsutil, az, doctl, heroku, fly, vercel, "
         "firebase, rclone, s3cmd, mc, wrangler)",
         (Match(programs=("aws",), subcommands=("s3",), actions=("rm", "rb")),
          Match(programs=("aws",), subcommands=("s3",), actions=("sync",), flags_any=("--delete",)),
          Match(programs=("aws",), actions=("delete-*", "terminate-*", "batch-delete-*", "purge-*", "deregister-*",
                                            "schedule-key-deletion", "remove-*", "disable-key")),
          Match(programs=("gcloud",), args_any=("delete", "rm")),
          Match(programs=("gsutil",), subcommands=("rm", "rb")),
          Match(programs=("az",), args_any=("delete", "purge", "delete-batch")),
          Match(programs=("doctl",), args_any=("delete", "rm")),
          Match(programs=("heroku",), subcommands=("*:destroy", "*:delete", "pg:reset", "destroy")),
          Match(programs=("fly", "flyctl"), subcommands=("destroy",)),
          Match(programs=("fly", "flyctl"), subcommands=("apps", "volumes", "machines"), actions=("destroy", "rm")),
          Match(programs=("vercel",), subcommands=("remove", "rm")),
          Match(programs=("netlify",), subcommands=("sites:delete",)),
          Match(programs=("firebase",), subcommands=("*:delete", "database:remove")),
          Match(programs=("rclone",), subcommands=("purge", "delete", "deletefile", "rmdirs", "sync")),
          Match(programs=("s3cmd",), subcommands=("del", "rm", "rb")),
          Match(programs=("mc",), subcommands=("rb",)),
          Match(programs=("mc",), subcommands=("rm",), flags_any=("-r", "--recursive", "--force", "--versions",
                                                                  "--incomplete", "--older-than", "--newer-than")),
          Match(programs=("mc",), subcommands=("rm",), args_any=_NOT_LOCAL),
          Match(programs=("wrangler",), verbs=("delete", "destroy"), verbs_none=("key",)))),  # one KV key is free
    Rule("hosted.delete", "deletes repositories, releases, secrets or published packages (gh ... delete, "
         "gh api -X DELETE, npm unpublish, cargo/gem yank, vault/consul deletes)",
         (Match(programs=("gh", "glab"), args_any=("delete",)),
          Match(programs=("gh", "glab"), subcommands=("secret", "variable", "label", "cache", "release", "ssh-key",
                                                     "gpg-key", "codespace", "ruleset"), args_any=("remove", "rm")),
          Match(programs=("curl", "http", "xh"), values_any=("-X=DELETE", "--request=DELETE"),
                subcommands=("https://api.github.com/*", "https://gitlab.com/api/*", "*/api/v[0-9]/projects/*")),
          Match(programs=("gh",), subcommands=("api",), args_any=("*/git/refs/*",),
                values_any=("-F=force=true", "-f=force=true", "--field=force=true")),
          Match(programs=("gh",), subcommands=("api",), values_any=("-X=[Dd][Ee][Ll]*", "--method=[Dd][Ee][Ll]*")),
          Match(programs=("npm", "pnpm", "yarn"), subcommands=("unpublish",)),
          Match(programs=("cargo", "gem"), subcommands=("yank",)),
          Match(programs=("mix",), subcommands=("hex.retire", "hex.revert")),
          Match(programs=("vault",), args_any=("delete", "destroy", "disable")),
          Match(programs=("consul",), subcommands=("kv",), actions=("delete",)))),
    Rule("hosted.settings", "changes what others rely on in a hosted repository (workflows disabled, archived, "
         "renamed, transferred, its default branch or protection changed, an admin merge past the checks, a public "
         "copy made); leave that to the operator",
         (Match(programs=("gh", "glab"), subcommands=("workflow",), actions=("disable",)),
          Match(programs=("gh", "glab"), subcommands=("repo",), actions=("archive", "rename", "transfer", "unarchive")),
          Match(programs=("gh",), subcommands=("repo",), actions=("edit",), flags_any=("--default-branch",
                "--enable-*", "--delete-branch-on-merge", "--allow-forking", "--template")),
          Match(programs=("gh",), subcommands=("repo",), actions=("edit",), values_any=("--default-branch=*",)),
          Match(programs=("gh",), subcommands=("repo",), actions=("create", "fork"), flags_any=("--public",)),
          Match(programs=("gh",), subcommands=("repo",), actions=("sync",), flags_any=("--force",)),
          Match(programs=("gh",), subcommands=("pr",), actions=("merge",), flags_any=("--admin",)),
          Match(programs=("gh",), subcommands=("api",), args_any=("*/protection*", "*/transfer", "*/collaborators*",
                                                                  "*/rulesets*", "*/actions/permissions*",
                                                                  "*/environments/*", "*/keys", "*/hooks*"),
                values_any=("-X=[PpDd]*", "--method=[PpDd]*")),
          Match(programs=("gh",), subcommands=("api",), values_any=("-[fF]=default_branch=*", "-[fF]=archived=true",
                                                                    "-[fF]=name=*", "--*field=default_branch=*",
                                                                    "--*field=archived=true", "--*field=name=*")),
          Match(programs=("gh",), subcommands=("api",), args_any=("*/transfer", "*/collaborators/*", "*/keys",
                                                                  "*/hooks"),
                flags_any=("-f", "-F", "--field", "--raw-field", "--input")))),
    Rule("tool.destroy", "destroys what a tool manages (X ... delete, destroy, terminate, drop, purge: clusters, VMs, "
         "apps, topics, releases, backups, secrets, packages, datasets), which is not this repository's files; leave "
         "that to the operator",
         (Match(subcommands=_DESTROY_VERBS, programs_none=TEXT_AND_OWN, flags_none=("-h", "--help", "--dry-run"),
                verbs_none=("*cache*",)),  # huggingface-cli delete-cache: a cache, had back
          Match(actions=_DESTROY_VERBS, programs_none=TEXT_AND_OWN, flags_none=("-h", "--help", "--dry-run"),
                subcommands_none=("cache", "caches", "cache-*")),  # pip cache purge: a cache, had back
          Match(programs=("railway",), subcommands=("down",)),
          Match(programs=("scw", "oci", "ibmcloud", "exo", "civo", "vultr-cli", "yc", "aliyun", "tccli", "upctl",
                          "openstack", "hcloud", "linode-cli", "doctl", "metal", "outscale"), args_any=_DESTROY_VERBS),
          Match(programs=("bq",), subcommands=("rm",)), Match(programs=("databricks",), subcommands=("fs",),
                                                             actions=("rm",)),
          Match(programs=("hdfs", "hadoop"), subcommands=("dfs", "fs"), flags_any=("-rm", "-rmr", "-rmdir")),
          Match(programs=("dvc",), subcommands=("gc",), flags_any=("-c", "--cloud")),
          Match(programs=("sst",), subcommands=("remove",)), Match(programs=("tilt",), subcommands=("down",),
                                                                  flags_any=("--delete-namespaces",)),
          Match(programs=("nomad",), subcommands=("job",), actions=("stop",), flags_any=("-purge",)),
          *GENERIC_DESTROY)),
)
