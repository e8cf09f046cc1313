"""`dun task ID [--prompt]`: one check, or one of its items, run now and shown alone; `--prompt` prints it as a
focused agent prompt.

ID is `CHECK` (the whole check), `CHECK#N` (its N-th item, as `dun task CHECK` numbers them) or `CHECK@FILE:LINE`
(the item at that place, the form of the status block's TASK_COMPLETED). Exit 0: the task is done (the check
passes, or the item is no longer reported); 1: it is still outstanding; 2: no such check, or a malformed ID.
"""

from __future__ import annotations

import dataclasses
import re
import sys
from dataclasses import dataclass

from dun.config.schema import did_you_mean
from dun.core.errors import UsageError
from dun.core.kinds import ExitCode
from dun.engine.model import ACTIONABLE_STATUSES, CheckResult, Item, folded_count
from dun.engine.sanitize import safe_result
from dun.engine.session import Session, open_session

_ID = re.compile(r"^(?P<check>[A-Za-z0-9][A-Za-z0-9_.-]*)(?:#(?P<index>\d+)|@(?P<file>[^:]+?)(?::(?P<line>\d+))?)?$")


@dataclass(frozen=True)
class TaskRef:
    check: str
    index: int | None = None
    file: str | None = None
    line: int | None = None

    @property
    def whole_check(self) -> bool:
        return self.index is None and self.file is None


def parse_task_id(text: str) -> TaskRef:
    match = _ID.match(text.strip())
    if match is None:
        raise UsageError(f"invalid task id '{text}': use CHECK, CHECK#N or CHECK@FILE:LINE")
    index = int(match["index"]) if match["index"] else None
    if index == 0:
        raise UsageError(f"invalid task id '{text}': items are numbered from 1")
    return TaskRef(match["check"], index, match["file"], int(match["line"]) if match["line"] else None)


def real_items(result: CheckResult) -> list[Item]:
    return [i for i in result.items if folded_count(i) is None]


def find_item(result: CheckResult, ref: TaskRef) -> Item | None:
    items = real_items(result)
    if ref.index is not None:
        return items[ref.index - 1] if ref.index <= len(items) else None
    return next((i for i in items if i.file == ref.file and (ref.line is None or i.line == ref.line)), None)


def item_id(check: str, n: int, item: Item) -> str:
    return f"{check}@{item.file}:{item.line}" if item.file and item.line else f"{check}#{n}"


def run_task(task_id: str, path: str | None, prompt: bool) -> int:
    ref = parse_task_id(task_id)
    session = open_session(path)
    if session.catalog().find(ref.check) is None:
        known = [c.id for c in session.catalog().checks]
        raise UsageError(f"no check '{ref.check}'{did_you_mean(ref.check, known)}; `dun list` shows them")
    result = safe_result(session.report(only=[ref.check]).results[0])
    item = None if ref.whole_check else find_item(result, ref)
    outstanding = result.status in ACTIONABLE_STATUSES and (ref.whole_check or item is not None)
    if not outstanding:
        done = f"task {task_id}: done ({result.id} {result.status.value}: {result.signal})"
        sys.stderr.write(done + "\n") if prompt else sys.stdout.write(done + "\n")
        return ExitCode.OK
    if prompt:
        sys.stdout.write(focused_prompt(session, result, item))
    else:
        sys.stdout.write(describe(task_id, result, item))
    return ExitCode.WORK_REMAINS


def describe(task_id: str, result: CheckResult, item: Item | None) -> str:
    level = result.level.value if result.level else "-"
    lines = [f"task:   {task_id}", f"check:  {result.id} ({result.plugin}, {result.type}) {result.status.value} "
                                    f"{level}", f"signal: {result.signal}"]
    if item is not None:
        first, *rest = item.text.split("\n")
        lines.append(f"item:   {(item.location() + ' ') if item.location() else ''}{first}")
        lines += [f"        {more}" for more in rest]
    else:
        for n, each in enumerate(real_items(result), 1):
            where = each.location()
            first, *rest = each.text.split("\n")
            lines.append(f"  {item_id(result.id, n, each)}  {where + ' ' if where else ''}{first}")
            lines += [f"      {more}" for more in rest]
        extra = sum(folded_count(i) or 0 for i in result.items)
        if extra:
            lines.append(f"  ... and {extra} more")
        if not result.items and result.detail:
            lines += ["detail:", *(f"  | {d}" for d in result.detail.splitlines())]
    if result.next:
        lines += [f"next:   {n}" for n in result.next.splitlines()]
    return "\n".join(lines) + "\n"


def focused_prompt(session: Session, result: CheckResult, item: Item | None) -> str:
    """The prompt `dun iterate` would give, narrowed to this one check or item."""
    from dun.prompt.build import Entry, assemble, render_entry, template
    from dun.prompt.sections import mission_section

    shown = result if item is None else dataclasses.replace(result, items=[item])
    work = render_entry(1, Entry(shown, len(shown.items), True))
    mode = session.settings.iterate.automation
    sections = {"mission": mission_section(session), "work": work,
                "instructions": template(session.store, f"instructions/{mode}.md"),
                "status_template": template(session.store, "status-block.md")}
    return assemble(session.store, sections, None)
