"""The whole-run no-change path of `dun check`: when the last run's every result came from the caches, its output
is stored with everything its keys were built from, and the next identical run prints it again without loading
click, the plugins or the checks.

Replayed only when all of these are equal to that run's: the arguments, the working directory, whether stdout is a
terminal, the environment (less `cache.VOLATILE_ENV`), the Python, dun's version, the work tree's fingerprint
(`Snapshot.fingerprint`: HEAD, the index's view, the content of every changed or untracked file), and the look of
every look a cache key was built from (the session's `Consulted` record, dun/core/cache/session.py: config files,
manifest directories and files, check type sources, sys.path entries, each reused result's inputs, declared
environment variables and git refs included) plus the source of every non-standard module that run had loaded.
Anything else runs `dun check` as usual, which then reuses what it can per check. Never with `--no-cache`,
`--output`, DUN_NO_CACHE=1, or a look written within the racy window; nor once a reused result's `ttl:` has run
out, or the clock has been set back since it was stored (the run would have run that check again).
"""

from __future__ import annotations

import os
import sys

from dun import __version__
from dun.core.cache import any_racy, env_disabled, look, stamp
from dun.core.cache.file import CacheFile
from dun.core.cachedir import cache_dir_path, stable_env
from dun.core.digest import sha256
from dun.core.fingerprint import fingerprint
from dun.core.spawn import Spawned

TYPE_CHECKING = False  # not typing's: this module loads before everything else, importing typing costs
if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from dun.core.cache.tree import Walks
    from dun.core.fingerprint import TreeLook

FILE = "replay.marshal"  # marshal, not JSON: the json module alone would cost a fifth of a replayed run
RESULTS = "results.marshal"  # dun/engine/reuse.py's, beside it


def _setup(argv: list[str]) -> str:
    parts = (__version__, argv, os.getcwd(), sys.stdout.isatty(), stable_env(), os.path.realpath(sys.executable))
    return sha256(repr(parts).encode("utf-8", "surrogateescape")).hexdigest()


def module_looks(known: dict[str, object] | None = None) -> dict[str, object]:
    """The source of every loaded module outside the standard library: dun's own and any plugin's code. Installed
    packages count even where they live inside the standard library's directory (a Python without a venv keeps
    site-packages under lib/python3.X: an upgraded plugin there must be seen). `known`: looks already taken and
    found unchanged since this process started (the launch plan's), used for the paths they name, unstamped."""
    import sysconfig

    paths = sysconfig.get_paths()
    stdlib = tuple({paths["stdlib"], paths["platstdlib"]})
    installed = tuple({paths["purelib"], paths["platlib"]})
    out: dict[str, object] = {}
    for module in list(sys.modules.values()):
        path = getattr(module, "__file__", None)
        if isinstance(path, str) and (not path.startswith(stdlib) or path.startswith(installed)):
            out[path] = known[path] if known is not None and path in known else stamp(path)
    return out


def save(root: Path, argv: list[str], tree: str, text: str, code: int, consulted: dict[str, object],
         expires: float | None = None) -> None:
    """Store this run's output for replay (the caller has checked that every result was reused); `consulted` holds
    every look the run's cache keys were built from; `expires`: when the first reused result's `ttl:` runs out."""
    looks = {**consulted, **module_looks()}
    if any_racy(looks.items()):
        return  # a same-size rewrite within the clock's granularity could go unseen
    import time

    _file(str(root)).store((_setup(argv), tree, sorted(looks.items()), text, int(code), expires, time.time()))


def _file(root: str) -> CacheFile:
    return CacheFile(os.path.join(cache_dir_path(root), FILE), "replay", code=())


def guess_root() -> str | None:
    """The work tree's top level as git would find it from here, without asking git (a second process beside
    `git status` costs a replayed run 2 ms): the nearest directory holding `.git`. None when the environment
    points git elsewhere. A wrong guess only misses: every stored output carries the key it was made under."""
    if any(v in os.environ for v in ("GIT_DIR", "GIT_WORK_TREE", "GIT_COMMON_DIR")):
        return None
    here = os.getcwd()
    while True:
        if os.path.lexists(os.path.join(here, ".git")):
            return os.path.realpath(here)
        parent = os.path.dirname(here)
        if parent == here:
            return None
        here = parent


def replay(argv: list[str], status: Spawned, meanwhile: Callable[[Callable[[], bool]], None] | None = None,
           tree_look: TreeLook | None = None) -> int | None:
    """Print the stored output of an identical earlier run and return its exit code; None when anything differs
    (the run then goes on as usual, with the `git status` already started). `meanwhile` is given the time git still
    walks the tree, and a test of whether it has finished, when the last run was not replayed either: work a miss
    would need next (dun/entry.py loads the modules of a full run), never anything a replay would have to undo.
    `tree_look` computes the work tree's fingerprint from `status` (and when its looks began), shared with the
    launch of the next step (dun/engine/launch.py); what it needs beside git's answer is looked at before git has
    finished."""
    if env_disabled() or "--no-cache" in argv:
        return None
    root = guess_root()
    if root is None:
        return None
    stored = _file(root).load(_accept)
    if stored is None:
        return None  # missing, hostile, corrupt or from another layout
    setup, tree, looks, text, exit_code, expires, saved = stored
    if expires is not None:
        import time

        # saved in the future: the clock was set back since, so a `ttl:` may have run out unseen
        if not saved <= time.time() < expires:
            return None
    if setup != _setup(argv):
        return None
    trees = [(path, was) for path, was in looks if path.startswith("tree:")]
    if not trees:
        return _replay_rest(root, tree, looks, text, exit_code, status, meanwhile, tree_look)
    from dun.core.cache.tree import Walks

    walks = Walks()
    walks.begin(trees)  # walked beside git status and everything below, collected last
    try:
        return _replay_rest(root, tree, looks, text, exit_code, status, meanwhile, tree_look, walks)
    finally:
        walks.close()


def _replay_rest(root: str, tree: str, looks: list[tuple[str, object]], text: str, exit_code: int,
                 status: Spawned, meanwhile: Callable[[Callable[[], bool]], None] | None,
                 tree_look: TreeLook | None, walks: Walks | None = None) -> int | None:
    if any(look(path, was) != was for path, was in looks if not path.startswith("tree:")):
        return None
    if tree_look is not None:
        tree_look.prepare(root)
    if meanwhile is not None and _missed_last(root):
        meanwhile(status.done)
    if walks is not None and any(walks.look(path, was) != was for path, was in looks if path.startswith("tree:")):
        return None
    if tree_look is not None:
        seen = tree_look.of(root)
        if seen is None or seen[0] != tree:
            return None
    else:
        code, out, _ = status.collect()
        if code != 0 or fingerprint(root, out) != tree:
            return None
    sys.stdout.write(text)
    return exit_code


def _missed_last(root: str) -> bool:
    """Whether the last run was not replayed: it stored results (written after this file). Then this one likely
    differs too, and loading what a full run needs while git walks the tree pays; after a replay it would only take
    CPU from git."""
    directory = cache_dir_path(root)
    try:
        stored = os.stat(os.path.join(directory, RESULTS)).st_mtime_ns
        return stored > os.stat(os.path.join(directory, FILE)).st_mtime_ns
    except OSError:
        return False


def _accept(payload: tuple[object, ...]
            ) -> tuple[str, str, list[tuple[str, object]], str, int, float | None, float]:
    setup, tree, looks, text, code, expires, saved = payload
    if not (isinstance(setup, str) and isinstance(tree, str) and isinstance(looks, list)
            and isinstance(text, str) and isinstance(code, int) and isinstance(expires, float | int | None)
            and isinstance(saved, float | int)):
        raise TypeError("another shape")
    for path, _ in looks:
        if not isinstance(path, str):
            raise TypeError("another shape")
    return setup, tree, looks, text, code, expires, saved
