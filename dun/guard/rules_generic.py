"""Rules for the long tail: programs no other rule names, judged by what their command line says they do rather than
by their name. A tool that destroys what it manages says so with a verb (`aiven service terminate`, `exoscale compute
instance delete`, `confluent kafka topic delete`), one that publishes with another (`snapcraft upload`, `dzil
release`, `oras push ghcr.io/...`, `pack build --publish`), and a deploy to production names production (`eb deploy
acme-prod`, `sls deploy --stage production`, `mina production deploy`). Read and local verbs among the leading words
(`get`, `list`, `install`, `run`, ...) keep a command free, and so do `--dry-run` and `--help`; the programs whose own
rules decide (git, kubectl, docker, the package managers, the cloud CLIs) and the ones that take words as text
(echo, grep) are left to those rules.
"""

from __future__ import annotations

from dun.guard.ruletypes import Match

# Programs whose own rules decide their deletes (kubectl delete pod is allowed), and tools that take words as text
TEXT_AND_OWN = ("git", "make", "gmake", "just", "task", "kubectl", "oc", "docker", "podman", "nerdctl",
                "docker-compose", "helm", "rails", "redis-cli",
                "curl", "http", "https", "xh", "wget", "echo", "printf", "grep", "egrep", "fgrep", "rg", "ag", "ack",
                "sed", "awk", "gawk", "cat", "ls", "find", "man", "less", "more", "head", "tail", "jq", "yq", "test",
                "[", "which", "type", "touch", "mkdir", "cp", "mv", "ln", "tee", "diff", "file", "stat", "wc", "sort",
                "uniq", "tr", "cut", "xargs", "history", "alias", "export", "set", "read", "declare", "local", "say",
                "notify-send", "logger", "git-*", "python*", "node", "ruby", "perl", "php", "sh", "bash", "zsh")

# Verbs that destroy what a tool manages, wherever they stand among the leading words (after nouns)
DESTROY_VERBS = ("delete", "destroy", "purge", "terminate", "drop", "wipe", "nuke", "erase", "deleteall",
                 "deprovision", "decommission", "teardown", "undefine", "obliterate", "delete-*", "destroy-*",
                 "purge-*", "terminate-*", "drop-*", "wipe-*", "remove-*", "delete_*", "drop_*", "*:delete",
                 "*:destroy", "*:remove", "*:drop", "*:wipe", "*:purge", "*:terminate", "*-delete", "*-destroy",
                 "*-purge", "*-terminate", "*-rm", "*_delete")
# Leading words that mean the command looks, installs or runs something else: the verb after them is not the tool's
READ_VERBS = ("get", "list", "ls", "describe", "show", "view", "status", "info", "inspect", "help", "search", "logs",
              "log", "diff", "plan", "explain", "why", "history", "cat", "print", "install", "add", "i", "doctor",
              "version", "completion", "docs", "run", "exec", "x", "dlx", "test", "check", "validate", "lint",
              "template", "render", "preview", "whoami", "watch", "top", "events", "find", "query-*", "cache", "caches",
              "*-cache", "cache-*", "*cache*")
# Package managers and build tools: `npm install drop-down`, `cargo release` (a dry run by default) are theirs
PACKAGE_TOOLS = ("npm", "pnpm", "yarn", "bun", "pip", "pip3", "uv", "poetry", "pipx", "cargo", "go", "gem", "bundle",
                 "composer", "brew", "apt", "apt-get", "dnf", "yum", "pacman", "conda", "mamba", "micromamba", "nix",
                 "nix-env", "snap", "flatpak", "port", "choco", "winget", "scoop", "dotnet", "mvn", "mvnw", "gradle",
                 "gradlew", "sbt", "lein", "mix", "rebar3", "cabal", "stack", "opam", "nimble", "deno", "asdf", "mise",
                 "pyenv", "nvm", "rustup", "sdk", "luarocks", "cpanm", "vcpkg", "conan", "spack", "tox", "nox",
                 "pre-commit", "hatch", "pdm", "rye", "pixi", "corepack", "volta", "fnm", "n")
# Cloud CLIs: their own rules decide (an upload to a bucket of one's own is everyday work)
CLOUD_TOOLS = ("aws", "gcloud", "gsutil", "az", "azcopy", "doctl", "bq", "databricks", "hdfs", "hadoop")
# Boards flashed over a cable: `upload` means a device on the desk
DEVICE_TOOLS = ("arduino-cli", "pio", "platformio", "esptool", "esptool.py", "idf.py", "avrdude", "west", "adb",
                "fastboot", "picotool", "dfu-util", "mpremote", "ampy", "rshell")
# Shell builtins and wrappers: what they run is judged as its own command
_SHELL = ("eval", "exec", "command", "builtin", "source", ".", "trap", "sudo", "doas", "env", "nohup", "time",
          "timeout", "nice", "watch", "parallel", "coproc", "then", "do", "if", "while", "until", "for", "case",
          "function", "select", "unset", "hash", "complete", "compgen", "help", "tldr", "whatis", "info", "apropos",
          "whereis", "printenv", "true", "false", "exit", "return", "shift", "wait", "jobs", "fg", "bg", "disown",
          "pwsh", "powershell", "pwsh.exe", "powershell.exe", "cmd.exe")  # Windows shells: windows.py reads their code
_OWN = (*TEXT_AND_OWN, *_SHELL, *PACKAGE_TOOLS, *CLOUD_TOOLS, "gh", "glab", "hub", "terraform", "tofu", "pulumi",
        "helm",
        "vault", "consul", "heroku", "fly", "flyctl", "vercel", "netlify", "firebase", "wrangler")
_HELP = ("-h", "--help", "--dry-run", "--dryrun", "--noop", "--check", "--plan", "--what-if", "--whatif")
_DRY = (*_HELP, "--snapshot", "--skip-publish", "--skip=publish", "--build-only", "--local")
PUBLISH_VERBS = ("publish", "publish-*", "*:publish", "*-publish", "upload", "upload-*", "*:upload", "*-upload",
                 "release", "release:*", "*:release", "full-release", "ship")
DEPLOY_VERBS = ("deploy", "deploy:*", "*:deploy", "redeploy", "up", "apply", "upgrade", "rollout", "rollback",
                "promote", "release", "update", "sync", "push", "migrate", "db:migrate", "scale", "switch", "activate",
                "set", "patch", "replace", "edit", "install", "reconcile", "restart", "import", "reset")
# Leading words that pick or configure where later commands go (gcloud config set project acme-prod)
_CHOOSING = ("config", "configure", "account", "accounts", "auth", "login", "logout", "profile", "profiles", "context",
             "contexts", "use", "use-context", "select", "repo", "stack", "link", "env:pull", "target")
# Programs that take words as text, and local runtimes (a compose file named for production run here is a test)
_TEXT = tuple(p for p in TEXT_AND_OWN if p not in ("git", "make", "gmake", "just", "task", "kubectl", "oc", "helm"))
_LOCAL_RUNTIMES = ("docker", "podman", "nerdctl", "docker-compose", "podman-compose", "python*", "node", "ruby",
                   "perl", "php", "rails")
_REGISTRY = ("oci://*", "docker://*", "*.io/*", "*.com/*", "*.dev/*", "*.net/*", "*.org/*", "*.azurecr.io*",
             "*.nupkg", "*.snap", "*.vsix", "*.gem", "*.whl", "*.crate")
_LOCAL = ("localhost[:/]*", "127.0.0.1[:/]*", "*localhost:*", "*://localhost*", "*://127.0.0.1*", "docker-daemon:*",
          "oci-archive:*", "dir:*")
# Container runners whose --publish maps a port (finch run --publish 8080:80)
_CONTAINER_RUNNERS = ("finch", "lima", "limactl", "colima", "apptainer", "singularity", "incus", "lxc", "k3d", "kind",
                      "minikube", "podman-remote", "docker-machine", "ctr", "crictl", "act", "devcontainer")
_VCS = ("hg", "jj", "sl", "bzr", "fossil", "darcs", "dvc", "git-lfs", "datalad")

# tool.destroy (rules_cloud.py): the verbs of destroying, wherever they stand
GENERIC_DESTROY: tuple[Match, ...] = (
    Match(verbs=DESTROY_VERBS, verbs_none=READ_VERBS, programs_none=_OWN, flags_none=_HELP),
          Match(verbs=("rm", "remove", "del"), subcommands_none=("rm", "remove", "del"), verbs_none=READ_VERBS,
          programs_none=(*_OWN, "cmake"), flags_none=_HELP,
                flags_any=("-r", "-R", "--recursive", "-rf", "-fr", "--force", "-f", "--all", "-a", "--purge")),
          Match(subcommands=("rm", "remove", "del"), programs_none=(*_OWN, "cmake"), flags_none=_HELP,
          flags_any=("-r", "-R", "--recursive", "-rf", "-fr", "--all", "-a"),
          args_none=("/*", "~*", ".*", "*/*", "$*")),  # pass rm -rf work: names, not paths (paths: a wrapped rm)
    Match(verbs=("rm", "remove", "del", "untag"), programs_none=_OWN, flags_none=_HELP,
          args_any=("oci://*", "docker://*", "*.io/*:*", "*.com/*:*", "*.dev/*:*")),  # regctl tag rm REF
    Match(verbs=("reset", "reset-*", "*:reset"), subcommands_none=("reset", "reset-*", "*:reset"),
          verbs_none=(*READ_VERBS, "migrate", "migrate:*", "migration*", "db", "db:*", "database", "schema"),
          programs_none=_OWN, flags_none=_HELP),  # neonctl branches reset, after a noun; databases: rules_data.py
    Match(verbs=("forget", "prune"), flags_any=("--prune", "--keep-last=0", "--keep-daily=0"),
                programs_none=_OWN),
          Match(programs=("restic", "borg", "kopia", "duplicity", "tarsnap", "rdiff-backup", "duplicati-cli"),
                verbs=("forget", "prune", "delete", "remove-*", "cleanup", "compact"), flags_none=_HELP),
          Match(programs=("crictl", "ctr"), verbs=("rm", "rmi", "rmp", "remove", "delete", "del", "prune"),
          flags_any=("--all", "-a", "--prune")),  # a node's containers and images, all of them
    Match(programs=("crictl", "ctr"), verbs=("rm", "rmi", "rmp", "remove", "delete", "del"),
          args_any=("*$(*", "*`*", "{}")),
    Match(signals=("code-destroys",)),  # boto3 terminate_instances, delete_namespace, DeleteBucketCommand
    Match(programs=("tarsnap",), flags_any=("-d",)),
          Match(programs=("borg",), verbs=("delete", "prune", "recreate")))
# publish.release (rules_shared.py): the verbs of publishing, pushes to a registry, deploys to production
GENERIC_PUBLISH: tuple[Match, ...] = (
    Match(signals=("publishes",)),
    Match(verbs=PUBLISH_VERBS, verbs_none=READ_VERBS, programs_none=(*_OWN, *DEVICE_TOOLS), flags_none=_DRY),
          Match(flags_any=("--publish", "--push", "--upload", "--upload-*", "--deploy", "--release-to-*"),
                programs_none=(*_OWN, *DEVICE_TOOLS, *_VCS, *_CONTAINER_RUNNERS), flags_none=_DRY),
          Match(verbs=("push", "push-*", "copy", "cp", "mirror", "put"), args_any=_REGISTRY, args_none=_LOCAL,
                programs_none=(*TEXT_AND_OWN, *_SHELL, *CLOUD_TOOLS, *_VCS, *DEVICE_TOOLS), flags_none=_DRY),
          Match(programs=("ghr", "github-release", "gh-release", "*-upload", "*-publish", "dzil", "cpan-upload",
                          "shipit"), flags_none=_DRY, verbs_none=READ_VERBS),
          Match(signals=("prod-target",), verbs=DEPLOY_VERBS, verbs_none=(*READ_VERBS, *_CHOOSING),
                programs_none=(*_TEXT, *_SHELL, *PACKAGE_TOOLS, *_LOCAL_RUNTIMES), flags_none=_DRY),
          Match(signals=("prod-target",), programs=("ansible-playbook", "ansible", "salt", "salt-ssh", "pyinfra",
                                                    "chef-client", "knife", "puppet", "bolt"),
                flags_none=(*_DRY, "-C", "--syntax-check", "--list-hosts", "--list-tasks", "--diff")))
