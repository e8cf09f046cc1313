"""`git-status`: uncommitted and untracked files, conflicts, unpushed commits and a detached HEAD."""

from __future__ import annotations

import shlex
import subprocess
from collections.abc import Mapping
from typing import Any

from dun.config.schema import Field
from dun.core.git import git
from dun.core.globs import Listing, glob_errors, match_files
from dun.core.snapshot import fold_untracked
from dun.engine import checkapi
from dun.engine.checkapi import CheckContext, CheckSpec, CheckType
from dun.engine.hookspecs import hookimpl
from dun.engine.model import Item, Outcome, Status, cap_items
from dun.store.layout import DIR, GITIGNORE

FIELDS = {
    "untracked": Field("bool", "Report untracked files.", default=True),
    "unpushed": Field("bool", "Warn about commits not on the upstream branch.", default=True),
    "detached": Field("bool", "Warn about a detached HEAD.", default=True),
    "ignore": Field("list", "Gitignore-style globs of paths to leave out.", default=[], item=Field("str", "glob"),
                    scalar_ok=True),
    "max_items": Field("int", "Items listed; the rest are counted.", default=100, minimum=1),
}
# Written by dun itself (created when missing, refreshed when older than the running dun): never the user's work.
DUN_OWN = frozenset({GITIGNORE})
_XY_NAMES = {"M": "modified", "T": "type changed", "A": "added", "D": "deleted", "R": "renamed", "C": "copied"}


def _describe(xy: str) -> str:
    staged, unstaged = xy[0], xy[1]
    parts = []
    if staged != ".":
        parts.append(f"{_XY_NAMES.get(staged, staged)} (staged)")
    if unstaged != ".":
        parts.append(_XY_NAMES.get(unstaged, unstaged))
    return ", ".join(parts) or "changed"


def parse_porcelain_v2(data: bytes) -> dict[str, Any]:
    """Parse `git status --porcelain=v2 --branch -z` into branch facts and per-path entries."""
    out: dict[str, Any] = {"head": None, "upstream": None, "ahead": 0, "changed": [], "untracked": [],
                           "conflicts": []}
    records = data.split(b"\0")
    i = 0
    while i < len(records):
        rec = records[i].decode("utf-8", "surrogateescape")
        i += 1
        if rec.startswith("# branch.head "):
            out["head"] = rec.split(" ", 2)[2]
        elif rec.startswith("# branch.upstream "):
            out["upstream"] = rec.split(" ", 2)[2]
        elif rec.startswith("# branch.ab "):
            out["ahead"] = int(rec.split(" ")[2].lstrip("+"))
        elif rec.startswith("1 "):
            parts = rec.split(" ", 8)
            out["changed"].append((parts[8], _describe(parts[1])))
        elif rec.startswith("2 "):
            parts = rec.split(" ", 9)
            out["changed"].append((parts[9], _describe(parts[1])))
            i += 1  # the original path follows as its own record
        elif rec.startswith("u "):
            out["conflicts"].append(rec.split(" ", 10)[10])
        elif rec.startswith("? "):
            out["untracked"].append(rec[2:])
    return out


def run(spec: CheckSpec, ctx: CheckContext) -> Outcome:
    o = spec.options
    if not ctx.is_git:
        return Outcome(Status.ERROR, f"not a git repository: {ctx.root}", next="git init")
    try:
        st = _status(ctx, o)
    except subprocess.CalledProcessError as exc:
        return Outcome(Status.ERROR, "git status failed: " + exc.stderr.decode("utf-8", "replace").strip()[:200])
    if not o["untracked"]:
        st["untracked"] = []

    def keep(paths: list[str]) -> set[str]:
        return set(paths) - set(match_files(paths, o["ignore"]))

    st["untracked"] = _without_dun_files(ctx, st["untracked"])
    # dun's own .gitignore, refreshed by a newer dun, is not the user's work either
    kept_changed = keep([p for p, _ in st["changed"] if p not in DUN_OWN])
    changed = [(p, what) for p, what in st["changed"] if p in kept_changed]
    untracked = sorted(keep(st["untracked"]))
    conflicts = sorted(keep(st["conflicts"]))
    items = [Item(f"merge conflict: {p}", p) for p in conflicts]
    items += [Item(f"uncommitted: {what}", p) for p, what in changed]
    items += [Item("untracked", p) for p in untracked]
    problems, nexts = [], []
    status = Status.PASS
    if conflicts:
        problems.append(f"{len(conflicts)} merge conflict(s)")
        nexts.append("resolve the conflict markers, then: git add " + " ".join(shlex.quote(p) for p in conflicts[:5]))
    if changed or untracked:
        problems.append(f"{len(changed)} uncommitted, {len(untracked)} untracked")
        nexts.append("review with `git status`, then: git add -A && git commit -m '<message>' "
                     "(or add generated files to .gitignore)")
    if problems:
        status = Status.FAIL
    if o["detached"] and st["head"] == "(detached)":
        problems.append("detached HEAD")
        nexts.append("git switch -c <branch-name>")
        status = status if status is Status.FAIL else Status.WARN
    if o["unpushed"] and st["upstream"] and st["ahead"] > 0:
        problems.append(f"{st['ahead']} commit(s) not pushed to {st['upstream']}")
        nexts.append("git push")
        items.append(Item(f"{st['ahead']} unpushed commit(s) on {st['head']}"))
        status = status if status is Status.FAIL else Status.WARN
    if not problems:
        return Outcome(Status.PASS, f"clean working tree on {st['head']}")
    return Outcome(status, "; ".join(problems), items=cap_items(items, o["max_items"]), next="\n".join(nexts))


def _status(ctx: CheckContext, o: Mapping[str, object]) -> dict[str, Any]:
    """The run's shared `git status` (every untracked file listed), parsed; without ignore globs the untracked files
    are named as `--untracked-files=normal` names them (a directory holding no tracked file as `dir/`), worked out
    from the index listing the run has anyway rather than by a second `git status`, which costs as much as the first."""
    snapshot = checkapi.snapshot(ctx)
    if snapshot is None:
        mode = ("all" if o["ignore"] else "normal") if o["untracked"] else "no"
        return parse_porcelain_v2(git(ctx.root, "status", "--porcelain=v2", "--branch", "-z",
                                      f"--untracked-files={mode}").stdout)
    st = parse_porcelain_v2(snapshot.status())
    if o["untracked"] and not o["ignore"] and st["untracked"]:
        listing = checkapi.listing(ctx)
        if isinstance(listing, Listing):
            st["untracked"] = fold_untracked(st["untracked"], listing.text)
    return st


def _without_dun_files(ctx: CheckContext, untracked: list[str]) -> list[str]:
    """Untracked paths less dun's own files; an untracked `.dun/` directory is looked into."""
    out = []
    for path in untracked:
        if path == f"{DIR}/":
            listed = git(ctx.root, "ls-files", "-z", "--others", "--exclude-standard", "--", DIR, check=False)
            out += [p for p in listed.stdout.decode("utf-8", "surrogateescape").split("\0") if p and p not in DUN_OWN]
        elif path not in DUN_OWN:
            out.append(path)
    return out


@hookimpl
def dun_check_types() -> list[CheckType]:
    return [CheckType("git-status", "Uncommitted, untracked, conflicted and unpushed work.", FIELDS, run,
                      lambda options: glob_errors(options, "ignore"), stamped=lambda spec: True)]
