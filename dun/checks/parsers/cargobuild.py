"""A crate's build script that failed, as cargo prints it (not as JSON, even with `--message-format=json`):

    error: failed to run custom build command for `gen v0.1.0 (/repo/gen)`
    Caused by:
      process didn't exit successfully: `/repo/target/debug/build/gen-1a2b/build-script-build` (exit status: 101)
      --- stderr
      thread 'main' (4242) panicked at gen/build.rs:2:56:
      schema.txt is missing: Os { code: 2, kind: NotFound, message: "No such file or directory" }

cargo then builds and runs no test of the workspace; the built-in checks run them again without that crate. One item
per crate, at its build script's panic (or the stderr it printed), so the build script is fixed, not guessed at."""

from __future__ import annotations

import re

from dun.checks.parsers.base import ParseContext, bounded, repo_path
from dun.engine.model import Item

START = re.compile(r"^error: failed to run custom build command for `(?P<crate>[^ `]+)")
_PANIC = re.compile(r"^\s*thread '[^']*'(?: \(\d+\))? panicked at (?P<file>[^\s:][^:]*):(?P<line>\d+):\d+:?$")
_END = re.compile(r"^(?:warning: build failed|error(?:\[|:)|\{)|^\S.*\b(?:Compiling|Finished|Running)\b")
_NOISE = re.compile(r"^\s*(?:Caused by:|--- std(?:out|err)|process didn't exit successfully|note: run with "
                    r"`RUST_BACKTRACE|note: Some details are omitted|stack backtrace:|\d+: |at /)")
MAX_LINES = 60


class BuildScript:
    """The lines of one failed build script's report, fed after its `error: failed to run custom build command`."""

    def __init__(self, crate: str) -> None:
        self.crate = crate
        self.lines: list[str] = []
        self.open = True

    def feed(self, line: str) -> bool:
        """Whether the line was the report's; False at its end (the caller reads that line itself)."""
        if not self.open or _END.match(line):
            self.open = False
            return False
        if len(self.lines) < MAX_LINES:
            self.lines.append(line)
        return True

    def item(self, ctx: ParseContext) -> Item:
        where: tuple[str, int] | None = None
        message: list[str] = []
        for line in self.lines:
            panic = _PANIC.match(line)
            if panic and where is None:
                where = (panic["file"], int(panic["line"]))
                message = []
                continue
            if line.strip() and not _NOISE.match(line):
                message.append(line.strip())
        text = f"the build script of {self.crate} failed: " + ("\n".join(message[:8]) or "no output")
        if where is None:
            return Item(text=bounded(text))
        return Item(text=bounded(text), file=repo_path(where[0], ctx), line=where[1])
