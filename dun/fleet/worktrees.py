"""Git worktrees for parallel loops: `dun loop --worktree NAME [--branch B]` runs in `.dun/worktrees/NAME` (or
`fleet.worktrees_dir`), on branch `dun/NAME` unless told otherwise, with its own `.dun/` state, lock and logs."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from dun.core.errors import UsageError
from dun.core.git import git
from dun.store.layout import WORKTREES, find_repo

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


@dataclass(frozen=True)
class Worktree:
    path: Path
    branch: str | None  # None: detached HEAD
    head: str | None
    main: bool  # the repository's main work tree


def _git_text(root: Path, *args: str) -> str:
    try:
        proc = git(root, *args, check=False)
    except FileNotFoundError:
        raise UsageError("git is not installed; worktrees need it") from None
    if proc.returncode != 0:
        lines = (proc.stderr or proc.stdout).decode("utf-8", "replace").strip().splitlines()
        message = lines[0].removeprefix("fatal: ") if lines else f"exit {proc.returncode}"
        raise UsageError(f"git {args[0]}: {message}")
    return proc.stdout.decode("utf-8", "replace")


def list_worktrees(root: Path) -> list[Worktree]:
    """Every work tree of the repository `root` is in, the main one first (as `git worktree list` has it)."""
    out: list[Worktree] = []
    for block in _git_text(root, "worktree", "list", "--porcelain").split("\n\n"):
        fields = dict(line.partition(" ")[::2] for line in block.splitlines() if line)
        if "worktree" not in fields or "bare" in fields:
            continue
        branch = fields.get("branch")
        out.append(Worktree(Path(fields["worktree"]), branch.removeprefix("refs/heads/") if branch else None,
                            fields.get("HEAD"), main=not out))
    return out


def main_root(root: Path) -> Path:
    """The main work tree, also when `root` is a linked worktree: worktrees always hang off the main one."""
    trees = list_worktrees(root)
    return trees[0].path if trees and trees[0].main else root


def worktrees_dir(main: Path, configured: str | None = None) -> Path:
    path = Path(configured or WORKTREES).expanduser()
    return (path if path.is_absolute() else main / path).resolve()


def check_name(name: str) -> None:
    if not _NAME.match(name) or name.endswith(".lock") or ".." in name:
        raise UsageError(f"invalid worktree name '{name}': use letters, digits, '.', '_' and '-'")


def _branch_exists(root: Path, branch: str) -> bool:
    return git(root, "rev-parse", "--verify", "-q", f"refs/heads/{branch}", check=False).returncode == 0


def _exclude(main: Path, directory: Path) -> None:
    """Hide the worktrees dir from the main tree's `git status` (and so from dun's own checks), without touching
    any tracked file: a line in .git/info/exclude."""
    try:
        rel = directory.relative_to(main.resolve())
    except ValueError:
        return  # outside the work tree: nothing to hide
    pattern = f"/{rel.as_posix()}/"
    exclude = Path(_git_text(main, "rev-parse", "--git-path", "info/exclude").strip())
    exclude = exclude if exclude.is_absolute() else main / exclude
    lines = exclude.read_text(encoding="utf-8").splitlines() if exclude.exists() else []
    if pattern not in lines:
        exclude.parent.mkdir(parents=True, exist_ok=True)
        with exclude.open("a", encoding="utf-8") as fh:
            fh.write(("\n" if lines and lines[-1] else "") + f"# dun loop --worktree\n{pattern}\n")


def ensure_worktree(main: Path, name: str, branch: str | None = None, directory: Path | None = None
                    ) -> tuple[Worktree, bool]:
    """The worktree NAME, created when missing: (worktree, created). Run again, it is found, not re-created."""
    check_name(name)
    branch = branch or f"dun/{name}"
    if _git_text(main, "check-ref-format", "--branch", branch).strip() != branch:
        raise UsageError(f"invalid branch name '{branch}'")
    directory = directory or worktrees_dir(main)
    target = (directory / name).resolve()
    known = {wt.path.resolve(): wt for wt in list_worktrees(main)}
    if target in known and target.exists():
        found = known[target]
        if found.branch != branch:
            raise UsageError(f"worktree {name} is on {found.branch or 'a detached HEAD'}, not {branch}")
        return found, False
    if target in known:
        _git_text(main, "worktree", "prune")  # registered, but its directory was deleted
    if target.exists() and any(target.iterdir()):
        raise UsageError(f"{target} exists and is not a worktree of this repository")
    _exclude(main, directory)
    if _branch_exists(main, branch):
        _git_text(main, "worktree", "add", str(target), branch)
    else:
        _git_text(main, "worktree", "add", "-b", branch, str(target), "HEAD")
    (created,) = [wt for wt in list_worktrees(main) if wt.path.resolve() == target]
    return created, True


def prepare(path: str | Path | None, name: str, branch: str | None = None) -> Worktree:
    """For `dun loop --worktree NAME [--branch B]`: the worktree to run the loop in, created when missing, under
    `fleet.worktrees_dir` of the main work tree's config."""
    from dun.config.loader import dun_config

    repo = find_repo(path)
    if not repo.is_git:
        raise UsageError(f"{repo.root} is not a git repository; --worktree needs one")
    main = main_root(repo.root)
    configured = dun_config(main).settings.fleet.worktrees_dir
    worktree, _created = ensure_worktree(main, name, branch, worktrees_dir(main, configured))
    return worktree

