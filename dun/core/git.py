"""The repository: where its root is, which files it has, and a small git runner."""

from __future__ import annotations

import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from dun.core.errors import DunError, UsageError
from dun.core.gitsafe import neutral_env
from dun.core.spawn import GIT_ENV


@dataclass(frozen=True)
class Repo:
    """Where the repository's root is and whether git manages it."""

    root: Path
    is_git: bool


class GitError(DunError, subprocess.CalledProcessError):
    """git failed where dun cannot go on without it (a corrupt or unreadable index, a broken repository): one line
    with git's own reason, exit 2. Still a CalledProcessError for the callers that handle those."""

    def __init__(self, root: Path, proc: subprocess.CompletedProcess[bytes]) -> None:
        subprocess.CalledProcessError.__init__(self, proc.returncode, proc.args, proc.stdout, proc.stderr)
        lines = [ln.strip() for ln in proc.stderr.decode("utf-8", "replace").splitlines() if ln.strip()]
        last = lines[-1] if lines else f"exit {proc.returncode}"
        reason = next((ln for ln in lines if ln.startswith("fatal:")), last)
        hint = ""
        if "index" in reason:
            hint = "; `rm .git/index && git reset` rebuilds the index from HEAD (staged changes are lost)"
        self.message = f"git {proc.args[1]} failed in {root}: {reason}{hint}"

    def __str__(self) -> str:
        return self.message


def git(root: Path, *args: str, check: bool = True, env: dict[str, str] | None = None,
        neutral: bool = True) -> subprocess.CompletedProcess[bytes]:
    """Run git in `root` with a stable, non-interactive environment (plus `env`, e.g. GIT_INDEX_FILE) in which git
    runs no program the repository names (dun/core/gitsafe.py). `neutral=False` only for a question about the
    user's own settings that runs nothing (`rev-parse --git-path hooks`). With `check`, a failure raises GitError."""
    env = {**os.environ, **GIT_ENV, **(env or {})}
    if neutral:
        env = neutral_env(str(root), env)
    proc = subprocess.run(["git", *args], cwd=root, env=env, capture_output=True, stdin=subprocess.DEVNULL)
    if check and proc.returncode != 0:
        raise GitError(root, proc)
    return proc


def find_root(start: Path | str | None, marker: str) -> Repo:
    """The git top level above `start`; outside git, the nearest parent holding the directory `marker`, else
    `start` (`dun.store.layout.find_repo` names dun's)."""
    here = Path(start or os.getcwd()).resolve()
    if not here.exists():
        raise UsageError(f"{here}: no such directory")
    if not here.is_dir():
        raise UsageError(f"{here}: not a directory")
    try:
        proc = git(here, "rev-parse", "--show-toplevel", check=False)
    except FileNotFoundError:
        proc = None  # git itself is missing: treat the tree as plain files
    if proc is not None and proc.returncode == 0:
        return Repo(Path(proc.stdout.decode().strip()).resolve(), True)
    for parent in (here, *here.parents):
        if (parent / marker).is_dir():
            return Repo(parent, False)
    return Repo(here, False)


def split_z(data: bytes) -> list[str]:
    return [p.decode("utf-8", "surrogateescape") for p in data.split(b"\0") if p]


def head(root: Path) -> str | None:
    """The commit HEAD points at, or None (no git, or no commit yet)."""
    try:
        proc = git(root, "rev-parse", "--verify", "-q", "HEAD", check=False)
    except FileNotFoundError:
        return None
    if proc.returncode != 0:
        return None
    return proc.stdout.decode().strip() or None


def recent_commits(root: Path, count: int = 10, since: str | None = None) -> list[str]:
    """`<short hash> <subject>` of the newest commits (only those after `since` when given)."""
    args = ["log", f"-{count}", "--format=%h %s"]
    if since:
        args.append(f"{since}..HEAD")
    proc = git(root, *args, check=False)
    return proc.stdout.decode("utf-8", "replace").splitlines() if proc.returncode == 0 else []


_CHANGED = re.compile(r"^\s*(\d+) files? changed", re.M)


def diff_stat(root: Path, base: str, untracked: list[str] | None = None,
              paths: list[str] | None = None) -> tuple[str, int]:
    """`git diff --stat` from `base` to the work tree (commits and uncommitted edits), and the files changed,
    untracked ones included (`untracked`: the caller's listing of them, when it has one). `paths`: every tracked
    path that can differ (from the caller's `git status`, HEAD being `base`): git then looks at those alone,
    not at every file of the tree."""
    if paths == []:
        text = ""
    else:
        spec = ["--", *(f":(top,literal){p}" for p in paths)] if paths is not None else []
        proc = git(root, "diff", "--stat=100", base, *spec, check=False)
        if proc.returncode != 0:
            return "", 0
        text = proc.stdout.decode("utf-8", "replace").rstrip()
    found = _CHANGED.findall(text)  # the summary line counts what `--name-only` would list
    if untracked is None:
        untracked = split_z(git(root, "ls-files", "-z", "--others", "--exclude-standard", check=False).stdout)
    return text, (int(found[-1]) if found else 0) + len(untracked)


def index_file(root: Path) -> str | None:
    """The repository's index file (relative to `root` or absolute), None when git cannot tell."""
    try:
        return git(root, "rev-parse", "--git-path", "index").stdout.decode().strip()
    except (subprocess.CalledProcessError, FileNotFoundError):
        return None


def worktree_tree(root: Path, index: str | None = None) -> str | None:
    """A tree hash of the whole work tree, uncommitted and untracked-not-ignored files included. `index`: the
    repository's index file when the caller knows it (`index_file`).

    Built in a copy of the index, so git's stat cache spares re-hashing unchanged files and the real index is
    never touched.
    """
    import shutil
    import tempfile

    index = index or index_file(root)
    if index is None:
        return None
    with tempfile.TemporaryDirectory(prefix="dun-index-") as tmp:
        tmp_index = os.path.join(tmp, "index")
        source = Path(index) if os.path.isabs(index) else root / index
        if source.exists():
            shutil.copyfile(source, tmp_index)
        index_env = {"GIT_INDEX_FILE": tmp_index}
        if git(root, "add", "-A", check=False, env=index_env).returncode != 0:
            return None
        tree = git(root, "write-tree", check=False, env=index_env)
        if tree.returncode != 0:
            return None
        return tree.stdout.decode().strip() or None


def changed_paths(root: Path, tree_a: str, tree_b: str) -> list[str]:
    proc = git(root, "diff", "--name-only", "-z", tree_a, tree_b, check=False)
    return split_z(proc.stdout) if proc.returncode == 0 else []
