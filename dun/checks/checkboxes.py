"""`checkboxes`: unchecked markdown boxes in mission files are outstanding work."""

from __future__ import annotations

from collections.abc import Collection
from functools import partial
from typing import Any

from dun.checks.readers import DEFAULT_OPTIONAL_HEADINGS
from dun.config.schema import Field
from dun.core.cache.files import FileCache
from dun.core.globs import glob_errors, is_literal
from dun.core.textfiles import Refusal, read_text
from dun.engine.checkapi import CheckContext, CheckSpec, CheckType, git_view
from dun.engine.hookspecs import hookimpl
from dun.engine.model import Item, Outcome, Status, cap_items, more_item

FIELDS = {
    "files": Field("list", "Markdown files or globs to read.", default=["MISSION.md", "fix_plan.md"],
                   item=Field("str", "file or glob"), scalar_ok=True),
    "optional_headings": Field("list", "Boxes under headings starting with these words do not block.",
                               default=list(DEFAULT_OPTIONAL_HEADINGS), item=Field("str", "heading")),
    "max_items": Field("int", "Items listed; the rest are counted.", default=200, minimum=1),
}


def mission_paths(ctx: CheckContext, files: list[str]) -> list[str]:
    """Existing files named directly, then glob matches, each once."""
    literal = [f for f in files if is_literal(f)]
    globbed = [f for f in files if not is_literal(f)]
    paths = [f for f in literal if (ctx.root / f).is_file()]
    seen = set(paths)
    paths += [p for p in (ctx.match(globbed, existing=False) if globbed else []) if p not in seen]
    return paths


def _tally(boxes: Any) -> tuple[int, int, list[tuple[int, str]]]:
    """What the check needs of one file's boxes, and all its cache keeps: (ticked, open optional, the open
    required boxes as (line, text)). A tenth of the objects of every box's fields, which made the cache slow to load."""
    done = optional = 0
    required: list[tuple[int, str]] = []
    for box in boxes:
        if box.checked:
            done += 1
        elif box.optional:
            optional += 1
        else:
            required.append((box.line, box.text))
    return done, optional, required


def box_cache(ctx: CheckContext, optional_headings: list[str]) -> FileCache:
    return FileCache(ctx.root, "checkboxes", "\0".join(optional_headings), partial(git_view, ctx), ctx.caches)


def collect_boxes(ctx: CheckContext, paths: list[str], optional_headings: list[str], cache: FileCache,
                  named: Collection[str] = ()) -> tuple[list[tuple[str, Any]], list[str]]:
    """Each readable file with its tally (`_tally`), and one problem line per file that could not be read. `named`:
    the paths named outright rather than matched in git's listing."""
    tallies: list[tuple[str, object]] = []
    problems: list[str] = []
    # git vouches for the files it lists: no stat. Not for a file named outright (MISSION.md), which may be ignored:
    # git then says nothing of its content
    vouched = cache.vouched_many([p for p in paths if p not in named])
    for rel in paths:
        hit = vouched.get(rel)
        if hit is None:
            path = ctx.root / rel
            stamp = cache.stamp(path)
            if stamp is None and not path.exists():
                continue  # tracked but deleted from the work tree
            hit = cache.get(rel, stamp)
            if hit is None:
                text, problem = read_text(path, strict_utf8=True, root=ctx.root)
                if text is None:
                    line = f"{rel}: {problem}"
                    problems.append(Refusal(line) if isinstance(problem, Refusal) else line)
                    continue
                from dun.checks.readers.markdown import parse_boxes

                hit = _tally(parse_boxes(text, rel, optional_headings))
                cache.put(rel, stamp, hit, path)
        tallies.append((rel, hit))
    cache.save(keep=set(paths))
    return tallies, problems


def run(spec: CheckSpec, ctx: CheckContext) -> Outcome:
    o = spec.options
    cache = box_cache(ctx, o["optional_headings"])  # loads while git still looks; the match waits for git
    paths = mission_paths(ctx, o["files"])
    if not paths:
        return Outcome(Status.SKIP, f"no mission files found ({', '.join(o['files'])})")
    tallies, problems = collect_boxes(ctx, paths, o["optional_headings"], cache,
                                      {f for f in o["files"] if is_literal(f)})
    done = sum(t[0] for _, t in tallies)
    optional_open = sum(t[1] for _, t in tallies)
    open_boxes = [(rel, line, text) for rel, t in tallies for line, text in t[2]]
    limit = o["max_items"]  # items past the limit are only counted: building them all costs on 10,000 boxes
    items = [Item(text=text, file=rel, line=line) for rel, line, text in open_boxes[:limit + 1]]
    items = cap_items(items, limit, "boxes")
    if len(open_boxes) > limit:
        items[-1] = more_item(len(open_boxes) - limit, "boxes")
    tally = f"{done}/{done + len(open_boxes)} boxes done"
    if optional_open:
        tally += f", {optional_open} optional open"
    if problems:
        # a file refused for what it is (outside the repository, binary...) stays refused while it is unchanged
        return Outcome(Status.ERROR, f"cannot read {problems[0]}" + (f" (+{len(problems) - 1} more)"
                       if len(problems) > 1 else ""), detail="\n".join(problems), items=items,
                       lasting=all(isinstance(p, Refusal) for p in problems))
    if open_boxes:
        rel, line, text = open_boxes[0]
        return Outcome(Status.FAIL, f"{len(open_boxes)} open: {rel}:{line} {text}"[:200],
                       detail=tally, items=items,
                       next="Do the first open box; tick it `- [x]` only once it is verifiably done.")
    return Outcome(Status.PASS, tally)


@hookimpl
def dun_check_types() -> list[CheckType]:
    return [CheckType("checkboxes", "Unchecked `- [ ]` boxes in markdown files.", FIELDS, run,
                      lambda options: glob_errors(options, "files"),
                      inputs=lambda spec, ctx: [f for f in spec.options["files"] if is_literal(f)],
                      stamped=lambda spec: True)]
