"""Built-in rules about this machine: its files (where paths land after symlinks), disks, the repository's git
history and uncommitted work, code the guard cannot read, downloads run as code, and the power switch.

Order matters only for which rule a denial names: the first rule that fires on the first simple command wins.
"""

from __future__ import annotations

from dun.guard.ruletypes import Match, Rule

_DELETE = ("delete",)
_OUT = ("outside", "home", "ancestor", "system")
_GIT = ("git",)
_DISK_TOOLS = ("fdisk", "sfdisk", "cfdisk", "gdisk", "sgdisk", "parted")
_READ_ONLY_DISK_FLAGS = ("-l", "--list", "-p", "--print", "-d", "--dump", "-s", "--show-size", "-V", "--version",
                         "-h", "--help")
_WHOLE_TREE = (".", "./", ":/", "[*]", ":(top)")

FILE_RULES: tuple[Rule, ...] = (
    Rule("fs.delete-system", "deletes /, the home directory, a system directory or a parent of the repository",
         (Match(effects=_DELETE, where=("ancestor", "home", "system")),)),
    Rule("fs.delete-repo", "deletes the repository itself, all of its files, or its .git directory, objects or refs",
         (Match(effects=_DELETE, where=("repo", "contents", "gitdir")),)),
    Rule("fs.delete-outside", "deletes files outside the repository (only /tmp is free)",
         (Match(effects=_DELETE, where=("outside", "device")),)),
    Rule("fs.delete-unresolved", "recursive delete of a path that starts with a variable or command the guard cannot "
         "resolve (empty, it deletes from /)", (Match(effects=_DELETE, where=("unknown",), recursive=True),)),
    Rule("disk.format", "formats, partitions or wipes a disk",
         (Match(programs=("mkfs", "mkfs.*", "mke2fs", "mkswap", "mkdosfs", "mkntfs", "wipefs", "blkdiscard",
                          "pvremove", "vgremove", "lvremove")),
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
    Rule("fs.write-outside", "writes outside the repository (only /tmp and /dev/null are free)",
         (Match(effects=("write", "chmod"), where=_OUT),)),
    Rule("guard.protected-path", "changes dun's or Claude Code's own configuration (.dun/, .claude/settings*.json)",
         (Match(effects=("write", "delete", "chmod"), where=("protected",)),)),
)

GIT_RULES: tuple[Rule, ...] = (
    Rule("git.push-force", "force-pushes (rewrites history on the remote)",
         (Match(programs=_GIT, subcommands=("push", "send-pack"), flags_any=(
             "-f", "--force", "--force-with-lease", "--force-with-lease=*", "--force-if-includes", "--mirror")),
          Match(programs=_GIT, subcommands=("push", "send-pack"), args_any=("+*",)))),
    Rule("git.push-delete", "deletes branches or tags on the remote",
         (Match(programs=_GIT, subcommands=("push",), flags_any=("-d", "--delete", "--prune")),
          Match(programs=_GIT, subcommands=("push",), args_any=(":*",)))),
    Rule("git.update-ref", "moves or deletes refs directly (git update-ref), around the safety of branch commands",
         (Match(programs=_GIT, subcommands=("update-ref",)),)),
    Rule("git.history-rewrite", "rewrites the repository's history (filter-branch, filter-repo, BFG)",
         (Match(programs=_GIT, subcommands=("filter-branch", "filter-repo")),
          Match(programs=("git-filter-repo", "git-filter-branch", "bfg")))),
    Rule("git.reset-hard", "git reset --hard discards uncommitted work (not checked against git status)",
         (Match(programs=_GIT, subcommands=("reset",), flags_any=("--hard",)),)),
    Rule("git.clean", "git clean -f deletes untracked files, which may be uncommitted work (-n and -X are allowed)",
         (Match(programs=_GIT, subcommands=("clean",), flags_any=("-f", "--force"),
                flags_none=("-n", "--dry-run", "-X")),
          Match(programs=_GIT, subcommands=("clean",), values_any=("-c=clean.requireforce=*",),
                flags_none=("-n", "--dry-run", "-X")))),
    Rule("git.discard-changes", "discards uncommitted changes to the whole tree (checkout/restore ., rm -f ., "
         "checkout -f, read-tree -u, checkout-index -f, stash clear)",
         (Match(programs=_GIT, subcommands=("checkout", "restore"), args_any=_WHOLE_TREE,
                flags_none=("--staged", "-S")),
          Match(programs=_GIT, subcommands=("restore",), args_any=_WHOLE_TREE, flags_any=("--worktree", "-W")),
          Match(programs=_GIT, subcommands=("rm",), args_any=_WHOLE_TREE, flags_any=("-f", "--force")),
          Match(programs=_GIT, subcommands=("checkout", "switch"), flags_any=("-f", "--force", "--discard-changes")),
          Match(programs=_GIT, subcommands=("read-tree",), flags_any=("-u",)),
          Match(programs=_GIT, subcommands=("checkout-index",), flags_any=("-f", "--force")),
          Match(programs=_GIT, subcommands=("stash",), args_any=("clear",)))),
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
                where=(*_OUT, "repo", "contents", "gitdir", "protected", "device")),)),
    Rule("sys.power", "shuts down or reboots the machine",
         (Match(programs=("shutdown", "reboot", "halt", "poweroff")),
          Match(programs=("systemctl",), subcommands=("poweroff", "reboot", "halt", "kexec")),
          Match(programs=("init", "telinit"), subcommands=("0", "6")))),
)

LOCAL_RULES: tuple[Rule, ...] = FILE_RULES + GIT_RULES + EXEC_RULES
