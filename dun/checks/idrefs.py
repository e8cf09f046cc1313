"""The `files` rules about identifiers: `unique-ids` (each id is defined once) and `cross-reference` (each id is
mentioned in at least one file of `references`, e.g. every requirement REQ-n has a test that names it).

An id is what `pattern` matches: its group `id`, else its first group, else the whole match.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Any

from dun.core.textfiles import read_text
from dun.engine.checkapi import CheckContext
from dun.engine.model import Item, Outcome, Status, cap_items


@dataclass(frozen=True)
class Found:
    id: str
    file: str
    line: int


def _id(match: re.Match[str]) -> str:
    if "id" in match.re.groupindex:
        return match["id"] or ""
    return (match.group(1) if match.re.groups else match.group(0)) or ""


def find_ids(ctx: CheckContext, globs: list[str], regex: re.Pattern[str]) -> tuple[list[Found], list[str]]:
    """Every id defined in the files, in order, and the files that could not be read."""
    found: list[Found] = []
    skipped: list[str] = []
    for rel in ctx.match(globs, existing=False):
        text, problem = read_text(ctx.root / rel, root=ctx.root)
        if text is None:
            if os.path.lexists(os.path.join(ctx.root, rel)):
                skipped.append(f"{rel} ({problem})")
            continue
        if not any(tok in regex.pattern for tok in ("^", "$", "\\A", "\\Z", "(?")) and not regex.search(text):
            continue  # one search of the whole file rules most files out, unless line anchors change the meaning
        for n, line in enumerate(text.split("\n"), 1):
            found.extend(Found(ident, rel, n) for m in regex.finditer(line) if (ident := _id(m)))
    return found, skipped


def _detail(skipped: list[str]) -> str:
    return f"skipped {len(skipped)} unreadable or binary file(s): {', '.join(skipped[:5])}" if skipped else ""


def unique_ids(ctx: CheckContext, o: dict[str, Any]) -> Outcome:
    found, skipped = find_ids(ctx, o["glob"], re.compile(o["pattern"]))
    first: dict[str, Found] = {}
    items: list[Item] = []
    for f in found:
        if f.id in first:
            earlier = first[f.id]
            items.append(Item(f"duplicate id {f.id} (first at {earlier.file}:{earlier.line})", f.file, f.line))
        else:
            first[f.id] = f
    if items:
        return Outcome(Status.FAIL, f"{len(items)} duplicate id(s) among {len(found)}: {items[0].text}"[:200],
                       _detail(skipped), cap_items(items, o["max_items"]))
    return Outcome(Status.PASS, f"{len(first)} ids, all unique", _detail(skipped))


def cross_reference(ctx: CheckContext, o: dict[str, Any]) -> Outcome:
    found, skipped = find_ids(ctx, o["glob"], re.compile(o["pattern"]))
    defined: dict[str, Found] = {}
    for f in found:
        defined.setdefault(f.id, f)
    if not defined:
        return Outcome(Status.PASS, f"no ids match /{o['pattern']}/ in {', '.join(o['glob'])}", _detail(skipped))
    # One alternation of every id, longest first, bounded by non-word characters: REQ-1 is not found in REQ-10.
    alternatives = "|".join(re.escape(i) for i in sorted(defined, key=len, reverse=True))
    mention = re.compile(rf"(?<!\w)(?:{alternatives})(?!\w)")
    definitions = {(f.file, f.line, f.id) for f in found}
    mentioned: set[str] = set()
    for rel in ctx.match(o["references"], existing=False):
        text, _ = read_text(ctx.root / rel, root=ctx.root)
        if text is None or not mention.search(text):
            continue
        for n, line in enumerate(text.split("\n"), 1):
            # a definition does not reference itself; any other mention, in any file, does
            mentioned.update(m.group(0) for m in mention.finditer(line) if (rel, n, m.group(0)) not in definitions)
    missing = [f for i, f in defined.items() if i not in mentioned]
    where = ", ".join(o["references"])
    if missing:
        items = [Item(f"{f.id} is not referenced in {where}", f.file, f.line) for f in missing]
        return Outcome(Status.FAIL, f"{len(missing)} of {len(defined)} id(s) not referenced in {where}: "
                                    f"{', '.join(f.id for f in missing[:5])}"[:200], _detail(skipped),
                       cap_items(items, o["max_items"]))
    return Outcome(Status.PASS, f"all {len(defined)} id(s) referenced in {where}", _detail(skipped))

