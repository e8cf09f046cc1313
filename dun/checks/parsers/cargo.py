"""`cargo-test` and `cargo-messages`: Rust's test runs and compiler diagnostics.

`cargo-test` reads `cargo test --no-fail-fast --message-format=json`: the compiler's errors arrive as JSON lines
(one item each, at the primary span), every test binary's libtest report as plain text. One item per failed test:
its path (`tests::adds`), the file and line its panic names (`panicked at src/lib.rs:15:9:`), and the panic's
message with `left`/`right`. libtest's own JSON (`-- -Z unstable-options --format json`) needs a nightly compiler:
read when it is there, but the built-in check uses the plain report, which is stable.

`cargo-messages` reads the compiler's JSON lines alone (`cargo clippy --message-format=json`): one item per
warning or error with a primary span, the lint's name first; the same finding reported for two targets is one.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping

from dun.checks.parsers.base import LineParser, ParseContext, Parsed, bounded, plural, repo_path
from dun.engine.model import Item

_SECTION = re.compile(r"^---- (?P<name>.+?) stdout ----$")
# Rust 1.73+: `thread 'x' (123) panicked at src/lib.rs:15:9:` then the message; before: `... at 'msg', file:l:c`
_PANIC = re.compile(r"^thread '(?P<thread>[^']*)'(?: \(\d+\))? panicked at (?P<rest>.*)$")
_AT = re.compile(r"^(?P<file>[^\s:'][^:]*):(?P<line>\d+):\d+:?$")
_OLD_AT = re.compile(r"^'(?P<message>.*)', (?P<file>[^\s:][^:]*):(?P<line>\d+):\d+$", re.S)
_RESULT = re.compile(r"^test result: \w+\. (?P<passed>\d+) passed; (?P<failed>\d+) failed; (?P<ignored>\d+) ignored")
_STATUS = re.compile(r"^test (?P<name>\S.*) \.\.\. (?P<status>FAILED|ok|ignored)")
# what libtest adds to a name in its status line, not in the `---- NAME stdout ----` header
_KIND_SUFFIX = re.compile(r" - (?:should panic|compile fail|compile)$")
# `     Running unittests src/lib.rs (target/debug/deps/core-1a2b3c)`, `   Doc-tests core`: the binary that follows
_RUNNING = re.compile(r"^\s+(?:Running (?:unittests )?(?P<source>\S+) \((?:.*/)?(?P<binary>[^/()]+?)(?:-[0-9a-f]{8,})?"
                      r"(?:\.exe)?\)|Doc-tests (?P<doc>\S+))\s*$")
_NO_PANIC = re.compile(r"^note: test did not panic as expected(?: at (?P<file>[^\s:][^:]*):(?P<line>\d+):\d+)?")
_END_OF_MESSAGE = ("stack backtrace:", "note: run with `RUST_BACKTRACE", "note: Some details are omitted")
MAX_LINES = 200


def compiler_item(event: Mapping[str, object], ctx: ParseContext, levels: tuple[str, ...]) -> Item | None:
    message = event.get("message")
    if event.get("reason") != "compiler-message" or not isinstance(message, dict):
        return None
    level = str(message.get("level") or "")
    spans = [s for s in message.get("spans") or [] if isinstance(s, dict)]
    primary = next((s for s in spans if s.get("is_primary")), spans[0] if spans else None)
    if level not in levels or primary is None:
        return None  # `aborting due to 2 previous errors` and the like: no place, nothing to fix there
    code = message.get("code") if isinstance(message.get("code"), dict) else {}
    label = f"{code.get('code')}: " if code and code.get("code") else ""
    prefix = "" if level == "error" else f"[{level}] "
    text = f"{prefix}{label}{message.get('message') or ''}"
    if primary.get("label"):
        text += f" ({primary['label']})"
    line = primary.get("line_start")
    return Item(text=bounded(text), file=repo_path(str(primary.get("file_name") or ""), ctx),
                line=line if isinstance(line, int) and line > 0 else None)


def _json(line: str) -> dict[str, object] | None:
    if not line.startswith('{"reason"'):
        return None
    try:
        event = json.loads(line)
    except ValueError:
        return None
    return event if isinstance(event, dict) else None


class CargoTestParser(LineParser):
    def __init__(self, options: dict[str, object], ctx: ParseContext) -> None:
        super().__init__(options, ctx)
        self.compile: list[Item] = []
        # (binary, failed test) -> its captured output; one name can fail in two binaries (two crates' `tests::it`)
        self.sections: dict[tuple[str, str], list[str]] = {}
        self.current: tuple[str, str] | None = None
        self.failed: list[tuple[str, str]] = []
        self.binary = ""  # the test binary running: `core (src/lib.rs)`
        self.counts = {"passed": 0, "failed": 0, "ignored": 0}

    def feed(self, line: str) -> None:
        event = _json(line)
        if event is not None:
            item = compiler_item(event, self.ctx, ("error",))
            if item is not None and item not in self.compile:
                self.compile.append(item)
            return
        if line.startswith('{ "type": '):  # libtest's own JSON (`-- -Z unstable-options --format json`, nightly)
            self._libtest(line)
            return
        running = _RUNNING.match(line)
        if running:
            self.current = None
            self.binary = f"{running['binary']} ({running['source']})" if running["binary"] else \
                f"{running['doc']} (doctests)"
            return
        section = _SECTION.match(line)
        if section:
            self.current = (self.binary, section["name"])
            self.sections[self.current] = []
            return
        status = _STATUS.match(line)
        if status:
            self.current = None
            if status["status"] == "FAILED":
                self.failed.append((self.binary, _KIND_SUFFIX.sub("", status["name"].strip())))
            return
        result = _RESULT.match(line)
        if result:
            self.current = None
            for key in self.counts:
                self.counts[key] += int(result[key])
            return
        if line in ("failures:", "successes:"):
            self.current = None
        elif self.current is not None and len(self.sections[self.current]) < MAX_LINES:
            self.sections[self.current].append(line)

    def _libtest(self, line: str) -> None:
        try:
            event = json.loads(line)
        except ValueError:
            return
        if not isinstance(event, dict):
            return
        if event.get("type") == "test" and event.get("event") == "failed":
            test = (self.binary, _KIND_SUFFIX.sub("", str(event.get("name") or "test")))
            self.failed.append(test)
            self.sections[test] = str(event.get("stdout") or "").splitlines()[:MAX_LINES]
        elif event.get("type") == "suite" and event.get("event") in ("ok", "failed"):
            for key in self.counts:
                value = event.get(key)
                self.counts[key] += value if isinstance(value, int) else 0

    def result(self) -> Parsed:
        items = list(self.compile)
        failed = list(dict.fromkeys(self.failed))
        names = [name for _, name in failed]
        for binary, name in failed:  # a name failing in two binaries says which one
            shown = f"{name} (in {binary})" if names.count(name) > 1 and binary else name
            items.append(self._item(shown, name, self.sections.get((binary, name), [])))
        tally = [f"{self.counts['failed']} failed", f"{self.counts['passed']} passed",
                 f"{self.counts['ignored']} ignored"]
        summary = ", ".join(t for t in tally if not t.startswith("0 ")) or "no tests ran"
        if self.compile:
            summary += f"; {plural(len(self.compile), 'compile error')}"
        return Parsed(items, summary=summary)

    def _item(self, shown: str, name: str, lines: list[str]) -> Item:
        where: tuple[str, int] | None = None
        message: list[str] = []
        panicking = False
        quoted: list[str] | None = None  # before Rust 1.73 the message was quoted, the place after it
        for line in lines:
            if quoted is not None:
                quoted.append(line)
                old = _OLD_AT.match("\n".join(quoted))
                if old:
                    where, quoted = (old["file"], int(old["line"])), None
                    message.append(old["message"])
                continue
            panic = _PANIC.match(line)
            if panic and where is None:
                rest = panic["rest"].strip()
                if rest.startswith("'") and not _OLD_AT.match(rest):
                    quoted = [rest]
                    continue
                old = _OLD_AT.match(rest)
                at = _AT.match(rest)
                if old:
                    where = (old["file"], int(old["line"]))
                    message.append(old["message"])
                elif at:
                    where = (at["file"], int(at["line"]))
                panicking = True
                continue
            if panicking:
                if line.startswith(_END_OF_MESSAGE) or not line.strip():
                    panicking = False
                    continue
                message.append(line.rstrip())
            elif (no_panic := _NO_PANIC.match(line)) and not message:  # a should_panic test that did not
                message.append("test did not panic as expected")
                if no_panic["file"] and where is None:
                    where = (no_panic["file"], int(no_panic["line"]))  # the test function
            elif line.startswith("Error: ") and not message:
                message.append(line.strip())  # a test returning Err
        text = f"{shown}: " + ("\n".join(message) if message else "failed")
        if _DOCTEST.match(name):  # rustdoc compiles a doctest apart: its panic's place is not the source's
            return Item(text=bounded(text), file=_doctest_file(name), line=_doctest_line(name))
        file = repo_path(where[0], self.ctx) if where else None
        return Item(text=bounded(text), file=file, line=where[1] if where else None)


_DOCTEST = re.compile(r"^(?P<file>\S+\.rs) - .* \(line (?P<line>\d+)\)$")


def _doctest_file(name: str) -> str | None:
    match = _DOCTEST.match(name)
    return match["file"] if match else None


def _doctest_line(name: str) -> int | None:
    match = _DOCTEST.match(name)
    return int(match["line"]) if match else None


class CargoMessagesParser(LineParser):
    def __init__(self, options: dict[str, object], ctx: ParseContext) -> None:
        super().__init__(options, ctx)
        self.items: list[Item] = []
        self.seen: set[tuple[str, str | None, int | None]] = set()

    def feed(self, line: str) -> None:
        event = _json(line)
        if event is None:
            return
        item = compiler_item(event, self.ctx, ("error", "warning"))
        if item is not None and (key := (item.text, item.file, item.line)) not in self.seen:
            self.seen.add(key)
            self.items.append(item)

    def result(self) -> Parsed:
        errors = sum(1 for i in self.items if not i.text.startswith("["))
        warnings = len(self.items) - errors
        return Parsed(self.items, summary=f"{plural(errors, 'error')}, {plural(warnings, 'warning')}")
