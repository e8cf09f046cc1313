"""Built-in rules about this machine: its files (where paths land after symlinks), disks, the repository's git
history and uncommitted work, code the guard cannot read, downloads run as code, and the power switch.

Order matters only for which rule a denial names: the first rule that fires on the first simple command wins.
"""

from __future__ import annotations

from dun.guard.ruletypes import Match, Rule

_DELETE = ("delete",)
_OUT = ("outside", "home", "ancestor", "system")
_GIT = ("git",)
# A disk image file under the temporary directory (truncate -s 64M /tmp/t.img && mkfs.ext4 -F /tmp/t.img) is a file,
# not a disk: formatting it is a test of this machine's own making
_TEMP_IMAGES = tuple(f"/tmp/*.{ext}" for ext in ("img", "raw", "iso", "qcow2", "bin", "ext4", "vfat", "fs"))
_DISK_TOOLS = ("fdisk", "sfdisk", "cfdisk", "gdisk", "sgdisk", "parted")
_READ_ONLY_DISK_FLAGS = ("-l", "--list", "-p", "--print", "-d", "--dump", "-s", "--show-size", "-V", "--version",
                         "-h", "--help")
_WHOLE_TREE = (".", "./", ":/", "[*]", ":(top)", "./{}", "./[*]")  # ./*: every file git lists ($(git ls-files -m))
_TRUE = "[tTyY1oO]*"
_DRY_RUN = ("-n", "--dry-run")  # git's true, yes, on, 1
# git config keys whose value git runs as a command (or that load more config): set, they run later.
_COMMAND_KEYS = ("core.hookspath", "core.fsmonitor", "core.pager", "core.editor", "core.sshcommand", "core.askpass",
                 "core.gitproxy", "core.worktree", "sequence.editor", "diff.external", "diff.*.textconv",
                 "diff.*.command", "merge.*.driver", "filter.*.clean", "filter.*.smudge", "filter.*.process",
                 "gpg.program", "gpg.*.program", "pager.*", "credential.helper", "credential.*.helper",
                 "include.path", "includeif.*.path", "uploadpack.packobjectshook", "remote.*.uploadpack",
                 "remote.*.receivepack", "init.templatedir", "core.alternaterefscommand", "interactive.difffilter",
                 "difftool.*.cmd", "mergetool.*.cmd", "web.browser", "browser.*.cmd", "man.*.cmd", "sendemail.*")

# Files an interpreter runs at start-up, wherever its site directory is (the user site, a virtualenv in the repository)
_STARTUP_FILES = tuple(f"*/{site}/{name}" for site in ("site-packages", "dist-packages")
                       for name in ("*.pth", "sitecustomize.py", "usercustomize.py"))

FILE_RULES: tuple[Rule, ...] = (
    Rule("fs.delete-system", "deletes /, the home directory, a system directory or a parent of the repository",
         (Match(effects=_DELETE, where=("ancestor", "home", "system")),)),
    Rule("fs.delete-repo", "deletes the repository itself, all of its files, or its .git directory, objects or refs",
         (Match(effects=_DELETE, where=("repo", "contents", "gitdir")),)),
    Rule("fs.delete-outside", "deletes files outside the repository (only /tmp is free)",
         (Match(effects=_DELETE, where=("outside", "device")),)),
    Rule("fs.delete-unresolved", "recursive delete of a path that starts with a variable or command the guard cannot "
         "resolve (empty, it deletes from /)", (Match(effects=_DELETE, where=("unknown",), recursive=True),)),
    Rule("fs.delete-remote", "deletes a directory tree on another machine or in a container (ssh, docker/kubectl "
         "exec), where nothing of this session's protects it; leave that to the operator",
         (Match(effects=_DELETE, where=("remote",), recursive=True),)),
    Rule("disk.format", "formats, partitions or wipes a disk",
         (Match(programs=("mkfs", "mkfs.*", "mke2fs", "mkswap", "mkdosfs", "mkntfs", "wipefs", "blkdiscard",
                          "pvremove", "vgremove", "lvremove"), subcommands_none=_TEMP_IMAGES),
          Match(programs=_DISK_TOOLS[:-1], flags_none=_READ_ONLY_DISK_FLAGS, args_none=("print", "p")),
          Match(programs=("parted",), flags_none=("-l", "--list", "-h", "--help", "-v", "--version"),
                args_none=("print", "p")),
          Match(programs=("cryptsetup",), subcommands=("luksFormat", "erase", "luksErase")),
          Match(programs=("zpool", "zfs"), subcommands=("destroy", "labelclear")),
          Match(programs=("mdadm",), flags_any=("--zero-superblock",)),
          Match(programs=("hdparm",), flags_any=("--security-erase*", "--trim-sector-ranges*", "--make-bad-sector")),
          Match(programs=("nvme",), subcommands=("format", "sanitize")),
          Match(programs=("badblocks",), flags_any=("-w",)))),
    Rule("disk.device-write", "writes to a disk device", (Match(effects=("write",), where=("device",)),)),
    Rule("perm.recursive-outside", "recursive chmod/chown of /, a system directory or a path outside the repository",
         (Match(effects=("chmod",), where=(*_OUT, "device", "unknown"), recursive=True),)),
    Rule("plant.startup", "writes code that runs by itself later, outside this session (a .pth, sitecustomize.py or "
         "usercustomize.py in a site-packages directory, a VS Code task run on folder open)",
         (Match(effects=("write", "chmod"), paths=_STARTUP_FILES), Match(signals=("plant-startup",)))),
    Rule("fs.write-outside", "writes outside the repository (only /tmp and /dev/null are free)",
         (Match(effects=("write", "chmod"), where=_OUT),)),
    Rule("git.plant-file", "writes git hooks or git's own config (.git/hooks, .git/config, .git/info/attributes): "
         "git runs them later, outside this session; leave hooks to the operator",
         (Match(effects=("write", "chmod"), where=("gitexec",)),)),
    Rule("git.write-state", "overwrites git's own history files (.git/HEAD, refs, objects, packed-refs, logs); "
         "change them with git commands", (Match(effects=("write",), where=("gitdir",)),)),
    Rule("guard.protected-path", "changes dun's or a coding agent's own configuration (.dun/, "
         ".claude/settings*.json, .mcp.json, ...); ask the user to make that change",
         (Match(effects=("write", "delete", "chmod"), where=("protected",)),)),
)

GIT_RULES: tuple[Rule, ...] = (
    Rule("git.push-force", "force-pushes (rewrites history on the remote)",
         (Match(programs=_GIT, subcommands=("push", "send-pack"), flags_any=(
             "-f", "--force", "--force-with-lease", "--force-with-lease=*", "--force-if-includes", "--mirror"),
                flags_none=_DRY_RUN),
          Match(programs=_GIT, subcommands=("push", "send-pack"), args_any=("+*",), flags_none=_DRY_RUN),
          Match(programs=_GIT, subcommands=("subtree",), actions=("push",), flags_any=("-f", "--force")),
          Match(programs=_GIT, subcommands=("push",), values_any=(f"-c=remote.*.mirror={_TRUE}",
                                                                   "-c=remote.*.push=+*")))),
    Rule("git.push-delete", "deletes branches or tags on the remote",
         (Match(programs=_GIT, subcommands=("push",), flags_any=("-d", "--delete", "--prune"), flags_none=_DRY_RUN),
          Match(programs=_GIT, subcommands=("push",), args_any=(":*",), flags_none=_DRY_RUN),
          Match(programs=_GIT, subcommands=("push",), values_any=("-c=remote.*.push=:*",)))),
    Rule("git.push-url", "pushes to an address that is not one of this repository's remotes (a URL, or a remote "
         "this command adds or points elsewhere): the code leaves for a place the user did not set up; push to the "
         "remotes the repository has",
         (Match(programs=_GIT, subcommands=("push",), values_any=("push-url=*",), flags_none=_DRY_RUN),)),
    Rule("git.remote-config", "configures every later git push to force, delete or mirror, or to go elsewhere "
         "(remote.*.push with + or :, remote.*.mirror, url.*.insteadOf, remote.*.pushurl)",
         (Match(programs=_GIT, subcommands=("config",), values_any=(
             f"config=remote.*.mirror={_TRUE}", "config=remote.*.push=+*", "config=remote.*.push=:*",
             "redirect=*", "config=remote.*.pushurl=*")),)),
    Rule("git.plant-config", "sets git config that runs a command (hooks path, fsmonitor, pager, editor, filters, "
         "drivers, gpg.program, credential helper, include.path): git would run it later, outside this session; "
         "pass it for one call with git -c instead",
         (Match(programs=_GIT, subcommands=("config",), values_any=tuple(f"config={k}=*" for k in _COMMAND_KEYS),
                values_none=("config=core.fsmonitor=[fF]*", "config=core.fsmonitor=[tT][rR]*",
                             "config=core.hookspath=/dev/null", "config-plain=*")),
          Match(programs=_GIT, subcommands=("config",), values_any=("config=alias.*=!*",)),
          Match(programs=_GIT, values_any=("-c=core.hookspath=*",), values_none=("-c=core.hookspath=/dev/null",)),
          Match(programs=_GIT, subcommands=("init", "clone"), flags_any=("--template", "--template=*")),
          Match(programs=_GIT, values_any=("-c=init.templatedir=*",)))),
    Rule("git.update-ref", "moves or deletes refs directly (git update-ref), around the safety of branch commands",
         (Match(programs=_GIT, subcommands=("update-ref",)),)),
    Rule("git.history-rewrite", "rewrites the repository's history (filter-branch, filter-repo, BFG)",
         (Match(programs=_GIT, subcommands=("filter-branch", "filter-repo")),
          Match(programs=("git-filter-repo", "git-filter-branch", "bfg")))),
    Rule("git.reset-hard", "git reset --hard discards uncommitted work (not checked against git status)",
         (Match(programs=_GIT, subcommands=("reset",), flags_any=("--hard",)),)),
    Rule("git.clean", "git clean -f deletes untracked files, which may be uncommitted work (-n and -X are allowed)",
         (Match(programs=_GIT, subcommands=("clean",), flags_any=("-f", "--force"),
                flags_none=("-n", "--dry-run", "-X"), values_none=("clean-scope=build",)),
          Match(programs=_GIT, subcommands=("clean",), values_any=("-c=clean.requireforce=*",),
                flags_none=("-n", "--dry-run", "-X")))),
    Rule("git.discard-changes", "discards uncommitted changes to the whole tree (checkout/restore ., rm -f ., "
         "checkout -f, read-tree -u, checkout-index -f, stash clear, worktree remove --force, submodule deinit -f)",
         (Match(programs=_GIT, subcommands=("checkout", "restore"), args_any=_WHOLE_TREE,
                flags_none=("--staged", "-S")),
          Match(programs=_GIT, subcommands=("restore",), args_any=_WHOLE_TREE, flags_any=("--worktree", "-W")),
          Match(programs=_GIT, subcommands=("rm",), args_any=_WHOLE_TREE, flags_any=("-f", "--force")),
          Match(programs=_GIT, subcommands=("checkout", "switch"), flags_any=("-f", "--force", "--discard-changes")),
          Match(programs=_GIT, subcommands=("read-tree",), flags_any=("-u",), flags_none=("--prefix",)),
          Match(programs=_GIT, subcommands=("checkout-index",), flags_any=("-f", "--force")),
          Match(programs=_GIT, subcommands=("stash",), args_any=("clear",)),
          Match(programs=_GIT, subcommands=("submodule",), actions=("deinit",), flags_any=("-f", "--force")),
          Match(programs=_GIT, subcommands=("worktree",), actions=("remove", "rm"), flags_any=("-f", "--force")))),
    Rule("git.destroy-reflog", "expires the reflog or prunes unreachable objects now (destroys the way back)",
         (Match(programs=_GIT, subcommands=("reflog",), args_any=("expire", "delete")),
          Match(programs=_GIT, subcommands=("gc", "prune"),
                values_any=("--prune=now", "--prune=all", "--expire=now", "--expire=all")))),
)

EXEC_RULES: tuple[Rule, ...] = (
    Rule("net.pipe-to-shell",
         "runs code downloaded from the network (curl | sh, bash <(curl ...), sh -c \"$(curl ...)\")",
         (Match(exec_download=True),)),
    Rule("net.download-exec", "runs a file it has just downloaded (curl -o x.sh URL && sh x.sh)",
         (Match(download_exec=True),)),
    Rule("exec.unseen-code", "runs code the guard cannot read (decoded, generated or piped in at run time: "
         "base64 -d | sh, eval \"$(...)\", source <(...), $(...) as the command, exec(b64decode(...)))",
         (Match(signals=("unseen-code", "generated-program", "obfuscated-code")),)),
    Rule("exec.unknown-program", "runs a program named by an unresolved variable on paths outside the repository, "
         "the repository itself or its .git",
         (Match(signals=("unknown-program",), effects=("use",),
                where=(*_OUT, "repo", "contents", "gitdir", "gitexec", "protected", "device")),)),
    Rule("sys.power", "shuts down or reboots the machine",
         (Match(programs=("shutdown", "reboot", "halt", "poweroff")),
          Match(programs=("systemctl", "loginctl"), subcommands=("poweroff", "reboot", "halt", "kexec", "suspend",
                                                                "hibernate", "hybrid-sleep", "suspend-then-hibernate")),
          Match(programs=("init", "telinit"), subcommands=("0", "6")))),
)

PROCESS_RULES: tuple[Rule, ...] = (
    Rule("sys.kill-by-name", "kills processes by name, pattern or port, which may be the user's and not this "
         "session's (pkill, killall, fuser -k, kill $(pgrep ...), pm2 stop all); kill the PID you started ($!) instead",
         (Match(programs=("pkill", "killall", "skill", "snice", "kill-port", "fkill", "fkill-cli", "killport",
                          "portkill", "kill-ports", "killall5", "pkill2", "pgrep-kill"),
                flags_none=("-l", "--list", "-V", "--version", "-h", "--help", "-0", "--signal=0")),
          Match(programs=("fuser",), flags_any=("-k", "--kill")),
          Match(verbs=("kill", "stop", "delete", "signal", "restart"), args_any=("all",),  # pm2 stop all
                programs_none=("git", "docker", "podman", "kubectl", "helm", "echo", "printf", "make", "just", "task")),
          Match(programs=("pm2",), subcommands=("kill",)), Match(programs=("forever",), subcommands=("stopall",)),
          Match(signals=("kill-by-name",)))),
    Rule("sys.persist", "makes something run later or at login, outside this session and its sandbox (services "
         "enabled, lingering, launch agents, init scripts, restart policies, endless detached loops, ssh-copy-id)",
         (Match(programs=("systemctl",), subcommands=("enable", "reenable", "link", "preset", "preset-all",
                                                      "add-wants", "add-requires", "set-default", "revert")),
          Match(programs=("loginctl",), subcommands=("enable-linger",)),
          Match(programs=("launchctl",), subcommands=("load", "bootstrap", "submit", "enable", "kickstart")),
          Match(programs=("update-rc.d",), args_none=("remove", "disable")),
          Match(programs=("chkconfig",), args_any=("on",)), Match(programs=("chkconfig",), flags_any=("--add",)),
          Match(programs=("rc-update",), subcommands=("add",)),
          Match(programs=("pm2",), subcommands=("startup", "save")),
          Match(programs=("supervisorctl",), subcommands=("add",)),
          Match(programs=("docker", "podman", "nerdctl"), subcommands=("run", "create", "update", "container"),
                values_any=("--restart=always", "--restart=unless-stopped", "--restart=on-failure*")),
          Match(programs=("ssh-copy-id",)),
          Match(signals=("detached-loop",)))),
)

CI_RULES: tuple[Rule, ...] = (
    Rule("ci.weaken", "weakens the repository's CI (a workflow removed or moved away, a test step deleted, a failure "
         "made to pass); fix what fails instead",
         (Match(signals=("ci-weaken",)),)),  # ciconfig.py: removed, moved away, emptied, tests dropped, failures passed
)

LOCAL_RULES: tuple[Rule, ...] = FILE_RULES + GIT_RULES + PROCESS_RULES + EXEC_RULES + CI_RULES
