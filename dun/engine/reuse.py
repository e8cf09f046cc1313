"""The no-change path of `dun check`: a check's last result is reused while nothing it depends on has changed.

"Unchanged" means all of these are equal to when the result was made:
- the work tree: HEAD, the branch and its upstream, the index's view of every changed path, and the content of
  every changed or untracked (not ignored) file (`Snapshot.fingerprint`); outside git nothing is reused;
- the check's definition, its plugin's triggers, the whole config, dun's version, the source of the check's
  type, the Python running dun and the environment (less the variables that only describe the terminal,
  `cache.VOLATILE_ENV`);
- the stamps (size, mtime, inode) of the files its type names as inputs besides the work tree (ignored coverage
  data, paths named directly) and of its plugin's `path-exists` triggers.

A command check's inputs cannot be known, so it is reused only when all of that holds: the whole work tree,
HEAD and its definition are unchanged. Errors are never reused (a timeout or crash may not repeat). Entries live
in `$XDG_CACHE_HOME/dun/<repo>/results.json`, written atomically and merged with what a concurrent run wrote.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any

from dun import __version__
from dun.core.cachedir import look, stamp
from dun.core.digest import sha256
from dun.engine.cache import RACY_WINDOW_NS, cache_dir, stable_env, watch
from dun.engine.checkapi import CheckContext, CheckSpec, CheckType
from dun.engine.model import CheckResult, Item, Status

RESULTS_VERSION = 1


def disabled_by_env() -> bool:
    return os.environ.get("DUN_NO_CACHE", "") not in ("", "0")


def result_to_dict(r: CheckResult) -> dict[str, Any]:
    return {**r.to_dict(), "description": r.description}


def result_from_dict(d: dict[str, Any]) -> CheckResult:
    return CheckResult(id=d["id"], plugin=d["plugin"], type=d["type"], status=Status(d["status"]),
                       priority=d["priority"], signal=d["signal"], detail=d["detail"], next=d["next"],
                       items=[Item(text=i["text"], file=i["file"], line=i["line"]) for i in d["items"]],
                       duration_s=d["duration_s"], description=d["description"], cached=True)


class ResultCache:
    """Results of one repository's checks, each stored with what it depended on."""

    def __init__(self, root: Path, tree: str, ctx: CheckContext) -> None:
        self.root = root
        self.tree = tree
        self.ctx = ctx
        self.path = cache_dir(root) / "results.json"
        self._setup = _digest([getattr(ctx.config, "values", None), stable_env(), os.path.realpath(sys.executable)])
        self._entries: dict[str, Any] = _load(self.path)
        self._new: dict[str, Any] = {}
        self._lock = threading.Lock()

    def key(self, check: CheckSpec, triggers: list[dict[str, str]]) -> str:
        definition = [RESULTS_VERSION, __version__, check.id, check.plugin, check.type, check.priority,
                      check.plugin_priority, check.timeout, check.description, check.next, check.options, triggers,
                      self._setup]
        return _digest(definition)

    def inputs(self, check: CheckSpec, ctype: CheckType | None, triggers: list[dict[str, str]]) -> list[Any]:
        """[path, look] of every file beyond the work tree that the result depends on, the type's source too; a
        look is a stamp, or for `path-exists` triggers only whether the path exists."""
        paths: list[str] = []
        if ctype is not None:
            module = sys.modules.get(getattr(ctype.run, "__module__", ""))
            if module is not None and getattr(module, "__file__", None):
                paths.append(str(module.__file__))
            if ctype.inputs is not None:
                paths.extend(ctype.inputs(check, self.ctx))
        looks: list[list[Any]] = [[self._full(p), stamp(self._full(p))] for p in dict.fromkeys(paths)]
        looks += [[self._full(t["path-exists"]), os.path.exists(self._full(t["path-exists"]))]
                  for t in triggers if "path-exists" in t]
        return looks

    def _full(self, path: str) -> str:
        return path if os.path.isabs(path) else os.path.join(self.root, path)

    def get(self, check: CheckSpec, triggers: list[dict[str, str]]) -> CheckResult | None:
        entry = self._entries.get(check.id)
        if not isinstance(entry, dict) or entry.get("tree") != self.tree or entry.get("key") != self.key(
                check, triggers):
            return None
        try:
            if any(look(path, stored) != stored for path, stored in entry["inputs"]):
                return None
            result = result_from_dict(entry["result"])
        except (KeyError, TypeError, ValueError):
            return None  # an entry from an older layout: run the check
        for path, stored in entry["inputs"]:
            watch(path, stored)
        return result

    def put(self, check: CheckSpec, triggers: list[dict[str, str]], inputs: list[Any], result: CheckResult) -> None:
        """Remember `result`, with the input stamps taken before the check ran (a change during the run then
        invalidates it). Errors and results whose inputs were written within the racy window are not kept."""
        if result.status is Status.ERROR:
            return
        now = time.time_ns()
        if any(isinstance(s, list) and now - s[1] < RACY_WINDOW_NS for _, s in inputs):
            return
        with self._lock:
            self._new[check.id] = {"key": self.key(check, triggers), "tree": self.tree, "inputs": inputs,
                                   "result": result_to_dict(result)}

    def save(self) -> None:
        """Merge this run's entries into the file as it is now (a concurrent run may have added its own)."""
        with self._lock:
            if not self._new:
                return
            merged = {**_load(self.path), **self._new}
            self._new = {}
        try:
            from dun.core.atomic import write_text_atomic

            write_text_atomic(self.path, json.dumps({"version": RESULTS_VERSION, "checks": merged},
                                                    separators=(",", ":")))
        except OSError:
            pass  # a read-only or full cache directory must never fail a check


def _load(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text("utf-8"))
    except (OSError, ValueError):
        return {}  # missing or corrupt: start empty, it is only a cache
    if not isinstance(data, dict) or data.get("version") != RESULTS_VERSION or not isinstance(data.get("checks"),
                                                                                               dict):
        return {}
    checks: dict[str, Any] = data["checks"]
    return checks


def _digest(value: Any) -> str:
    return sha256(json.dumps(value, sort_keys=True, default=repr).encode()).hexdigest()
