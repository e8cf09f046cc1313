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
from dun.checks.parsers.cargobuild import START as BUILD_SCRIPT
from dun.checks.parsers.cargobuild import BuildScript
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
        self.build_scripts: dict[str, BuildScript] = {}  # crate -> its failed build script's report
        self.build_script: BuildScript | None = None

    def feed(self, line: str) -> None:
        if self.build_script is not None and self.build_script.feed(line):
            return
        self.build_script = None
        if (started := BUILD_SCRIPT.match(line)) and started["crate"] not in self.build_scripts:
            self.build_script = self.build_scripts[started["crate"]] = BuildScript(started["crate"])
            return
        event = _json(line)
        if event is not None:
            item = compiler_item(event, self.ctx, ("error",))
            if item is not None and item not in self.compile:
                self.compile.append(item)
            return
        if line.startswith(('{ "type": ', '{"type":')):  # libtest's JSON (nightly's `--format json`, nextest's)
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
            # nextest names a test `crate::binary$path`: the binary, then the test's own path
            binary, _, name = str(event.get("name") or "test").rpartition("$")
            test = (binary or self.binary, _KIND_SUFFIX.sub("", name))
            self.failed.append(test)
            self.sections[test] = str(event.get("stdout") or "").splitlines()[:MAX_LINES]
        elif event.get("type") == "suite" and event.get("event") in ("ok", "failed"):
            for key in self.counts:
                value = event.get(key)
                self.counts[key] += value if isinstance(value, int) else 0

    def result(self) -> Parsed:
        items = [*self.compile, *(b.item(self.ctx) for b in self.build_scripts.values())]
        failed = list(dict.fromkeys(self.failed))
        names = [name for _, name in failed]
        for binary, name in failed:  # a name failing in two binaries says which one
            shown = f"{name} (in {binary})" if names.count(name) > 1 and binary else name
            items.append(self._item(shown, name, self.sections.get((binary, name), []), binary))
        tally = [f"{self.counts['failed']} failed", f"{self.counts['passed']} passed",
                 f"{self.counts['ignored']} ignored"]
        summary = ", ".join(t for t in tally if not t.startswith("0 ")) or "no tests ran"
        if self.compile:
            summary += f"; {plural(len(self.compile), 'compile error')}"
        if self.build_scripts:
            summary += f"; {plural(len(self.build_scripts), 'build script')} failed"
        return Parsed(items, summary=summary)

    def _item(self, shown: str, name: str, lines: list[str], binary: str = "") -> Item:
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
            if line.startswith("note: panic did not contain expected string") or \
                    re.match(r"^\s*(?:panic message|expected substring): ", line):
                # a should_panic(expected = ...) test: what it expected and what it got (after the backtrace note,
                # which libtest prints after the first panic of the run only)
                message.append(line.rstrip())
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
        doctest = _DOCTEST.match(name)
        if doctest and not message:  # a doctest that did not compile, or a should_panic one that did not panic
            message = _doctest_failure(lines)
        text = f"{shown}: " + ("\n".join(message) if message else "failed")
        if doctest:  # rustdoc compiles a doctest apart: its panic's place is not the source's (a line of the
            # program rustdoc wraps it in), so the doctest's own fence line; a compile error's `-->` is the source's
            fence = _fence(doctest["file"], int(doctest["line"]), self.ctx)
            return Item(text=bounded(text), file=doctest["file"],
                        line=_doctest_error_line(doctest["file"], fence, lines, self.ctx) or fence)
        if where is None and message and message[0].startswith("Error: "):
            where = _test_fn(name, binary, self.ctx)  # a test returning Err: no panic, no place but the test's own
        file = repo_path(where[0], self.ctx) if where else None
        call = _test_call(name, (file, where[1]), binary, self.ctx) if file and where else None
        via = f"\n  at {call[0]}:{call[1]}" if call else ""  # the test's own line calling the helper that panicked
        return Item(text=bounded(text) + via, file=file, line=where[1] if where else None)


# `src/lib.rs - double (line 9)`; a crate's or module's own (`//!`) doctest has no item: `src/lib.rs - (line 3)`
_DOCTEST = re.compile(r"^(?P<file>\S+\.rs) - (?:.* )?\(line (?P<line>\d+)\)$")
_DOCTEST_NOISE = re.compile(r"^(Test executable failed|stderr:|stdout:|error: aborting|For more information|"
                            r"Couldn't compile the test|\s*\|\s*$)")


def _doctest_failure(lines: list[str]) -> list[str]:
    """What rustdoc says of a doctest that failed without a panic: the compiler's errors (`error[E0425]: ...` with
    its `-->` place), or `Test executable succeeded, but it's marked should_panic`."""
    kept = [line.rstrip() for line in lines if line.strip() and not _DOCTEST_NOISE.match(line)]
    errors = [line for line in kept if line.startswith(("error", "  -->", "warning: unused"))]
    return (errors or kept)[:20]


_ERROR_AT = re.compile(r"^\s*--> (?P<file>\S+?):(?P<line>\d+):\d+$")
_SNIPPET = re.compile(r"^\s*(?P<line>\d+) \|(?: (?P<text>.*))?$")
_DOC_PREFIX = re.compile(r"^\s*(?:///?!?|/\*\*!?|\*)? ?")  # `/// `, `//! `, ` * ` in a block comment


def _doctest_error_line(file: str, fence: int, lines: list[str], ctx: ParseContext) -> int | None:
    """The source line of the first compile error of a doctest that did not compile; None when it compiled or the
    error is elsewhere. rustc's `--> FILE:LINE` is off by one where rustdoc adds a line of its own to the program
    (`extern crate NAME;` when the doctest names the crate), so the line is the one of the doctest, from its fence
    down, holding the text rustc quotes (hidden `# ` lines too), the nearest to rustc's when several do."""
    error, at = False, None
    for line in lines:
        if at is not None:
            snippet = _SNIPPET.match(line)
            if snippet and int(snippet["line"]) == at:
                return _doc_line(file, fence, at, (snippet["text"] or "").strip(), ctx)
            if not line.strip() or (not line[0].isspace() and not line[0].isdigit()):
                return at  # no quoted line: rustc's own
            continue
        if line and not line[0].isspace():  # a diagnostic's first line: `error[E0308]: ...`, `warning: ...`
            error = line.startswith("error") and not line.startswith("error: aborting")
        elif error and (found := _ERROR_AT.match(line)):
            if found["file"] != file:
                return None
            at = int(found["line"])
    return at


def _fence(file: str, line: int, ctx: ParseContext) -> int:
    """The doctest's opening fence: rustdoc names a doctest in a block comment (`/** ... */`) by the line above it."""
    source = _source(file, ctx)
    if source is None or not 0 < line < len(source) or "```" in source[line - 1]:
        return line
    return line + 1 if _DOC_PREFIX.sub("", source[line], count=1).lstrip().startswith("```") else line


def _doc_line(file: str, fence: int, near: int, text: str, ctx: ParseContext) -> int:
    source = _source(file, ctx)
    if source is None or not text:
        return near
    found = []
    for number in range(fence + 1, len(source) + 1):
        code = _DOC_PREFIX.sub("", source[number - 1], count=1)
        if code.lstrip().startswith("```"):
            break  # the doctest's closing fence
        stripped = code.strip()
        if stripped == text or (stripped.startswith("#") and stripped[1:].strip() == text):
            found.append(number)
    return min(found, key=lambda n: abs(n - near)) if found else near


_FN = re.compile(r"^\s*(?:pub(?:\([^)]*\))?\s+)?(?:const\s+|async\s+|unsafe\s+)*fn\s+(?P<name>\w+)")


def _test_call(name: str, where: tuple[str, int], binary: str, ctx: ParseContext) -> tuple[str, int] | None:
    """When a test panicked inside a helper function (an `assert!` in `fn check(..)` that the test calls), the
    line of the test calling it: the test function found by its name in the panicking file, or in the test
    binary's own source (`tests/it.rs`, beside the helper's module); None when the test panicked in its own body
    or the call cannot be told from the source."""
    test = name.split(" - ")[0].rsplit("::", 1)[-1]
    lines = _source(where[0], ctx)
    if lines is None or not 0 < where[1] <= len(lines):
        return None
    helper = next((m["name"] for line in reversed(lines[: where[1]]) if (m := _FN.match(line))), None)
    if helper is None or helper == test:
        return None
    candidates = [where[0]]
    own = re.search(r"\((?P<source>[^()]+\.rs)\)$", binary)
    crate = _crate_dir(where[0], ctx)
    if own and crate is not None:
        candidates.append(f"{crate}{own['source']}")
    calls = re.compile(rf"\b{re.escape(helper)}\s*(?:::<[^>]*>)?\s*\(")
    for file in dict.fromkeys(candidates):
        text = _source(file, ctx)
        starts = [n for n, line in enumerate(text or [], 1) if (m := _FN.match(line)) and m["name"] == test]
        if text is None or len(starts) != 1:
            continue
        start = starts[0]
        indent = len(text[start - 1]) - len(text[start - 1].lstrip())
        for n in range(start + 1, len(text) + 1):
            line = text[n - 1]
            if line.strip() and len(line) - len(line.lstrip()) <= indent:
                break  # the test function's closing brace
            if calls.search(line):
                return file, n
    return None


def _test_fn(name: str, binary: str, ctx: ParseContext) -> tuple[str, int] | None:
    """The `fn` line of test `name` in its binary's source (`core (src/lib.rs)`: src/lib.rs of the root crate or of
    one workspace member, or a module file below it), when exactly one such function is found there."""
    own = re.search(r"\((?P<source>[^()]+\.rs)\)$", binary)
    if own is None:
        return None
    test = name.split(" - ")[0].rsplit("::", 1)[-1]
    source = own["source"]
    base = source.rsplit("/", 1)[0] + "/" if "/" in source else ""
    found: list[tuple[str, int]] = []
    for path in [*ctx.root.glob(source), *ctx.root.glob(f"*/{source}"), *ctx.root.glob(f"*/*/{source}")][:20]:
        files = [path, *sorted(path.parent.glob("**/*.rs"))[:200]] if base else [path]
        for candidate in dict.fromkeys(files):
            rel = candidate.relative_to(ctx.root).as_posix()
            found += [(rel, n) for n, line in enumerate(_source(rel, ctx) or [], 1)
                      if (m := _FN.match(line)) and m["name"] == test]
    return found[0] if len(found) == 1 else None


def _source(file: str, ctx: ParseContext) -> list[str] | None:
    from dun.core.textfiles import read_bytes

    try:
        return read_bytes(ctx.root / file, 4 * 1024 * 1024, root=ctx.root).decode("utf-8", "replace").splitlines()
    except (OSError, ValueError):
        return None


def _crate_dir(file: str, ctx: ParseContext) -> str | None:
    """The directory of the crate holding `file` ('' for the root, else ending in '/')."""
    parts = file.split("/")[:-1]
    while True:
        if (ctx.root.joinpath(*parts) / "Cargo.toml").is_file():
            return "/".join(parts) + "/" if parts else ""
        if not parts:
            return None
        parts.pop()


class CargoMessagesParser(LineParser):
    def __init__(self, options: dict[str, object], ctx: ParseContext) -> None:
        super().__init__(options, ctx)
        self.items: list[Item] = []
        self.seen: set[tuple[str, str | None, int | None]] = set()
        self.build_scripts: dict[str, BuildScript] = {}  # clippy builds them too: one that fails stops it
        self.build_script: BuildScript | None = None

    def feed(self, line: str) -> None:
        if self.build_script is not None and self.build_script.feed(line):
            return
        self.build_script = None
        if (started := BUILD_SCRIPT.match(line)) and started["crate"] not in self.build_scripts:
            self.build_script = self.build_scripts[started["crate"]] = BuildScript(started["crate"])
            return
        event = _json(line)
        if event is None:
            return
        item = compiler_item(event, self.ctx, ("error", "warning"))
        if item is not None and (key := (item.text, item.file, item.line)) not in self.seen:
            self.seen.add(key)
            self.items.append(item)

    def result(self) -> Parsed:
        items = [*(b.item(self.ctx) for b in self.build_scripts.values()), *self.items]
        errors = sum(1 for i in items if not i.text.startswith("["))
        warnings = len(items) - errors
        return Parsed(items, summary=f"{plural(errors, 'error')}, {plural(warnings, 'warning')}")
