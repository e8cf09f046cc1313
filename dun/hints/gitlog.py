"""Reading the changes of git history for the co-change graph, through dun's git helper (dun/core/git.py: git with
the safe environment, so no hook, filter or pager of the repository runs)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from dun.core.git import git

_MARK = b"\x01"


@dataclass(frozen=True)
class Commit:
    sha: str
    files: list[str]  # every path the commit changed (a renamed file under its new name)
    renames: list[tuple[str, str]]
    deleted: list[str]


def log_args(since: str | None, limit: int) -> list[str]:
    """`git log` of the newest `limit` commits (after `since`), oldest first, each with its paths and statuses.
    Merges are left out (their diff is the branch's, already seen); renames detected, whatever diff.renames says;
    paths from the top, whatever diff.relative says."""
    args = ["log", "--reverse", "--no-merges", "-M", "--name-status", "-z", "--no-relative", "--no-show-signature",
            "--no-ext-diff", "--no-color", "--format=%x01%H", f"-n{max(1, limit)}"]
    args.append(f"{since}..HEAD" if since else "HEAD")
    return [*args, "--"]


def parse_log(data: bytes) -> Iterator[Commit]:
    """The commits of `git log` as `log_args` asks for it."""
    for chunk in data.split(_MARK)[1:]:
        fields = chunk.split(b"\0")
        sha = fields[0].strip().decode("ascii", "replace")
        files: list[str] = []
        renames: list[tuple[str, str]] = []
        deleted: list[str] = []
        i = 1
        while i < len(fields):
            status = fields[i].strip().decode("ascii", "replace")
            i += 1
            if not status:
                continue
            if status[0] in "RC" and i + 1 < len(fields):  # renamed or copied: old, new
                old, new = _path(fields[i]), _path(fields[i + 1])
                i += 2
                if status[0] == "R":
                    renames.append((old, new))
                files.append(new)
            elif i < len(fields):
                path = _path(fields[i])
                i += 1
                files.append(path)
                if status[0] == "D":
                    deleted.append(path)
        yield Commit(sha, files, renames, deleted)


def _path(raw: bytes) -> str:
    return raw.decode("utf-8", "surrogateescape")


def read_commits(root: Path, since: str | None, limit: int) -> list[Commit]:
    """The newest `limit` commits after `since` (all of HEAD's history when None), oldest first; [] when git cannot
    say (no commit yet, not a repository)."""
    try:
        proc = git(root, *log_args(since, limit), check=False)
    except OSError:
        return []
    return list(parse_log(proc.stdout)) if proc.returncode == 0 else []


def is_ancestor(root: Path, sha: str) -> bool:
    """Whether commit `sha` is still in HEAD's history (False after a rewrite, or when it is gone)."""
    try:
        proc = git(root, "merge-base", "--is-ancestor", sha, "HEAD", check=False)
    except OSError:
        return False
    return proc.returncode == 0
