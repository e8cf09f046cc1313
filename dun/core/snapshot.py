"""One look at a git work tree, shared by every check of a run (and by the loop's view of HEAD and the tree)."""

from __future__ import annotations

import itertools
import os
import subprocess
import threading
from pathlib import Path

from dun.core.cache.matches import index_identity, index_key
from dun.core.cache.session import Trees
from dun.core.fingerprint import entries, fingerprint
from dun.core.git import GitError, git, index_file, worktree_tree
from dun.core.globs import Listing
from dun.core.spawn import LISTING_ARGS, TOPLEVEL_ARGS, Spawned, start_git, status_args


def list_files(root: Path, is_git: bool) -> list[str]:
    """Tracked plus untracked-not-ignored files. Tracked files deleted from the work tree are still listed:
    `CheckContext.match` drops them, which costs a stat per match instead of one per file."""
    if is_git:
        return Snapshot(root).files().paths()
    return _walk(root)


class _Background:
    """A git command started now (or handed over already started) and read once, by whichever thread first needs
    its output."""

    def __init__(self, cwd: Path | str, args: tuple[str, ...], started: Spawned | None = None) -> None:
        self.cwd = cwd
        self.argv = ["git", *args]
        self._proc = started or start_git(args, str(cwd))
        self.started_ns = self._proc.started_ns
        self._out: tuple[int, bytes, bytes] | None = None
        self._lock = threading.Lock()

    def done(self) -> bool:
        """Whether the command has ended (`output` then does not wait)."""
        return self._out is not None or self._proc.done()

    def output(self) -> bytes:
        """stdout; raises CalledProcessError on failure."""
        with self._lock:
            if self._out is None:
                self._out = self._proc.collect()
        code, out, err = self._out
        if code != 0:  # one clear line (a corrupt index...), still a CalledProcessError for the callers that cope
            raise GitError(Path(self.cwd), subprocess.CompletedProcess(self.argv, code, out, err))
        return out


class Snapshot:
    """One look at a git work tree, shared by every check of a run: `git status` (HEAD, the branch, changed and
    untracked files) started at once, `git ls-files --cached` (the index) once a check needs the listing.

    The status feeds the `git-status` check, the work tree's fingerprint and the untracked half of the listing; a
    run whose results are all reused never lists files. Reading the index is cheap (git walks no directory for it),
    so the listing costs no second walk of the tree beside the status's.
    """

    def __init__(self, root: Path, status: _Background | None = None, listing: _Background | None = None,
                 trees: Trees | None = None) -> None:
        self.root = root
        self.trees = trees or Trees()  # the session's (`Caches.trees`): trees found by its earlier looks
        self._status = status or _Background(root, status_args(str(root)))
        self._listing: _Background | None = listing
        self._index_before: bytes | None = None  # the index as it looked just before `git ls-files` started
        self._entries: list[tuple[bytes, bytes]] | None = None
        self._changed: set[str] | None = None
        self._lock = threading.Lock()

    def start_listing(self) -> None:
        with self._lock:
            if self._listing is None:
                self._index_before = index_identity(self.root)
                self._listing = _Background(self.root, LISTING_ARGS)

    def listing_started(self) -> bool:
        return self._listing is not None

    def status_done(self) -> bool:
        """Whether `git status` has answered (reading it then does not wait)."""
        return self._status.done()

    def unmerged(self) -> bool:
        return any(head[:1] == b"u" for head, _ in self.entries())

    def index_key(self) -> str | None:
        """The key of the listing `git ls-files` would print now, from the index file's checksum and this look's
        untracked files (`dun.core.cache.matches.index_key`), without running it; None when it cannot be told."""
        identity = index_identity(self.root)
        return None if identity is None else index_key(identity, self.untracked(), self.unmerged())

    def status(self) -> bytes:
        """`git status --porcelain=v2 --branch -z --untracked-files=all` (and `--ignored=matching` in a Python project:
        `dun.core.spawn.status_args`); raises CalledProcessError on failure."""
        return self._status.output()

    def entries(self) -> list[tuple[bytes, bytes]]:
        """(head, path) of every changed and untracked entry of the status (`dun.core.fingerprint.entries`)."""
        if self._entries is None:
            self._entries = entries(self.status())
        return self._entries

    def deleted(self) -> set[str]:
        """Tracked files missing from the work tree (`git ls-files` still lists them): a `D` in the XY field."""
        return {p.decode("utf-8", "surrogateescape") for head, p in self.entries() if head[:1] in b"12"
                and head[3:4] == b"D"}

    def untracked(self) -> list[str]:
        return [p.decode("utf-8", "surrogateescape") for head, p in self.entries() if head[:1] == b"?"]

    def changed(self) -> set[str]:
        """Every path the status names (changed, staged, unmerged, deleted or untracked): all other listed files
        are as HEAD has them, but for the files git does not look at and tracked links (`indexlook.changed_paths`).
        Decoded once per look: every per-file cache of the run asks."""
        if self._changed is None:
            from dun.core.indexlook import changed_paths

            changed = {p.decode("utf-8", "surrogateescape") for _, p in self.entries()}
            self._changed = changed | changed_paths(str(self.root)) if self.head() is not None else changed
        return self._changed

    def view(self) -> tuple[str, set[str], int] | None:
        """What `dun.engine.cache.FileCache` trusts: HEAD, every path the status names and when git began to look;
        None before the first commit or when git failed."""
        commit = self.head()
        if commit is None:
            return None
        try:
            return commit, self.changed(), self._status.started_ns
        except subprocess.CalledProcessError:
            return None

    def files(self) -> Listing:
        """Tracked plus untracked-not-ignored files, as `git ls-files --cached --others --exclude-standard`: the
        index as git printed it, then the status's untracked files."""
        self.start_listing()
        assert self._listing is not None
        raw = self._listing.output()
        text = raw.decode("utf-8", "surrogateescape")
        unmerged = self.unmerged()  # listed once per stage
        # git sorts the index bytewise: the same order as str's for ASCII; otherwise it is checked
        in_order = not unmerged and (raw.isascii() or _sorted(text))
        before = self._index_before
        # the index key names this listing only when the index looked the same before git read it and after
        confirmed = (index_key(before, self.untracked(), unmerged)
                     if before is not None and index_identity(self.root) == before else None)
        return Listing(text, self.untracked(), in_order, raw, confirmed)

    def head(self) -> str | None:
        """The commit HEAD points at (`# branch.oid`), None before the first commit or when git failed."""
        try:
            first = self.status().split(b"\0", 1)[0]
        except subprocess.CalledProcessError:
            return None
        oid = first[len(b"# branch.oid "):].decode() if first.startswith(b"# branch.oid ") else ""
        return oid if oid and oid != "(initial)" else None

    def tree(self) -> str | None:
        """The work tree's hash (`worktree_tree`): a clean tree is HEAD's own, read without copying the index."""
        try:
            dirty = bool(self.entries())
        except subprocess.CalledProcessError:
            return None
        commit = self.head()
        if dirty or commit is None:
            # equal fingerprints mean equal content: the loop's look after an iteration and before the next one
            # (nothing ran between them) build the tree once
            key = f"{self.root}\0{self.fingerprint()}"
            found = self.trees.dirty(key)
            if found is None:
                found = worktree_tree(self.root, self._index())
                if found is None:
                    return None
                self.trees.keep_dirty(key, found)
            return found
        if commit not in self.trees.commits:  # a commit's tree never changes
            proc = git(self.root, "rev-parse", "--verify", "-q", f"{commit}^{{tree}}", check=False)
            if proc.returncode != 0:
                return worktree_tree(self.root, self._index())
            self.trees.commits[commit] = proc.stdout.decode().strip()
        return self.trees.commits[commit]

    def _index(self) -> str | None:
        """The repository's index file, asked of git once per session."""
        key = str(self.root)
        if key not in self.trees.index:
            found = index_file(self.root)
            if found is None:
                return None
            self.trees.index[key] = found
        return self.trees.index[key]

    def fingerprint(self) -> str | None:
        """`dun.core.fingerprint.fingerprint` of this look; None when git failed."""
        try:
            return fingerprint(str(self.root), self.status())
        except subprocess.CalledProcessError:
            return None


def fold_untracked(untracked: list[str], tracked: str) -> list[str]:
    """Untracked files (`--untracked-files=all`) as `git status --untracked-files=normal` names them: a file inside
    a directory that holds no tracked file becomes that directory, `dir/`, at its topmost such level, once.
    `tracked` is the index listing, every path followed by a NUL (tracked files deleted from the tree count, as
    for git)."""
    text = "\0" + tracked
    holds: dict[str, bool] = {}
    out: dict[str, None] = {}
    for path in untracked:
        folded = path
        end = path.find("/")
        while 0 <= end < len(path) - 1:
            directory = path[: end + 1]
            if directory not in holds:
                holds[directory] = "\0" + directory in text
            if not holds[directory]:
                folded = directory
                break
            end = path.find("/", end + 1)
        out[folded] = None
    return list(out)


def _sorted(text: str) -> bool:
    """Whether NUL-terminated paths are in strictly ascending order (str's)."""
    return all(a < b for a, b in itertools.pairwise(text.split("\0")[:-1]))


class Early:
    """`git status`, `git rev-parse --show-toplevel` and `git ls-files` of the current directory, started before the
    rest of dun is imported (`start_early`): handed to the session (`open_session(early=...)`), which names the
    repository from it and gives its look to the run's checks (`claim`) when the repository is this one."""

    def __init__(self, status: _Background, top: _Background, listing: _Background | None) -> None:
        self._started: tuple[_Background, _Background, _Background | None] | None = (status, top, listing)

    def peek(self) -> tuple[Path, Snapshot] | None:
        """The repository of the early start and a look sharing its `git status` and listing, leaving both to
        `claim`."""
        if self._started is None:
            return None
        status, top, listing = self._started
        try:
            root = Path(top.output().decode("utf-8", "surrogateescape").strip()).resolve()
        except (subprocess.CalledProcessError, OSError):
            return None
        shared = listing if Path.cwd().resolve() == root else None  # from a subdirectory it lists only that
        return root, Snapshot(root, status, shared)

    def claim(self, root: Path, trees: Trees | None = None) -> Snapshot | None:
        """The early look, once, when it is of `root`; `trees`: the session's (`Snapshot.trees`)."""
        early = self.peek()
        self._started = None
        if early is None or early[0] != root:
            return None
        if trees is not None:
            early[1].trees = trees
        return early[1]


def start_early(started: Spawned | None = None, top: Spawned | None = None,
                listed: Spawned | None = None) -> Early | None:
    """Start git's look at the current directory before the rest of dun is imported (`dun check`; dun/entry.py
    starts the status, the top level and the listing itself, before even this module loads, and hands them over):
    git walks the tree and reads the index while Python loads. None without git: the run finds out itself."""
    try:
        status = started or start_git(status_args())
        top = top or start_git(TOPLEVEL_ARGS)
    except OSError:
        return None
    # the listing only when dun/entry.py started it: otherwise the run lists the index when it must (a run on an
    # index it has seen before reads its glob matches back, dun/core/cache/matches.py, and lists nothing)
    listing = _Background(".", LISTING_ARGS, listed) if listed is not None else None
    return Early(_Background(".", status_args(), status), _Background(".", TOPLEVEL_ARGS, top), listing)


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


