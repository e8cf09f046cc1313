"""The repository: where its root is, which files it has, and a small git runner."""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

from dun.core.errors import DunError, UsageError


@dataclass(frozen=True)
class Repo:
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


def git(root: Path, *args: str, check: bool = True,
        env: dict[str, str] | None = None) -> subprocess.CompletedProcess[bytes]:
    """Run git in `root` with a stable, non-interactive environment (plus `env`, e.g. GIT_INDEX_FILE). With
    `check`, a failure raises GitError."""
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C", "GIT_OPTIONAL_LOCKS": "0", **(env or {})}
    proc = subprocess.run(["git", *args], cwd=root, env=env, capture_output=True, stdin=subprocess.DEVNULL)
    if check and proc.returncode != 0:
        raise GitError(root, proc)
    return proc


def find_repo(start: Path | str | None = None) -> Repo:
    """The git top level above `start`; outside git, the nearest parent holding `.dun/`, else `start`."""
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
        if (parent / ".dun").is_dir():
            return Repo(parent, False)
    return Repo(here, False)


def _split_z(data: bytes) -> list[str]:
    return [p.decode("utf-8", "surrogateescape") for p in data.split(b"\0") if p]


def list_files(root: Path, is_git: bool) -> list[str]:
    """Tracked plus untracked-not-ignored files. Tracked files deleted from the work tree are still listed:
    `CheckContext.match` drops them, which costs a stat per match instead of one per file."""
    if is_git:
        listed = git(root, "ls-files", "-z", "--cached", "--others", "--exclude-standard").stdout
        return list(dict.fromkeys(_split_z(listed)))
    return _walk(root)


def _walk(root: Path) -> list[str]:
    """Outside git: every file, honouring the root's .gitignore when there is one."""
    from dun.core.globs import gitignore_spec

    ignore_file = root / ".gitignore"
    spec = gitignore_spec(ignore_file.read_text("utf-8", "replace").splitlines()) if ignore_file.is_file() else None
    out: list[str] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d != ".git")
        rel_dir = os.path.relpath(dirpath, root)
        for name in sorted(filenames):
            rel = name if rel_dir == "." else f"{rel_dir}/{name}".replace(os.sep, "/")
            out.append(rel)
    if spec is not None:
        out = [p for p in out if not spec.match_file(p)]
    return out


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


def diff_stat(root: Path, base: str) -> tuple[str, int]:
    """`git diff --stat` from `base` to the work tree (commits and uncommitted edits), and the files changed."""
    proc = git(root, "diff", "--stat=100", base, check=False)
    if proc.returncode != 0:
        return "", 0
    text = proc.stdout.decode("utf-8", "replace").rstrip()
    names = git(root, "diff", "--name-only", base, check=False).stdout.decode("utf-8", "replace").split()
    untracked = git(root, "ls-files", "--others", "--exclude-standard", check=False).stdout.split()
    return text, len(names) + len(untracked)


def worktree_tree(root: Path) -> str | None:
    """A tree hash of the whole work tree, uncommitted and untracked-not-ignored files included.

    Built in a copy of the index, so git's stat cache spares re-hashing unchanged files and the real index is
    never touched.
    """
    import shutil
    import tempfile

    try:
        index = git(root, "rev-parse", "--git-path", "index").stdout.decode().strip()
    except (subprocess.CalledProcessError, FileNotFoundError):
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
    return _split_z(proc.stdout) if proc.returncode == 0 else []
