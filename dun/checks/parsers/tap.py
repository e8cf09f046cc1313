"""`tap`: the Test Anything Protocol, versions 13 and 14, as node's test runner (`--test-reporter=tap`), tape and
others print it. One item per `not ok` that is not a TODO or SKIP: its full name (enclosing subtests, or tape's
`# test name` comment, joined with ` > `), the failing assertion's file and line from the YAML diagnostics (`at`,
`stack`, else `location`: the first frame in the project's code), and the message with `expected`/`actual`.

A parent whose subtests failed is not an item (its subtests are), unless a hook of its own failed (node's
`hookFailed`): then it is the item, at the hook's frame, and the subtests the failure cancelled are not. A test that
left a rejection or exception behind after it ended (node's `# Error: Test "NAME" at FILE:LINE generated
asynchronous activity after the test ended`) is an item at the test: node fails the run for it. A run that stops
before its plan (a test threw outside any assertion, as tape does) is an item at the thrown error's frame.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from dun.checks.parsers.base import LineParser, ParseContext, Parsed, bounded, plural, repo_path
from dun.checks.parsers.frames import enclosing_titles, first_project_frame, located
from dun.checks.parsers.tapyaml import load
from dun.engine.model import Item

_TEST = re.compile(r"^(?P<indent>\s*)(?P<ok>not ok|ok)\b\s*(?P<number>\d+)?\s*(?:-\s*)?(?P<desc>.*)$")
_DIRECTIVE = re.compile(r"\s#\s*(TODO|SKIP)\b", re.I)
_SUBTEST = re.compile(r"^(?P<indent>\s*)# Subtest: (?P<name>.*)$")
_COMMENT = re.compile(r"^# (?P<text>.*)$")
_TALLY = re.compile(r"^# (?P<key>tests|pass|fail|skip|todo|cancelled|suites|duration_ms|ok)\b\s*(?P<value>\d*)")
_PLAN = re.compile(r"^\s*1\.\.(?P<count>\d+)")
_AFTER_END = re.compile(r'^\s*# Error: Test "(?P<name>.*)" at (?P<file>\S+?):(?P<line>\d+):\d+ generated asynchronous '
                        r"activity after the test ended\. (?P<text>.*)$")
MAX_BLOCK_LINES = 400


class TapParser(LineParser):
    def __init__(self, options: dict[str, object], ctx: ParseContext) -> None:
        super().__init__(options, ctx)
        self.open: list[_Open] = []  # the subtests being read, outermost first
        self.group = ""  # tape: the `# test name` comment the assertions follow
        self.pending: tuple[int, str, list[str]] | None = None  # a failure waiting for its YAML block
        self.parent: _Open | None = None  # the pending failure is this parent's, whose subtests failed
        self.cancelled: set[int] = set()  # items of subtests cancelled by their parent (`cancelledByParent`)
        self.block: list[str] | None = None
        self.block_indent = 0  # the `---` line's: a `...` inside a block scalar (node's diff) is deeper
        self.items: list[Item] = []
        self.counts = {"fail": 0, "pass": 0, "skip": 0}
        self.tally: dict[str, int] = {}
        self.plan: int | None = None
        self.top_level = 0  # top-level tests seen (against the plan)
        self.after: list[str] = []  # lines that are not TAP after the last test: a crash
        self.subtests = False  # TAP 14 subtests (node): comments are diagnostics, not tape's test names
        self.comments: list[str] = []  # the comments since the last test line: what a file that did not load printed

    def feed(self, line: str) -> None:
        if self.block is not None:
            if line.strip() == "..." and len(line) - len(line.lstrip()) <= self.block_indent:
                self._close_failure()
            elif len(self.block) < MAX_BLOCK_LINES:
                self.block.append(line)
            return
        if self.pending is not None and line.strip() == "---":
            self.block = []
            self.block_indent = len(line) - len(line.lstrip())
            return
        if self.pending is not None:
            self._close_failure()
        self._line(line)

    def _line(self, line: str) -> None:
        subtest = _SUBTEST.match(line)
        if subtest:
            indent = len(subtest["indent"])
            self.open = [o for o in self.open if o.indent < indent] + \
                [_Open(indent, subtest["name"].strip(), start=len(self.items))]
            self.subtests = True
            return
        test = _TEST.match(line)
        if test:
            self.after = []
            self._test(len(test["indent"]), test["ok"] == "ok", test["desc"].strip())
            if self.pending is None:
                self.comments = []
            return
        after_end = _AFTER_END.match(line)
        if after_end:
            self.counts["fail"] += 1
            self.items.append(Item(text=bounded(f"{after_end['name']}: asynchronous activity after the test ended: "
                                                f"{after_end['text']}"),
                                   file=repo_path(after_end["file"], self.ctx), line=int(after_end["line"])))
            return
        tally = _TALLY.match(line)
        if tally and tally["value"]:
            self.tally[tally["key"]] = int(tally["value"])
            return
        comment = _COMMENT.match(line)
        if comment and not line.startswith("# Subtest"):
            self.group = comment["text"].strip()
            if len(self.comments) < MAX_BLOCK_LINES:
                self.comments.append(comment["text"])
            return
        plan = _PLAN.match(line)
        if plan and not line.startswith(" "):
            self.plan = int(plan["count"])
        elif line.strip() and not line.startswith("TAP version") and len(self.after) < MAX_BLOCK_LINES:
            self.after.append(line)

    def _test(self, indent: int, ok: bool, desc: str) -> None:
        if indent == 0:
            self.top_level += 1
        skipped = bool(_DIRECTIVE.search(desc))
        desc = _DIRECTIVE.split(desc)[0].strip()
        own = next((o for o in self.open if o.indent == indent and o.name == desc), None)
        parents = [o for o in self.open if o.indent < indent]
        self.open = [o for o in self.open if o.indent < indent]
        if ok or skipped:
            self.counts["skip" if skipped else "pass"] += 1
            return
        tape = not self.subtests and self.group and self.group != desc
        names = [p.name for p in parents] or ([self.group] if tape else [])
        shown = repo_path(desc, self.ctx) if desc.startswith("/") else desc  # node names a file that failed so
        name = " > ".join([*names, shown or desc]) or "test"
        if own is not None and own.failed:
            # its failed subtests are the items, unless its own hook failed: its YAML block tells (_close_failure)
            self.pending, self.parent = (indent, name, list(self.comments)), own
            return
        for parent in parents:
            parent.failed = True
        self.counts["fail"] += 1
        self.pending = (indent, name, list(self.comments))

    def _close_failure(self) -> None:
        assert self.pending is not None
        _, name, comments = self.pending
        block, self.block, self.pending = self.block or [], None, None
        parent, self.parent = self.parent, None
        self.comments = []
        diag = _yaml(block)
        if parent is not None:
            if diag.get("failureType") != "hookFailed":
                return  # `subtestsFailed`: its subtests are the items
            # a `before` hook failed: the subtests it cancelled did not run; the hook's failure is the one item
            dropped = [i for i in range(parent.start, len(self.items)) if i in self.cancelled]
            names = [self.items[i].text.split(": ", 1)[0].rsplit(" > ", 1)[-1] for i in dropped]
            self.items = [item for i, item in enumerate(self.items) if i not in self.cancelled or i < parent.start]
            self.cancelled = {i for i in self.cancelled if i < parent.start}
            self.counts["fail"] += 1 - len(dropped)
            item = self._item(name, diag, comments)
            if names:
                item = Item(text=f"{item.text}\n({plural(len(names), 'test')} not run: {', '.join(names)})",
                            file=item.file, line=item.line)
            self.items.append(item)
            return
        if diag.get("failureType") == "cancelledByParent":
            self.cancelled.add(len(self.items))
        self.items.append(self._item(name, diag, comments))

    def _item(self, name: str, diag: Mapping[str, object], comments: list[str]) -> Item:
        message = str(diag.get("error") or diag.get("message") or "").strip()
        error = next((c.strip() for c in comments if re.match(r"^\s*\w*(Error|Exception)\b.*:", c)), None)
        if error is not None and message in ("", "test failed"):  # a file that did not load: what it printed
            frame = first_project_frame(comments, self.ctx)
            return Item(text=bounded(f"{name}: {error}"), file=frame[0] if frame else None,
                        line=frame[1] if frame else None)
        if diag.get("operator") == "error" and not message and " > " in name:
            # tape: an error thrown in the test (or given to t.error) is the assertion's name; it is the message
            name, _, message = name.rpartition(" > ")
            diag = {k: v for k, v in diag.items() if k != "operator"}
        for key in ("expected", "actual"):  # a structure's diff is in the message already when there is one
            if key in diag and _plain(diag[key]) not in message and (not message or not isinstance(diag[key],
                                                                                                 dict | list)):
                message += f"\n{key}: {_plain(diag[key])}"
        if diag.get("operator") and str(diag["operator"]) not in message:
            message = f"{message}\noperator: {diag['operator']}"
        details = diag.get("details") or diag.get("values")
        if isinstance(details, dict):
            message += "".join(f"\n{label} {_plain(value)}" for label, value in details.items())
        declared = first_project_frame([str(diag.get("location") or "")], self.ctx)  # node: where the test is
        frame, call = located([str(diag.get("at") or ""), str(diag.get("stack") or "")], self.ctx,
                              declared[0] if declared else None)
        if frame is None:
            frame = declared
        if not self.subtests and self.group and frame is not None and (name == self.group or
                                                                       name.startswith(f"{self.group} > ")):
            # tape prints nested tests' names flat: their parents from the source, when its innermost test is this
            parents = enclosing_titles(frame[0], frame[1], self.ctx)
            if parents and parents[-1] == self.group:
                name = " > ".join([*parents[:-1], name])
        text = f"{name}: {message.strip()}" if message.strip() else name
        return Item(text=bounded(text) + call, file=frame[0] if frame else None, line=frame[1] if frame else None)

    def result(self) -> Parsed:
        if self.pending is not None:
            self._close_failure()
        if self.after and (self.plan is None or self.top_level < self.plan):
            crash = "\n".join(self.after)
            frame = first_project_frame([crash], self.ctx)
            error = next((line.strip() for line in self.after if re.match(r"^\w*(Error|Exception)\b", line)),
                         self.after[0].strip())
            name = f"{self.group}: " if self.group else ""
            self.items.append(Item(text=bounded(f"{name}stopped: {error}"), file=frame[0] if frame else None,
                                   line=frame[1] if frame else None))
            self.counts["fail"] += 1
        # node's own tally, said as node says it: a test stopped by its timeout, or not run because a hook failed,
        # is `cancelled`, apart from `fail` (each is an item all the same)
        fail = self.tally["fail"] if "fail" in self.tally else self.counts["fail"]
        cancelled = self.tally.get("cancelled", 0) if "fail" in self.tally else 0
        passed = self.tally.get("pass", self.counts["pass"])
        skipped = self.tally.get("skip", self.counts["skip"]) + self.tally.get("todo", 0)
        tally = [f"{fail} failed", f"{cancelled} cancelled", f"{passed} passed", f"{skipped} skipped"]
        return Parsed(self.items, summary=", ".join(t for t in tally if not t.startswith("0 ")) or "no tests ran")


@dataclass
class _Open:
    """A subtest being read: its indent and name, whether a subtest inside it failed, and the index of the first item
    that may be one of its subtests'."""

    indent: int
    name: str
    failed: bool = False
    start: int = 0


def _yaml(lines: list[str]) -> dict[str, object]:
    """The YAML diagnostics of one failure; a block YAML cannot read is kept whole as its message."""
    if not lines:
        return {}
    indent = min((len(line) - len(line.lstrip()) for line in lines if line.strip()), default=0)
    text = "\n".join(line[indent:] for line in lines)
    plain = load(text)  # what node and tape write, read without ruamel's import and parse (50-90 ms)
    if plain is not None:
        return plain
    from ruamel.yaml import YAML
    from ruamel.yaml.error import YAMLError

    try:
        data = YAML(typ="safe", pure=True).load(text)
    except (YAMLError, ValueError):
        return {"message": text}
    return data if isinstance(data, dict) else {"message": text}


def _plain(value: object) -> str:
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, dict | list):
        import json

        return json.dumps(value, default=str)
    return str(value)

