"""`go-test-json`: the event stream of `go test -json` (also gotestsum's `--jsonfile`), plus the compiler's
`file:line:col: message` lines that `go test` prints outside the stream when a package does not build.

Go prints test messages relative to the package directory (`calc_test.go:12:`); items carry the path from the
repository root (`internal/calc/calc_test.go`), found from the package's import path and the module's go.mod.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from dun.checks.parsers.base import LineParser, ParseContext, Parsed, bounded, plural, repo_path
from dun.core.textfiles import read_bytes
from dun.engine.model import Item
from dun.engine.sanitize import strip_ansi

_COMPILE = re.compile(r"^(?P<file>[^\s:][^:]*\.go):(?P<line>\d+)(?::(?P<col>\d+))?: (?P<text>.+)$")
_MESSAGE = re.compile(r"^(?P<indent>\s+)(?P<file>[\w.+-]+\.go):(?P<line>\d+): (?P<text>.*)$")
_PANIC_FRAME = re.compile(r"^\s+(?P<file>/\S+\.go):(?P<line>\d+)")
_NOISE = re.compile(r"^(=== (RUN|PAUSE|CONT|NAME)|--- (FAIL|PASS|SKIP)|FAIL|PASS|ok\s|coverage:|\?\s)")


class GoTestParser(LineParser):
    def __init__(self, options: dict[str, object], ctx: ParseContext) -> None:
        super().__init__(options, ctx)
        self.output: dict[tuple[str, str], list[str]] = {}  # (package, test) -> its output lines
        self.failed: list[tuple[str, str]] = []  # failed tests and packages ("" test), in order
        self.tests = {"pass": 0, "fail": 0, "skip": 0}
        self.compile: list[tuple[str, int, str]] = []  # (file relative to cwd, line, message)
        self.build_failed: set[str] = set()

    def feed(self, line: str) -> None:
        line = strip_ansi(line)
        if not line.startswith("{"):
            self._plain(line)
            return
        try:
            event = json.loads(line)
        except ValueError:
            self._plain(line)
            return
        if not isinstance(event, dict):
            return
        action, package, test = event.get("Action"), str(event.get("Package") or ""), str(event.get("Test") or "")
        if action == "build-output":  # Go 1.24 puts compiler output into the stream
            self._plain(str(event.get("Output") or "").rstrip("\n"))
        elif action == "output":
            text = str(event.get("Output") or "").rstrip("\n")
            if text.startswith("FAIL") and "[build failed]" in text:
                self.build_failed.add(package)
            self.output.setdefault((package, test), []).append(text)
        elif action in ("pass", "fail", "skip") and test:
            self.tests[action] += 1
            if action == "fail":
                self.failed.append((package, test))
        elif action == "fail":
            self.failed.append((package, ""))

    def _plain(self, line: str) -> None:
        if line.startswith("# "):  # the compiler's header before a package's errors: `# example.com/m/pkg [...]`
            self.build_failed.add(line[2:].split(" ", 1)[0])
            return
        match = _COMPILE.match(line.strip())
        if match and len(self.compile) < 10_000:
            self.compile.append((match["file"], int(match["line"]), match["text"]))

    def result(self) -> Parsed:
        ctx = self.ctx
        modules = _Modules(ctx)
        items = [Item(text=bounded(f"build error: {text}"), file=repo_path(f, ctx), line=n)
                 for f, n, text in self.compile]
        failed_tests = {(p, t) for p, t in self.failed if t}
        for package, test in self.failed:
            if test and any(t.startswith(test + "/") for p, t in failed_tests if p == package):
                continue  # the parent of a failed subtest: the subtest is the item
            if not test and (any(p == package for p, _ in failed_tests) or (package in self.build_failed
                                                                            and self.compile)):
                continue  # its failing tests, or its compile errors, are the items
            items.append(self._item(package, test, modules, ctx))
        parts = [f"{self.tests['fail']} failed", f"{self.tests['pass']} passed", f"{self.tests['skip']} skipped"]
        summary = ", ".join(p for p in parts if not p.startswith("0 ")) or "no tests ran"
        if self.build_failed:
            summary += f"; {plural(len(self.build_failed), 'package')} failed to build"
        return Parsed(items, summary=summary)

    def _item(self, package: str, test: str, modules: _Modules, ctx: ParseContext) -> Item:
        lines = self.output.get((package, test), [])
        directory = modules.directory(package)
        messages: list[str] = []
        where: tuple[str, int] | None = None
        for text in lines:
            match = _MESSAGE.match(text)
            if match:
                if where is None:
                    path = repo_path(f"{directory}/{match['file']}" if directory else match["file"], ctx)
                    where = (path or match["file"], int(match["line"]))
                messages.append(match["text"])
            elif messages and text.startswith(" ") and text.strip() and not _NOISE.match(text.strip()):
                messages.append(text.strip())  # a continuation line of the message above
        if where is None and test.startswith("Example"):  # go prints got/want, no place: the example's `// Output:`
            found = _example(directory, test.split("/", 1)[0], ctx)
            if found is not None:
                body = [t.strip() for t in lines if t.strip() and not _NOISE.match(t.strip())]
                name = f"{test} ({package})"
                return Item(text=bounded(f"{name}: " + ("\n".join(body) or "failed")), file=found[0], line=found[1])
        call = ""
        race = _race(lines, ctx)
        if race is not None:  # `testing.go:1319: race detected`: the racing accesses' places in the project's code
            where, body, own = race
            messages = [m for m in messages if "race detected" in m][:1] + body
            call = f"\n  at {own[0]}:{own[1]}" if own is not None and own != where else ""
        if where is None:  # a panic: its message, and the first frame inside the repository
            frames = [(path, int(frame["line"])) for text in lines if (frame := _PANIC_FRAME.match(text))
                      and (path := repo_path(frame["file"], ctx)) and not path.startswith("/")]
            where = frames[0] if frames else None
            own = next((f for f in frames if f[0].endswith("_test.go")), None)
            if where is not None and own is not None and not where[0].endswith("_test.go"):
                call = f"\n  at {own[0]}:{own[1]}"  # the test's (or TestMain's) call into the code that panicked
            panic = [t.strip() for t in lines if t.strip().startswith("panic:")]
            messages = panic[:2] or [t.strip() for t in lines if t.strip() and not _NOISE.match(t.strip())][:5]
        name = f"{test} ({package})" if test else f"package {package}"
        text = f"{name}: " + ("\n".join(messages) if messages else "failed")
        if where is None and not test:  # no test failed, the package did: its TestMain exited before or after them
            where = _example(directory, "TestMain", ctx)
        if where is None:
            return Item(text=bounded(text), file=repo_path(directory, ctx) if directory else None)
        return Item(text=bounded(text) + call, file=where[0], line=where[1])


_ACCESS = re.compile(r"^\s*(?P<what>(?:Previous )?(?:[Rr]ead|[Ww]rite)) at 0x[0-9a-f]+ by (?P<who>.+?):?$")


def _race(lines: list[str], ctx: ParseContext) -> tuple[tuple[str, int], list[str], tuple[str, int] | None] | None:
    """The race detector's report in a test's output (`WARNING: DATA RACE`): the first racing access's place in the
    repository, a line per access (`Read at counter.go:13 by goroutine 9`), and the test's own frame that led there;
    None when there is no report or it names no place in the repository."""
    if not any(line.strip() == "WARNING: DATA RACE" for line in lines):
        return None
    body: list[str] = []
    first: tuple[str, int] | None = None
    own: tuple[str, int] | None = None
    access: str | None = None
    for text in lines:
        if text.strip() == "WARNING: DATA RACE" and body:
            break  # one race is enough to say where
        found = _ACCESS.match(text)
        if found:
            access = f"{found['what']} by {found['who']}"
            continue
        frame = _PANIC_FRAME.match(text)
        path = repo_path(frame["file"], ctx) if frame else None
        if frame is None or path is None or path.startswith("/"):
            continue
        if access is not None:
            body.append(f"{access} at {path}:{frame['line']}")
            first = first or (path, int(frame["line"]))
            access = None
        if own is None and path.endswith("_test.go"):
            own = (path, int(frame["line"]))
    return (first, body, own) if first is not None else None


def _example(directory: str, name: str, ctx: ParseContext) -> tuple[str, int] | None:
    """Where an example's expected output is declared: its `// Output:` line, else its `func` line (TestMain's)."""
    base = ctx.cwd / directory if directory else ctx.cwd
    declaration = re.compile(rf"^func {re.escape(name)}\(")
    for path in sorted(base.glob("*_test.go"))[:200]:
        try:
            lines = read_bytes(path).decode("utf-8", "replace").splitlines()
        except OSError:
            continue
        start = next((i for i, line in enumerate(lines) if declaration.match(line)), None)
        if start is None:
            continue
        end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("}")), len(lines))
        output = next((i for i in range(start, end) if re.match(r"^\s*// (Unordered output|Output):", lines[i])),
                      start)
        shown = repo_path(str(path), ctx)
        return (shown, output + 1) if shown else None
    return None


class _Modules:
    """Import path -> directory relative to the command's directory, from the go.mod there or above it, else from
    the modules of the go.work there."""

    def __init__(self, ctx: ParseContext) -> None:
        from dun.checks.gorunner import go_work_modules

        self.modules: list[tuple[str, str]] = []  # (module path, its directory from the command's), longest first
        here: Path = ctx.cwd
        for candidate in (here, *here.parents):
            mod = candidate / "go.mod"
            if mod.is_file():
                self.modules = [(_module_path(mod), _relative(candidate, ctx.cwd))]
                break
            if candidate == ctx.root:
                break
        if not self.modules:  # a go.work of modules below the command's directory
            self.modules = sorted(go_work_modules(ctx.cwd), key=lambda m: -len(m[0]))

    def directory(self, package: str) -> str:
        for module, base in self.modules:
            if module and (package == module or package.startswith(module + "/")):
                sub = package[len(module):].lstrip("/")
                return "/".join(p for p in (base, sub) if p) or "."
        return ""


def _module_path(mod: Path) -> str:
    try:
        for line in read_bytes(mod).decode("utf-8", "replace").splitlines():
            words = line.split("//", 1)[0].split()
            if len(words) == 2 and words[0] == "module":
                return words[1].strip('"`')
    except OSError:
        pass
    return ""


def _relative(directory: Path, cwd: Path) -> str:
    """`directory` (cwd or one of its parents) as a path from cwd: '' or '..', '../..'."""
    depth = len(cwd.parts) - len(directory.parts)
    return "/".join([".."] * depth)
