"""The no-change path of `dun check`: a check's last result is reused only while every input it reads is known and
unchanged.

"Unchanged" means all of these are equal to when the result was made:
- the work tree: HEAD, the branch and its upstream, the index's view of every changed path, and the content of
  every changed or untracked (not ignored) file (`Snapshot.fingerprint`); outside git nothing is reused;
- the check's definition (its `inputs:`, `ttl:` and `flaky:` too), its plugin's triggers, the whole config, dun's
  version, the source of the check's type, the Python running dun and the environment (less the variables that
  only describe the terminal, `cachedir.VOLATILE_ENV`);
- the looks (dun/engine/inputs.py) of what its type names as inputs beyond the work tree (ignored coverage
  data, paths named directly, the project's interpreter and its site-packages) and of what the check declares
  (`inputs:` files, ignored ones included, env names, programs, git refs and config keys), and whether each
  `path-exists` trigger exists.

A `command` check may read anything: it is reused only when it declares `inputs:`. A result older than the check's
`ttl:` is not reused (nor, with a `ttl:`, one made at a time the clock has since been set back past); nor is an
error (a timeout or crash may not repeat) unless the check says it repeats on the same inputs (`Outcome.lasting`: a
file it refuses to read), nor a failure of a `flaky: true` check.
A result is stored only when its inputs and the work tree looked the same after the checks ran as before: one
fixed while the checks ran is run again next time. A result made in the loop's sandbox is reused only inside it;
the loop reuses what `dun check` found outside it. `--no-cache` runs everything and still stores what it found.
Entries live in `$XDG_CACHE_HOME/dun/<repo>/results.marshal`, written atomically and merged with what a concurrent
run wrote.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from dun import __version__
from dun.core.cache import CLOCK_TICK_NS, any_racy, look, settle
from dun.core.cache.file import CacheFile
from dun.core.cache.session import Caches
from dun.core.cachedir import cache_dir_path, stable_env
from dun.core.digest import sha256
from dun.engine.checkapi import CheckContext, CheckSpec, CheckType
from dun.engine.inputs import declared_looks
from dun.engine.model import CheckResult, Item, Status
from dun.engine.replay import FILE as REPLAY
from dun.engine.replay import RESULTS

Looks = list[tuple[str, object]]
LOOK_KEYS = ("env:", "git-refs:", "git-config:", "tree:")  # keys of looks that are not paths


def result_to_dict(r: CheckResult) -> dict[str, object]:
    return {**r.to_dict(), "description": r.description}


def result_from_dict(d: dict[str, Any], since: float) -> CheckResult:
    return CheckResult(id=d["id"], plugin=d["plugin"], type=d["type"], status=Status(d["status"]),
                       priority=d["priority"], signal=d["signal"], detail=d["detail"], next=d["next"],
                       items=[Item(text=i["text"], file=i["file"], line=i["line"]) for i in d["items"]],
                       duration_s=d["duration_s"], description=d["description"], cached=True, since=since)


class ResultCache:
    """Results of one repository's checks, each stored with what it depended on."""

    def __init__(self, root: Path, tree: str, ctx: CheckContext, caches: Caches | None = None,
                 looked: tuple[int, int] = (0, 0)) -> None:
        self.root = root
        self.tree = tree
        self.looked = looked  # when git began to look at the tree, when its fingerprint began to be hashed
        self.ctx = ctx
        self.caches = caches or Caches()
        self.file = CacheFile(Path(cache_dir_path(str(root))) / RESULTS, "results")
        self.path = Path(self.file.path)
        self._setup = _digest([getattr(ctx.config, "values", None), stable_env(), os.path.realpath(sys.executable)])
        self._entries: dict[str, object] = (self.file.load(_accept) or {}) if self.caches.read else {}
        self._new: dict[str, Any] = {}
        self._keys: dict[str, tuple[CheckSpec, list[dict[str, str]], str]] = {}
        self._lock = threading.Lock()
        self._ran = False  # some check ran (its result was not reused): the stored whole-run output is out of date

    def key(self, check: CheckSpec, triggers: list[dict[str, str]]) -> str:
        made = self._keys.get(check.id)
        if made is None or made[0] is not check or made[1] != triggers:  # asked by `get` and again by `put`
            definition = [__version__, check.id, check.plugin, check.type, check.priority, check.plugin_priority,
                          check.timeout, check.description, check.next, check.options, check.inputs, check.ttl,
                          check.flaky, triggers, self._setup]
            made = (check, triggers, _digest(definition))
            self._keys[check.id] = made
        return made[2]

    def inputs(self, check: CheckSpec, ctype: CheckType | None, triggers: list[dict[str, str]]) -> Looks | None:
        """The looks of everything beyond the work tree the result depends on (the type's source too); None when
        they cannot be known: an opaque type without `inputs:`, or a type or declaration that says so. For a check
        whose command started as dun started, the looks taken before it started (dun/engine/launch.py)."""
        looks = self._inputs(check, ctype, triggers)
        launches = self.ctx.launches
        return launches.inputs(check.id, looks) if launches is not None else looks

    def _inputs(self, check: CheckSpec, ctype: CheckType | None, triggers: list[dict[str, str]]) -> Looks | None:
        if ctype is None or (ctype.opaque and check.inputs is None):
            return None
        if triggers and all(set(t) == {"path-exists"} for t in triggers) and not any(
                exists for _, exists in self.trigger_looks(triggers)):
            # its plugin does not apply: the result is kept with its triggers' looks alone (`put`), and not at all
            # if a trigger appears before the check decides (walking a JavaScript check's globs cost 25-50 ms)
            return None
        paths: list[str] = []
        module = sys.modules.get(getattr(ctype.run, "__module__", ""))
        if module is not None and getattr(module, "__file__", None):
            paths.append(str(module.__file__))
        if ctype.inputs is not None:
            named = ctype.inputs(check, self.ctx)
            if named is None:
                return None
            paths.extend(named)
        looks: Looks = [(full, look(full, None)) for full in dict.fromkeys(self._full(p) for p in paths)]
        looks += self.trigger_looks(triggers)
        if check.inputs is not None:
            declared = declared_looks(str(self.root), check.inputs)
            if declared is None:
                return None
            looks += declared
        return settle(looks)  # a file just written (by a check this one is after) is compared by its content

    def trigger_looks(self, triggers: list[dict[str, str]]) -> Looks:
        """Whether each `path-exists` trigger exists: with the work tree, all a "not applicable" skip depends on."""
        return [(full, os.path.exists(full)) for full in (self._full(t["path-exists"]) for t in triggers
                                                          if "path-exists" in t)]

    def _full(self, path: str) -> str:
        """An absolute path; a look's own key (`git-config:`, `git-refs:`, `env:`, `tree:`, dun/engine/inputs.py) as it
        is."""
        return path if os.path.isabs(path) or path.startswith(LOOK_KEYS) else os.path.join(self.root, path)

    def get(self, check: CheckSpec, ctype: CheckType | None, triggers: list[dict[str, str]]) -> CheckResult | None:
        entry = self._entries.get(check.id)
        if (ctype is None or not isinstance(entry, dict) or entry.get("tree") != self.tree
                or entry.get("key") != self.key(check, triggers)):
            return None
        # a check whose inputs cannot be known is reused only as "not applicable": that depends on its triggers alone
        if (ctype.opaque and check.inputs is None) and entry.get("inapplicable") is not True:
            return None
        # made in the loop's sandbox (no network, fewer writable paths): not the answer of a run outside it; the
        # other way is sound (the loop reuses what `dun check` found on the same inputs)
        if entry.get("confined") is not False and getattr(self.ctx, "confine", None) is None:
            return None
        try:
            made = float(entry["made"])
            # made in the future: the clock has been set back since, so how long ago is unknown
            if check.ttl is not None and not 0 <= time.time() - made <= check.ttl:
                return None
            if any(look(path, stored) != stored for path, stored in entry["inputs"]):
                return None
            result = result_from_dict(entry["result"], made)
        except (KeyError, TypeError, ValueError, AttributeError):
            return None  # an entry of another shape: run the check
        for path, stored in entry["inputs"]:
            self.caches.record(path, stored)
        return result

    def moved(self, check: CheckSpec, triggers: list[dict[str, str]]) -> bool:
        """Whether the check's stored result was made on this work tree and definition, and only an input it looked
        at has changed since (dun/engine/runner.py `together`)."""
        entry = self._entries.get(check.id)
        if not isinstance(entry, dict) or entry.get("tree") != self.tree or entry.get("key") != self.key(check,
                                                                                                       triggers):
            return False
        try:
            return any(look(path, stored) != stored for path, stored in entry["inputs"])
        except (KeyError, TypeError, ValueError):
            return False

    def put(self, check: CheckSpec, triggers: list[dict[str, str]], inputs: Looks | None, result: CheckResult,
            inapplicable: Looks | None = None) -> None:
        """Remember `result`, with its inputs as looked at before the check ran. Not kept: errors but lasting ones
        (`Outcome.lasting`), failures of a flaky check, results whose inputs cannot be known or were written within
        the racy window. A check found
        not applicable (no trigger matched) is kept with its triggers' looks alone, whatever it would read: those
        given as `inapplicable`, taken before the triggers were decided (a trigger that appears after the decision
        then differs from them)."""
        self._ran = True
        if inapplicable is not None:
            inputs = inapplicable
        if inputs is None or (result.status is Status.ERROR and not result.lasting) or any_racy(inputs):
            return
        if check.flaky and result.status is not Status.PASS and result.status is not Status.SKIP:
            return
        with self._lock:
            self._new[check.id] = {"key": self.key(check, triggers), "tree": self.tree, "inputs": inputs,
                                   "made": time.time(), "result": result_to_dict(result),
                                   "inapplicable": inapplicable is not None,
                                   "confined": getattr(self.ctx, "confine", None) is not None}

    def save(self, start_look: Callable[[], Callable[[], str | None]] | None = None,
             early: Callable[[], str | None] | None = None, after_all: bool = False) -> None:
        """Merge this run's entries into the file as it is now (a concurrent run may have added its own). The tree
        and each entry's inputs are looked at again first: what moved while the checks ran is not kept. `early` is
        the look started once every check that reads the tree other than through stamps had finished (None when
        none ran); it stands for all when no file read through a stamp was written since git looked (the
        fingerprint's hash, for files git named as changed), else a look is started now, after every check, unless
        `early` itself was started after every check had finished (`after_all`)."""
        with self._lock:
            new, self._new = self._new, {}
        if self._ran:
            self._drop_replay()
        if not new:
            return
        if start_look is not None:
            later = early if after_all or self._reads_settled() else start_look()
            if later is not None and later() != self.tree:
                return
        new = {cid: e for cid, e in new.items() if all(look(p, s) == s for p, s in e["inputs"])}
        if new:
            self.file.store({**(self.file.load(_accept) or {}), **new})


    def _drop_replay(self) -> None:
        """Remove the output stored for replay: this run ran a check, so it may have found what the replayed run
        did not (`--no-cache` after an input dun cannot see changed, a result not stored). Left in place, the next
        identical `dun check` would print the older output again."""
        with contextlib.suppress(OSError):
            os.unlink(self.path.parent / REPLAY)

    def _reads_settled(self) -> bool:
        reads, (status_ns, hashed_ns) = self.caches.reads, self.looked
        return status_ns > 0 and reads.clean_ns < status_ns - CLOCK_TICK_NS and reads.changed_ns < hashed_ns - (
            CLOCK_TICK_NS)


def _accept(payload: object) -> dict[str, object]:
    if not isinstance(payload, dict):
        raise TypeError("not a mapping")
    return payload


def _digest(value: object) -> str:
    return sha256(json.dumps(value, sort_keys=True, default=repr).encode()).hexdigest()
