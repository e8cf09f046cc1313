"""`files`: assertions about which files exist and what they contain."""

from __future__ import annotations

import os
import re
from functools import partial
from pathlib import Path
from typing import Any

from dun.config.schema import Field
from dun.core.cache.files import FileCache
from dun.core.globs import glob_errors
from dun.core.textfiles import read_text
from dun.engine.checkapi import CheckContext, CheckSpec, CheckType, git_view
from dun.engine.hookspecs import hookimpl
from dun.engine.model import Item, Outcome, Status, cap_items

RULES = ("path-exists", "path-missing", "glob-min-count", "glob-max-count", "pattern-count", "unique-ids",
         "cross-reference")
FIELDS = {
    "rule": Field("str", "Which assertion to make.", required=True, choices=RULES),
    "paths": Field("list", "Paths for path-exists / path-missing.", default=[], item=Field("str", "path"),
                   scalar_ok=True),
    "glob": Field("list", "Gitignore-style globs (recursive `**`, `!` excludes) for glob-* and pattern-count.",
                  default=[], item=Field("str", "glob"), scalar_ok=True),
    "pattern": Field("str", "Regex counted by pattern-count, per line; for unique-ids and cross-reference, what an "
                            "id is (its group `id`, else its first group, else the whole match).", default=None),
    "references": Field("list", "cross-reference: globs of the files that must mention each id.", default=[],
                        item=Field("str", "glob"), scalar_ok=True),
    "min": Field("int", "Lowest allowed count (glob-min-count, pattern-count).", default=None, minimum=0),
    "max": Field("int", "Highest allowed count (glob-max-count, pattern-count).", default=None, minimum=0),
    "max_items": Field("int", "Items listed; the rest are counted.", default=50, minimum=1),
}
NEEDS = {
    "path-exists": ("paths",), "path-missing": ("paths",), "glob-min-count": ("glob", "min"),
    "glob-max-count": ("glob", "max"), "pattern-count": ("glob", "pattern"), "unique-ids": ("glob", "pattern"),
    "cross-reference": ("glob", "pattern", "references"),
}


def validate(options: dict[str, Any]) -> list[tuple[str, str]]:
    rule = options["rule"]
    errors = [(key, f"rule '{rule}' needs '{key}'") for key in NEEDS[rule] if options.get(key) in (None, [])]
    if rule == "pattern-count" and options.get("min") is None and options.get("max") is None:
        errors.append(("max", "rule 'pattern-count' needs 'min' or 'max'"))
    errors += glob_errors(options, "glob") + glob_errors(options, "references")
    if options.get("pattern"):
        try:
            re.compile(options["pattern"])
        except re.error as exc:
            errors.append(("pattern", f"invalid regex {options['pattern']!r}: {exc}"))
    return errors


def _bounds(count: int, what: str, lo: int | None, hi: int | None) -> tuple[Status, str]:
    if lo is not None and count < lo:
        return Status.FAIL, f"{count} {what}, need at least {lo}"
    if hi is not None and count > hi:
        return Status.FAIL, f"{count} {what}, allowed at most {hi}"
    return Status.PASS, f"{count} {what}"


def run(spec: CheckSpec, ctx: CheckContext) -> Outcome:
    o = spec.options
    rule, limit = o["rule"], o["max_items"]
    if rule in ("path-exists", "path-missing"):
        want = rule == "path-exists"
        wrong = [p for p in o["paths"] if (ctx.root / p).exists() != want]
        if not wrong:
            return Outcome(Status.PASS, f"all {len(o['paths'])} paths {'exist' if want else 'absent'}")
        verb = "missing" if want else "present but should not be"
        items = [Item(text=verb, file=p) for p in wrong]
        return Outcome(Status.FAIL, f"{len(wrong)} path(s) {verb}: {', '.join(wrong[:3])}",
                       items=cap_items(items, limit))
    if rule == "pattern-count":
        # the cache loads while git still looks at the tree; the match waits for it
        cache = FileCache(ctx.root, "pattern-count", o["pattern"], partial(git_view, ctx), ctx.caches)
        return _pattern_count(ctx, o, cache, ctx.match(o["glob"], existing=False))
    if rule in ("unique-ids", "cross-reference"):
        from dun.checks import idrefs

        return idrefs.unique_ids(ctx, o) if rule == "unique-ids" else idrefs.cross_reference(ctx, o)
    matched = ctx.match(o["glob"])
    if rule in ("glob-min-count", "glob-max-count"):
        status, signal = _bounds(len(matched), f"files match {', '.join(o['glob'])}", o["min"], o["max"])
        items = [Item(text=f"matches {', '.join(o['glob'])}", file=p) for p in matched] if o["max"] is not None else []
        return Outcome(status, signal, items=cap_items(items, limit) if status is Status.FAIL else [])
    raise AssertionError(f"unhandled rule {rule}")  # the schema's choices make this unreachable


def _scan(path: Path, regex: re.Pattern[str], root: Path) -> tuple[list[list[Any]], str]:
    """([line, text] per matching line, problem); a problem means the file was skipped."""
    text, problem = read_text(path, root=root)
    if text is None:
        return [], problem
    # Most files have no match at all; one search of the whole text decides, unless the pattern's meaning
    # depends on line boundaries (anchors, lookarounds).
    if not any(tok in regex.pattern for tok in ("^", "$", "\\A", "\\Z", "(?")) and not regex.search(text):
        return [], ""
    # Split on "\n" only: line numbers then agree with editors and grep (str.splitlines also splits on \f).
    lines = (line.rstrip("\r") for line in text.split("\n"))
    return [[n, line.strip()[:200]] for n, line in enumerate(lines, 1) if regex.search(line)], ""


def _pattern_count(ctx: CheckContext, o: dict[str, Any], cache: FileCache, matched: list[str]) -> Outcome:
    regex = re.compile(o["pattern"])
    hits: list[Item] = []
    skipped: list[str] = []
    base = str(ctx.root)
    searched = 0
    vouched = cache.vouched_many(matched)  # git vouches for these files: no stat
    for rel, found in zip(matched, map(vouched.get, matched), strict=True):
        if found is None:
            path = os.path.join(base, rel)  # plain strings: pathlib costs more than the stat on big trees
            stamp = cache.stamp(path)
            if stamp is None and not os.path.lexists(path):
                continue  # tracked but deleted from the work tree
            found = cache.get(rel, stamp)
            if found is None:
                found = _scan(Path(path), regex, ctx.root)
                cache.put(rel, stamp, found, path)
        searched += 1
        lines, problem = found
        if problem:
            skipped.append(f"{rel} ({problem})")
        if lines:
            hits.extend(Item(text=text, file=rel, line=n) for n, text in lines)
    cache.save(keep=set(matched))
    status, signal = _bounds(len(hits), f"line(s) match /{o['pattern']}/ in {searched} files", o["min"], o["max"])
    detail = f"skipped {len(skipped)} unreadable or binary file(s): {', '.join(skipped[:5])}" if skipped else ""
    return Outcome(status, signal, detail, cap_items(hits, o["max_items"]) if status is Status.FAIL else [])


@hookimpl
def dun_check_types() -> list[CheckType]:
    return [CheckType("files", "Assert paths exist or not, count globs and pattern matches.", FIELDS, run, validate,
                      inputs=lambda spec, ctx: list(spec.options["paths"]),
                      stamped=lambda spec: spec.options["rule"] not in ("unique-ids", "cross-reference"))]
