"""Built-in rules about state shared with others, which no filesystem sandbox protects: databases, containers and
clusters, cloud and hosted services, packages registries, and the machine's users, jobs, processes, keys and services.
"""

from __future__ import annotations

from dun.guard.rules_cloud import CLOUD_RULES
from dun.guard.rules_data import DATA_RULES
from dun.guard.rules_generic import GENERIC_PUBLISH, TEXT_AND_OWN
from dun.guard.ruletypes import Match, Rule

_DOCKERS = ("docker", "podman", "nerdctl")
_COMPOSE = ("docker-compose", "podman-compose")
_FORCED = ("-f", "--force", "-v", "--volumes", "-a", "--all")  # a running container, its volumes, or all of them
_BULK = ("*$(*", "*`*", "{}", "*{}*")  # names that are a command's output: $(docker ps -aq), xargs
_FILTERED = ("*--filter[ =]name=*", "*-f name=*")  # docker stop $(docker ps -q --filter name=test-db): those
_APT = ("apt", "apt-get", "aptitude")
_RPM = ("yum", "dnf", "microdnf", "zypper")

CONTAINER_RULES: tuple[Rule, ...] = (
    Rule("container.host-access", "starts a container that mounts /, the home directory, a system path or a socket "
         "writable, or runs it with the host's privileges",
         (Match(effects=("mount",), where=("ancestor", "home", "system", "outside", "device", "unknown")),
          Match(signals=("privileged-container",)))),
    Rule("container.destroy", "removes volumes or running containers (rm -f), or stops, kills or removes containers "
         "and images in bulk (prune, $(docker ps -q), --all); name them one by one (docker stop x, docker rm x)",
         (Match(programs=_DOCKERS, subcommands=("rm", "rmi"), flags_any=_FORCED),
          Match(programs=_DOCKERS, subcommands=("rm", "rmi", "kill", "stop", "pause"), args_any=_BULK,
                args_none=_FILTERED),
          Match(programs=_DOCKERS, subcommands=("stop", "kill", "pause"), flags_any=("-a", "--all")),
          Match(programs=_DOCKERS, subcommands=("container", "image"), actions=("rm", "remove", "kill"),
                flags_any=_FORCED),
          Match(programs=_DOCKERS, subcommands=("container", "image"), actions=("rm", "remove", "kill", "stop",
                                                                             "pause"), args_any=_BULK),
          Match(programs=_DOCKERS, subcommands=("container",), actions=("prune",)),
          Match(programs=_DOCKERS, subcommands=("image",), actions=("prune",), flags_any=("-a", "--all")),
          Match(programs=_DOCKERS, subcommands=("builder", "buildx"), actions=("prune",), flags_any=("-a", "--all")),
          Match(programs=_DOCKERS, subcommands=("system", "volume", "buildx", "secret",
                                                "config", "service", "stack", "node", "pod"),
                actions=("rm", "remove", "prune", "reset", "kill")),
          Match(programs=_DOCKERS, subcommands=("network",), actions=("prune",)),
          Match(programs=_DOCKERS, subcommands=("network",), actions=("rm", "remove"), args_any=_BULK),  # no data
          Match(programs=_DOCKERS, subcommands=("compose",), actions=("down",), flags_any=("-v", "--volumes", "--rmi")),
          Match(programs=_DOCKERS, subcommands=("compose",), actions=("rm",), flags_any=("-v", "--volumes")),
          Match(programs=_COMPOSE, subcommands=("down",), flags_any=("-v", "--volumes", "--rmi")),
          Match(programs=_COMPOSE, subcommands=("rm",), flags_any=("-v", "--volumes")),
          Match(programs=_DOCKERS, subcommands=("swarm",), actions=("leave",)))),
    Rule("infra.destroy", "destroys infrastructure or cloud data (terraform destroy, s3 rm --recursive, "
         "kubectl delete namespace/--all)",
         (Match(programs=("terraform", "tofu", "terragrunt"), subcommands=("destroy",)),
          Match(programs=("terraform", "tofu", "terragrunt"), subcommands=("apply",), flags_any=("-destroy",)),
          Match(programs=("terragrunt",), subcommands=("run-all", "run"), args_any=("destroy",)),
          Match(programs=("terraform", "tofu"), subcommands=("state", "workspace"), actions=("rm", "delete")),
          Match(programs=("pulumi",), subcommands=("destroy", "down")),
          Match(programs=("pulumi",), subcommands=("stack",), actions=("rm",)),
          Match(programs=("cdk", "cdktf"), subcommands=("destroy",)),
          Match(programs=("serverless", "sls"), subcommands=("remove",)),
          Match(programs=("sam",), subcommands=("delete",)),
          Match(programs=("eksctl",), subcommands=("delete",)),
          Match(programs=("kubectl", "oc"), subcommands=("delete",), args_any=("ns", "namespace", "namespaces",
                                                                               "ns/*", "namespace/*")),
          Match(programs=("kubectl", "oc"), subcommands=("delete",), flags_any=("--all", "-A", "--all-namespaces")))),
    Rule("cluster.destroy", "deletes Kubernetes resources other than pods and jobs, drains nodes, or uninstalls "
         "Helm releases",
         (Match(programs=("kubectl", "oc"), subcommands=("delete",),
                args_none=("po", "pod", "pods", "job", "jobs", "po/*", "pod/*", "pods/*", "job/*", "jobs/*")),
          Match(programs=("kubectl", "oc"), subcommands=("drain",)),
          Match(programs=("flux", "istioctl", "linkerd", "cilium", "kubeadm", "velero", "k3s-uninstall.sh"),
                subcommands=("uninstall", "reset")),  # what runs the cluster taken out of it
          Match(programs=("kubectl", "oc"), subcommands=("apply",), flags_any=("--prune",), flags_none=("--dry-run",),
                values_none=("--dry-run=*",)),
          Match(programs=("kubectl", "oc"), subcommands=("replace",), flags_any=("--force",)),
          Match(programs=("helm",), subcommands=("uninstall", "delete", "del", "un")))),
)

SYSTEM_RULES: tuple[Rule, ...] = (
    Rule("sys.crontab", "replaces or removes the user's crontab (only crontab -l is allowed)",
         (Match(programs=("crontab",), flags_none=("-l",)),)),
    Rule("sys.schedule", "schedules commands to run later, outside this session and its sandbox (at, batch, "
         "systemd-run)",
         (Match(programs=("at", "batch"), flags_none=("-l", "-c", "-r", "-d")), Match(programs=("systemd-run",)))),
    Rule("sys.kill-all", "signals every process or every process of a user (kill -1, killall -u, pkill ., tmux "
         "kill-server)",
         (Match(signals=("kill-all",)), Match(programs=("killall5",)),
          Match(programs=("tmux",), subcommands=("kill-server",)))),
    Rule("sys.fork-bomb", "defines a function that starts itself more than once (a fork bomb)",
         (Match(signals=("fork-bomb",)),)),
    Rule("sys.users", "deletes, locks or changes users, groups or passwords",
         (Match(programs=("userdel", "deluser", "groupdel", "delgroup", "usermod", "chpasswd", "chsh", "chfn",
                          "vipw", "vigr")),
          Match(programs=("visudo",), flags_none=("-c", "--check")),  # visudo -c only checks the sudoers syntax
          Match(programs=("passwd",), flags_none=("-S", "--status")))),
    Rule("sys.packages", "removes system or global packages, language versions or environments (apt purge, npm -g, "
         "pyenv/nvm/rustup uninstall, conda env remove, pip uninstall of everything)",
         (Match(programs=_APT, subcommands=("remove", "purge", "autoremove", "autopurge"),
                flags_none=("-s", "--simulate", "--just-print", "--recon", "--no-act")),  # apt-get -s: a rehearsal
          Match(programs=("dpkg",), flags_any=("-r", "-P", "--remove", "--purge")),
          Match(programs=_RPM, subcommands=("remove", "erase", "autoremove", "rm")),
          Match(programs=("pacman",), flags_any=("-R", "--remove")),
          Match(programs=("apk",), subcommands=("del",)),
          Match(programs=("brew", "port"), subcommands=("uninstall", "remove", "rm")),
          Match(programs=("snap", "flatpak"), subcommands=("remove", "uninstall")),
          Match(programs=("npm", "pnpm"), subcommands=("uninstall", "remove", "rm", "un", "r"),
                flags_any=("-g", "--global", "--location=global")),
          Match(programs=("yarn", "composer"), subcommands=("global",), actions=("remove", "uninstall")),
          Match(programs=("dotnet",), subcommands=("tool",), actions=("uninstall",), flags_any=("-g", "--global")),
          Match(subcommands=("uninstall", "remove", "rm", "un"), flags_any=("-g", "--global"),
                programs_none=("git", "docker", "kubectl")),  # X uninstall -g: the machine's, not the project's
          Match(subcommands=("self",), actions=("uninstall",)),  # rustup self uninstall, pdm self uninstall
          Match(programs=("conda", "mamba", "micromamba"), subcommands=("env",), actions=("remove",)),
          Match(programs=("conda", "mamba", "micromamba"), subcommands=("remove", "uninstall"),
                flags_any=("--all",)),
          Match(programs=("pyenv", "rbenv", "nodenv", "goenv", "nvm", "fnm", "volta", "asdf", "mise", "rtx", "sdk",
                          "jenv", "pipx", "gvm"), subcommands=("uninstall", "uninstall-all", "remove", "rm"),
                flags_none=("-h", "--help")),
          Match(programs=("rustup",), subcommands=("toolchain",), actions=("uninstall", "remove")),
          Match(programs=("rustup",), subcommands=("self",), actions=("uninstall",)),
          Match(programs=("pip", "pip3", "uv"), subcommands=("uninstall",), args_any=_BULK),
          Match(programs=("pip", "pip3", "uv"), subcommands=("uninstall",), args_any=("<(*",)),  # -r <(pip freeze)
          Match(programs=("gem",), subcommands=("uninstall",), flags_any=("-a", "--all")))),
    Rule("sys.keys", "deletes GPG keys, the SSH agent's identities or stored credentials",
         (Match(programs=("gpg", "gpg2"), flags_any=("--delete-key*", "--delete-secret-key*",
                                                    "--delete-secret-and-public-key*")),
          Match(programs=("ssh-add",), flags_any=("-D", "-d")),
          Match(programs=("git",), subcommands=("credential",), actions=("reject", "erase")))),
    Rule("sys.services", "stops, disables or masks services, flushes the firewall, unmounts filesystems or changes "
         "kernel settings",
         (Match(programs=("systemctl",), subcommands=("stop", "disable", "mask", "kill", "isolate", "halt")),
          Match(programs=("systemctl",), flags_any=("--now",), subcommands=("disable", "mask")),
          Match(programs=("service",), args_any=("stop",)),
          Match(programs=("launchctl",), subcommands=("unload", "remove", "bootout", "disable")),
          Match(programs=("iptables", "ip6tables"), flags_any=("-F", "--flush", "-X", "--delete-chain", "-P",
                                                               "--policy")),
          Match(programs=("ip",), subcommands=("link",), args_any=("down",)),
          Match(programs=("ip",), subcommands=("addr", "address", "route"), actions=("flush", "del", "delete")),
          Match(programs=("ifdown",)), Match(programs=("ifconfig",), args_any=("down",)),
          Match(programs=("nmcli",), subcommands=("networking", "radio"), args_any=("off",)),
          Match(programs=("nmcli",), subcommands=("con", "connection", "dev", "device"), actions=("down", "delete",
                                                                                                 "disconnect")),
          Match(programs=("setenforce",), args_none=("1", "Enforcing", "enforcing")),
          Match(programs=("mount",), subcommands=("remount*", "*,remount*")),
          Match(programs=("mount",), args_any=("remount*", "*,remount*")),
          Match(programs=("ufw",), subcommands=("disable", "reset")),
          Match(programs=("nft",), subcommands=("flush",)),
          Match(programs=("swapoff",)),
          Match(programs=("umount",), subcommands_none=("/tmp/*",)),  # a loop mount of a scratch image under /tmp
          Match(programs=("sysctl",), flags_any=("-w", "--write", "-p", "--load")),
          Match(programs=("loginctl",), subcommands=("terminate-*", "kill-*")))),
)

_NODE = ("npm", "pnpm", "yarn", "bun")
_DRY = ("--dry-run", "-n", "--dryrun", "--snapshot", "--skip-publish", "--skip=publish", "--help", "-h", "--build-only")
_GRADLE_PUBLISH = ("publish", "publish[!T]*", "publishTo[!M]*", "publishToMaven[!L]*",  # not ...ToMavenLocal
                   "*:publish", "*:publish[!T]*", "*:publishTo[!M]*", "*:publishToMaven[!L]*")
_NOT_PROD = ("nonprod-target",)  # fly deploy -c fly.staging.toml, firebase deploy -P staging: not production
_RELEASE_NAMES = ("publish", "release", "deploy", "upload", "ship")  # targets and scripts named for releasing
_LOCAL_REGISTRY = ("localhost[:/]*", "127.0.0.1[:/]*", "*localhost:*")
# Deploys to hosting platforms' production, like fly deploy and netlify deploy --prod (infrastructure deploys through
# the cloud providers' own tools, gcloud run deploy or aws cloudformation deploy, are everyday work)
_DEPLOYS = (
    Match(programs=("kamal", "mrsk", "cap", "render"), args_any=("deploy", "deploy:*"), flags_none=_DRY),
    Match(programs=("kamal", "mrsk", "render"), subcommands=("deploy", "redeploy", "rollback"), flags_none=_DRY),
    Match(programs=("railway",), subcommands=("up", "deploy", "redeploy")),
    Match(programs=("cf",), subcommands=("push",)),
    Match(programs=("vercel",), subcommands=("promote",)),
    Match(programs=("dokku",), subcommands=("deploy", "git:sync", "ps:rebuild")),
)


def _anywhere(programs: tuple[str, ...], words: tuple[str, ...]) -> tuple[Match, ...]:
    """The words as the subcommand or as any operand after it (mvn -B deploy, npm --prefix x publish)."""
    return (Match(programs=programs, subcommands=words, flags_none=_DRY),
            Match(programs=programs, args_any=words, flags_none=_DRY))


PUBLISH_RULES: tuple[Rule, ...] = (
    Rule("publish.release", "publishes a package, image, release or site, or deploys to production (X publish, "
         "upload, release, push to a registry, deploy --prod); leave releases to the operator (--dry-run is allowed)",
         (*_anywhere(_NODE, ("publish",)),
          Match(programs=("lerna", "changeset", "clean-publish", "jsr", "deno", "vsce", "ovsx", "poetry", "uv", "hatch",
                          "flit", "pdm", "rye", "maturin", "cargo", "dart", "flutter", "ko", "pod"),
                subcommands=("publish",), flags_none=_DRY),
          Match(programs=("semantic-release", "release-it", "np", "clean-publish"), flags_none=_DRY),
          Match(programs=("dart", "flutter"), subcommands=("pub",), actions=("publish",), flags_none=_DRY),
          Match(programs=("twine", "maturin", "conda", "anaconda"), subcommands=("upload",)),
          Match(programs=("cargo",), subcommands=("release", "ws", "workspaces"), flags_any=("--execute", "-x", "--yes",
                                                                                          "-y")),
          Match(programs=("cargo",), subcommands=("ws", "workspaces"), actions=("publish",), flags_none=_DRY),
          Match(programs=("gem",), subcommands=("push",)),
          Match(programs=("rake",), subcommands=("release", "release:*")),
          Match(programs=("docker", "podman", "nerdctl", "buildah"), subcommands=("push",), args_none=_LOCAL_REGISTRY),
          Match(programs=("docker", "podman", "nerdctl"), subcommands=("image", "manifest", "compose"),
                actions=("push",)),
          Match(programs=("docker-compose", "podman-compose"), subcommands=("push",)),
          Match(programs=("docker", "podman"), subcommands=("buildx", "build"), flags_any=("--push",)),
          Match(programs=("docker", "podman"), subcommands=("buildx",), values_any=("*type=registry*",)),
          Match(programs=("docker", "podman"), subcommands=("buildx",), args_any=("type=registry*", "*,push=true*")),
          Match(programs=("docker",), subcommands=("buildx",), actions=("imagetools",), args_any=("create",),
                flags_none=_DRY),
          Match(programs=("python*",), subcommands=("setup.py", "*/setup.py"), args_any=("upload", "register")),
          Match(programs=_NODE, subcommands=("dist-tag", "dist-tags"), actions=("add", "rm")),
          Match(programs=_NODE, subcommands=("deprecate", "undeprecate")),
          Match(programs=("nx",), subcommands=("release",), flags_none=(*_DRY, "-d")),
          Match(programs=("release-please",), subcommands=("github-release",)),
          Match(programs=("docker",), subcommands=("trust",), actions=("sign",)),
          Match(programs=("skopeo", "crane", "regctl"), subcommands=("copy", "cp", "push", "image")),
          Match(programs=("ko",), subcommands=("build", "resolve", "apply"), values_none=("--push=false",),
                flags_none=("-L", "--local", "--push=false")),
          Match(programs=("gh",), subcommands=("release",), actions=("create",), flags_none=("-d", "--draft")),
          Match(programs=("gh",), subcommands=("release",), actions=("upload", "edit")),
          Match(programs=("gh",), subcommands=("api",), args_any=("*/releases", "*/releases/*"),
                values_any=("-X=[Pp]*", "--method=[Pp]*")),
          Match(programs=("hub",), subcommands=("release",), actions=("create", "edit")),
          Match(programs=("gh",), subcommands=("workflow",), actions=("run",),
                args_any=tuple(f"*{n}*" for n in _RELEASE_NAMES)),  # gh workflow run release.yml
          Match(programs=("goreleaser",), subcommands=("release", ""), flags_none=_DRY),
          *_anywhere(("mvn", "mvnw"), ("deploy", "release:perform", "deploy:deploy*")),
          *_anywhere(("gradle", "gradlew"), _GRADLE_PUBLISH),
          *_anywhere(("sbt",), ("publish", "+publish", "publish[!LM]*", "+publish[!LM]*")),  # not publishLocal
          Match(programs=("lein",), subcommands=("deploy",)),
          Match(subcommands=("publish",), programs_none=(*TEXT_AND_OWN, "dotnet"), flags_none=_DRY),  # opam publish
          Match(actions=("publish",), programs_none=(*TEXT_AND_OWN, "dotnet", "gh"), flags_none=_DRY),
          Match(programs=("stack", "cabal", "conan", "hackage-cli"), subcommands=("upload",), flags_none=_DRY),
          Match(programs=("jreleaser",), subcommands=("full-release", "release", "deploy", "publish", "announce"),
                flags_none=(*_DRY, "--dryrun")),
          Match(programs=("dotnet",), subcommands=("nuget",), actions=("push",)),
          Match(programs=("nuget",), subcommands=("push",)),
          Match(programs=("pod",), subcommands=("trunk",), actions=("push",)),
          Match(programs=("mix",), subcommands=("hex.publish",)),
          Match(programs=("helm",), subcommands=("push", "cm-push"), args_none=(*_LOCAL_REGISTRY, "*://localhost*")),
          Match(programs=("gcloud",), args_any=("upload",), subcommands=("artifacts",)),
          Match(programs=("aws",), subcommands=("codeartifact",), actions=("publish-package-version",)),
          Match(programs=("jfrog", "jf"), subcommands=("rt",), actions=("upload", "u")),
          Match(programs=("firebase", "wrangler", "fly", "flyctl", "eas"), subcommands=("deploy", "publish",
                                                                                      "submit"), flags_none=_DRY,
                signals_none=_NOT_PROD),
          Match(programs=("firebase",), subcommands=("hosting:channel:deploy",), args_any=("live",)),
          Match(programs=("vercel",), flags_any=("--prod",)),
          Match(programs=("wrangler", "firebase", "flyctl", "fly"), args_any=("deploy", "publish"), flags_none=_DRY,
                signals_none=_NOT_PROD),
          Match(programs=("firebase",), subcommands=("*:deploy",), subcommands_none=("hosting:channel:deploy",),
                signals_none=_NOT_PROD),
          Match(programs=("netlify",), subcommands=("deploy",), flags_any=("--prod",)),
          Match(programs=("heroku",), subcommands=("container:release", "container:push", "releases:rollback",
                                                   "builds:create", "deploy:*")),
          *_DEPLOYS,
          Match(programs=("surge", "gh-pages")), Match(programs=("ghp-import",), flags_any=("-p", "--push")),
          Match(programs=("mkdocs",), subcommands=("gh-deploy",)),
          Match(programs=("fastlane",), args_any=("release", "deploy", "*upload*", "submit*", "appstore", "beta",
                                                  "playstore", "supply", "deliver", "pilot")),
          Match(programs=("fastlane",), subcommands=("release", "deploy", "*upload*", "submit*", "appstore", "beta",
                                                     "supply", "deliver", "pilot")),
          Match(programs=("git",), subcommands=("push",), args_any=("heroku", "dokku")),
          Match(programs=("make", "gmake", "just", "task"), args_any=_RELEASE_NAMES,
                flags_none=(*_DRY, "--just-print", "--recon")),
          Match(programs=("make", "gmake", "just", "task"), subcommands=_RELEASE_NAMES,
                flags_none=(*_DRY, "--just-print", "--recon")),
          Match(programs=_NODE, subcommands=("run", "run-script"), actions=_RELEASE_NAMES,  # by the script's name
                args_none=_DRY),
          Match(programs=("yarn", "pnpm", "bun"), subcommands=_RELEASE_NAMES, flags_none=_DRY, args_none=_DRY),
          *GENERIC_PUBLISH)),
)

EXFIL_RULES: tuple[Rule, ...] = (
    Rule("net.exfiltrate", "sends a secret off the machine (keys, credentials, tokens in a URL or body, .env files, "
         "the environment) or copies one into the repository; secrets stay where they are",
         (Match(signals=("exfiltrate",)),)),
    Rule("net.expose", "opens this machine to the network (ssh -R, a tunnel of ssh, a database or raw TCP, a shell "
         "on a socket); use ssh -L, or ngrok http for a web server",
         (Match(signals=("expose",)),)),
    Rule("hosted.expose", "makes a private repository or package public, or gives others the right to publish it "
         "(gh repo edit --visibility public, npm owner add, npm access grant)",
         (Match(programs=("gh",), subcommands=("repo",), actions=("edit",), values_any=("--visibility=public",)),
          Match(programs=("gh",), subcommands=("repo",), actions=("edit",), args_any=("public",)),
          Match(programs=("gh",), subcommands=("api",), values_any=("-[fF]=private=false", "--*field=private=false",
                                                                    "-[fF]=visibility=public",
                                                                    "--*field=visibility=public")),
          Match(programs=_NODE, subcommands=("owner", "author"), actions=("add", "rm", "remove")),
          Match(programs=("cargo",), subcommands=("owner",), flags_any=("-a", "--add", "-r", "--remove")),
          Match(programs=_NODE, subcommands=("access",), actions=("grant", "public", "set")))),
)

SHARED_RULES: tuple[Rule, ...] = (DATA_RULES + CONTAINER_RULES + CLOUD_RULES + SYSTEM_RULES + PUBLISH_RULES +
                                  EXFIL_RULES)
