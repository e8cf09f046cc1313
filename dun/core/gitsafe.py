"""The environment every git process dun starts runs in: git never runs a program the repository names.

git runs programs from its configuration and the repository (core.fsmonitor, hooks, clean/smudge filters named by
.gitattributes, gpg, pagers, editors). An agent that writes `.git/config` or `.git/hooks` would have dun's own
`git status`, `git add` and restore commits run its code outside the sandbox a second later. Configuration given in
the environment (GIT_CONFIG_COUNT) outranks every config file, include and worktree config, and reaches git's own
children, so it switches these off for every git dun starts whatever the files say.

Filters have no global switch: each driver defined in any config file the repository reads is neutralised by name
(found here by reading the files, not by running git: `dun check` starts git before the rest of dun loads). A user
whose repository needs its filters in dun's commits (git LFS) opts in with DUN_GIT_FILTERS=1.

Import-light (os only): dun/entry.py starts git before the rest of dun loads.
"""

import os

from dun.core.regularfile import read_regular

# Settings under which git would run a program: each pinned to a value that runs nothing.
NEUTRAL_CONFIG: tuple[tuple[str, str], ...] = (
    ("core.fsmonitor", "false"),
    ("core.hooksPath", "/dev/null"),  # not a directory: git finds no hook at all
    ("core.pager", "cat"),
    ("core.editor", "false"),
    ("sequence.editor", "false"),
    ("core.askPass", "false"),
    ("core.sshCommand", "false"),
    ("commit.gpgSign", "false"),
    ("tag.gpgSign", "false"),
    ("log.showSignature", "false"),
    ("gpg.program", "false"),
    ("gpg.ssh.program", "false"),
    ("gpg.x509.program", "false"),
    ("diff.external", "false"),  # dun asks only --stat/--name-only, which never run it; a patch would fail closed
    ("credential.helper", ""),
    ("protocol.ext.allow", "never"),
)
# Settings under which git status would miss an edit dun's caches must see (a same-size rewrite with its mtime set
# back looks unchanged without ctime, or with only the seconds of mtime; dun's own `git add` would set
# assume-unchanged bits): git compares the whole stat, as by default. Only what git re-reads changes, not what it
# reports. core.fileMode is left alone: on a filesystem without exec bits it would report every file modified (the
# caches see a mode change under core.fileMode=false through dun/core/indexlook.py's mode_changes instead).
STAT_CONFIG: tuple[tuple[str, str], ...] = (
    ("core.trustctime", "true"),
    ("core.checkStat", "default"),
    ("core.ignoreStat", "false"),
)
FILTER_KEYS = ("clean", "smudge", "process")
OPT_IN_FILTERS = "DUN_GIT_FILTERS"
MAX_INCLUDE_DEPTH = 10  # git's own limit
MAX_CONFIG_BYTES = 1 << 20


def neutral_env(cwd: str | None = None, base: dict[str, str] | None = None) -> dict[str, str]:
    """`base` (default: os.environ) plus the config pairs that switch off every program git could run for the
    repository at `cwd` (default: the current directory); the user's own GIT_CONFIG_COUNT pairs are kept first."""
    env = dict(os.environ if base is None else base)
    pairs = [*NEUTRAL_CONFIG, *STAT_CONFIG]
    if env.get(OPT_IN_FILTERS) != "1":
        for name in sorted(filter_drivers(cwd or os.getcwd(), env)):
            pairs += [(f"filter.{name}.{key}", "") for key in FILTER_KEYS]
            pairs.append((f"filter.{name}.required", "false"))
    try:
        count = int(env.get("GIT_CONFIG_COUNT", "0"))
    except ValueError:
        count = 0
    for i, (key, value) in enumerate(pairs, start=count):
        env[f"GIT_CONFIG_KEY_{i}"] = key
        env[f"GIT_CONFIG_VALUE_{i}"] = value
    env["GIT_CONFIG_COUNT"] = str(count + len(pairs))
    env.pop("GIT_CONFIG_PARAMETERS", None)  # `git -c` pairs of a parent git: not dun's to inherit
    env["GIT_PAGER"] = "cat"
    env["GIT_EDITOR"] = "false"
    env.pop("GIT_EXTERNAL_DIFF", None)
    env.pop("GIT_SSH_COMMAND", None)
    env.pop("GIT_ASKPASS", None)
    return env


def git_dirs(cwd: str, env: dict[str, str]) -> tuple[str, str] | None:
    """(git dir, common dir) of the repository holding `cwd`, found as git finds them; None outside git."""
    given = env.get("GIT_DIR")
    if given:
        gitdir = os.path.join(cwd, given)
    else:
        here = os.path.abspath(cwd)
        gitdir = ""
        while True:
            candidate = os.path.join(here, ".git")
            if os.path.isdir(candidate):
                gitdir = candidate
                break
            if os.path.isfile(candidate):
                gitdir = _gitfile(candidate) or ""
                break
            parent = os.path.dirname(here)
            if parent == here:
                return None
            here = parent
        if not gitdir:
            return None
    common = env.get("GIT_COMMON_DIR") or _read_small(os.path.join(gitdir, "commondir")).strip()
    return gitdir, os.path.join(gitdir, common) if common else gitdir


def _gitfile(path: str) -> str | None:
    text = _read_small(path).strip()
    if not text.startswith("gitdir:"):
        return None
    target = text[len("gitdir:"):].strip()
    return os.path.join(os.path.dirname(path), target)


def config_files(cwd: str, env: dict[str, str]) -> list[str]:
    """Every config file git reads for the repository at `cwd` (before includes), as git orders them."""
    files = []
    if not env.get("GIT_CONFIG_NOSYSTEM"):
        files.append(env.get("GIT_CONFIG_SYSTEM") or "/etc/gitconfig")
    home = env.get("HOME") or os.path.expanduser("~")
    if env.get("GIT_CONFIG_GLOBAL"):
        files.append(env["GIT_CONFIG_GLOBAL"])
    else:
        xdg = env.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
        files += [os.path.join(xdg, "git", "config"), os.path.join(home, ".gitconfig")]
    dirs = git_dirs(cwd, env)
    if dirs is not None:
        gitdir, common = dirs
        files += [os.path.join(common, "config"), os.path.join(gitdir, "config.worktree")]
    return files


def filter_drivers(cwd: str, env: dict[str, str]) -> set[str]:
    """The names of the filter drivers the repository's config defines (any file, includes followed), and those
    given in the environment."""
    names = {name for section, name, _, _ in _config_lines(cwd, env) if section == "filter" and name is not None}
    for key, _ in _env_pairs(env):
        parts = key.split(".")
        if len(parts) >= 3 and parts[0].lower() == "filter":
            names.add(".".join(parts[1:-1]))
    return names


def file_mode_off(cwd: str, env: dict[str, str] | None = None) -> bool:
    """Whether git ignores the executable bit for the repository at `cwd` (`core.fileMode` false in any config file
    or the environment, the last one read winning): `git status` then misses a `chmod +x`."""
    env = dict(os.environ) if env is None else env
    value = None
    for section, name, key, found in _config_lines(cwd, env):
        if section == "core" and name is None and key == "filemode":
            value = found
    for key, found in _env_pairs(env):
        if key.lower() == "core.filemode":
            value = found
    return value is not None and value.strip().strip('"').lower() in ("false", "no", "off", "0", "")


def _env_pairs(env: dict[str, str]) -> list[tuple[str, str]]:
    """The config pairs given in the environment (GIT_CONFIG_COUNT, GIT_CONFIG_KEY_n, GIT_CONFIG_VALUE_n)."""
    try:
        count = int(env.get("GIT_CONFIG_COUNT", "0"))
    except ValueError:
        count = 0
    return [(env.get(f"GIT_CONFIG_KEY_{i}", ""), env.get(f"GIT_CONFIG_VALUE_{i}", "")) for i in range(count)]


def _config_lines(cwd: str, env: dict[str, str]) -> list[tuple[str, str | None, str, str]]:
    """(section, subsection, key, value) of every line of every config file git reads for `cwd`, includes followed,
    in git's order; section and key lower-cased (a section header alone gives key "")."""
    out: list[tuple[str, str | None, str, str]] = []
    for path in config_files(cwd, env):
        _scan(path, out, 0, env)
    return out


def _scan(path: str, out: list[tuple[str, str | None, str, str]], depth: int, env: dict[str, str]) -> None:
    """Add the lines of `path` to `out`; follow its include and includeIf paths where they stand."""
    if depth > MAX_INCLUDE_DEPTH:
        return
    section, name = "", None
    for raw in _read_small(path).splitlines():
        line = raw.strip()
        if line.startswith("["):
            header = line[1:line.find("]")] if "]" in line else line[1:]
            section, name = _header(header)
            out.append((section, name, "", ""))
            continue
        key, eq, value = line.partition("=")
        key = key.split("#")[0].split(";")[0].strip().lower()
        if not key or key.startswith(("#", ";")):
            continue
        value = value.split(" #")[0].split(" ;")[0].strip() if eq else "true"  # a bare key is true
        out.append((section, name, key, value))
        if section in ("include", "includeif") and key == "path":
            target = value.strip('"')
            if target.startswith("~/"):
                target = os.path.join(env.get("HOME") or os.path.expanduser("~"), target[2:])
            _scan(os.path.join(os.path.dirname(path), target), out, depth + 1, env)


def _header(header: str) -> tuple[str, str | None]:
    """("filter", "lfs") for `filter "lfs"`; the old dotted form `filter.lfs` too."""
    header = header.strip()
    if '"' in header:
        section, _, rest = header.partition('"')
        return section.strip().lower(), rest.rsplit('"', 1)[0].replace('\\"', '"').replace("\\\\", "\\")
    section, _, sub = header.partition(".")
    return section.strip().lower(), (sub.lower() if sub else None)


def _read_small(path: str) -> str:
    """A config file's text; empty when missing, unreadable, not a regular file, or over the cap (a FIFO or
    /dev/zero planted as a config file never blocks dun). Links are followed: a ~/.gitconfig linked from a
    dotfiles repository is the user's config."""
    data = read_regular(path, MAX_CONFIG_BYTES, follow=True)
    return data.decode("utf-8", "replace") if data is not None else ""


def remove_planted_commondir(root: str) -> str | None:
    """A main repository's git directory never holds `commondir`; one there redirects git to another directory's
    config (and work tree). The sandbox cannot keep a missing file from being made, so dun removes it before its
    own git runs; returns what it removed."""
    gitdir = os.path.join(root, ".git")
    planted = os.path.join(gitdir, "commondir")
    if os.path.isdir(gitdir) and not os.path.islink(gitdir) and os.path.lexists(planted):
        os.unlink(planted)
        return planted
    return None
