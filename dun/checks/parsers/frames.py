"""Stack frames in a failure's text: which of them are the project's own code.

A runner's report often places a failure at its own frame (`node_modules/tape/lib/test.js:489`); the line that
matters is the first (JavaScript, innermost first) or last (Python, outermost first) frame in the repository that
is not an installed package.
"""

from __future__ import annotations

import re

from dun.checks.parsers.base import ParseContext, repo_path

# `at f (/abs/x.test.js:5:17)`, `at file:///abs/x.mjs:5:17`, `TestContext.<anonymous> (x.js:6:12)`, `x_test.go:12:`
_FRAME = re.compile(r"(?P<file>(?:file://)?[\w./\\@+~-]*[\w-]\.[A-Za-z]\w*):(?P<line>\d+)(?::\d+)?")
_INSTALLED = ("node_modules/", "site-packages/", "dist-packages/", "/.cargo/registry/", "/rustc/", ".pnp.cjs")


def project_frames(text: str, ctx: ParseContext) -> list[tuple[str, int]]:
    """(repository path, line) of every frame inside the repository and not in an installed package, in order."""
    out: list[tuple[str, int]] = []
    for match in _FRAME.finditer(text):
        path = repo_path(match["file"], ctx)
        if path and not path.startswith(("/", "../")) and not any(m in "/" + path for m in _INSTALLED):
            out.append((path, int(match["line"])))
    return out


def first_project_frame(texts: list[str], ctx: ParseContext) -> tuple[str, int] | None:
    """The innermost project frame of JavaScript-style stacks (innermost first): the failing assertion, in a helper
    when the test called one."""
    frames = [f for text in texts if text for f in project_frames(text, ctx)]
    return frames[0] if frames else None


def located(texts: list[str], ctx: ParseContext, test_file: str | None) -> tuple[tuple[str, int] | None, str]:
    """The failing assertion's frame and, when that is outside the test's own file, an `at FILE:LINE` line naming
    the test's call into it."""
    frames = _rebased([f for text in texts if text for f in project_frames(text, ctx)], test_file, ctx)
    if not frames:
        return None, ""
    own = next((f for f in frames if f[0] == test_file), None)
    call = f"\n  at {own[0]}:{own[1]}" if own is not None and own != frames[0] else ""
    return frames[0], call


def _rebased(frames: list[tuple[str, int]], test_file: str | None, ctx: ParseContext) -> list[tuple[str, int]]:
    """Frames relative to a project below the root (vitest's `projects: ['packages/*']` prints `test/a.test.js` for
    `packages/a/test/a.test.js`): when the test's own file ends with such a frame's path, that directory is the base of
    every frame that is not a file from the root."""
    if not test_file:
        return frames
    missing = [f for f, _ in frames if not (ctx.root / f).is_file()]
    base = next((test_file[: -len(f)] for f in missing if test_file.endswith("/" + f)), None)
    if base is None:
        return frames
    return [(base + f if f in missing and (ctx.root / (base + f)).is_file() else f, n) for f, n in frames]


def message_lines(text: str) -> str:
    """A JavaScript error's text without its stack: the lines before the first `    at ` frame."""
    kept: list[str] = []
    for line in text.splitlines():
        if re.match(r"^\s+at\s|^\s*❯\s", line):  # node's `    at f (x.js:1:2)`, vitest's ` ❯ f x.ts:1:2`
            break
        kept.append(line.rstrip())
    return "\n".join(kept).strip()


def title_line(file: str | None, title: str, ctx: ParseContext) -> int | None:
    """The line of the test titled `title` in `file`: where it is written as a string literal, when that is once. For
    a failure with no stack (a thrown string, a timeout), the test's own definition."""
    if not file or not title.strip():
        return None
    from dun.core.textfiles import read_bytes

    try:
        text = read_bytes(ctx.root / file, 4 * 1024 * 1024, root=ctx.root).decode("utf-8", "replace")
    except (OSError, ValueError):
        return None
    quoted = [f"{q}{title}{q}" for q in ("'", '"', "`")]
    lines = [n for n, line in enumerate(text.splitlines(), 1) if any(q in line for q in quoted)]
    return lines[0] if len(lines) == 1 else None


_TEST_CALL = re.compile(r"""\b(?:\w+\.)?test(?:\.only|\.skip|\.todo)?\s*\(\s*(?P<q>['"`])(?P<name>.*?)(?P=q)""")


def enclosing_titles(file: str | None, line: int, ctx: ParseContext) -> list[str]:
    """The titles of the `test('NAME', ...)`/`t.test('NAME', ...)` calls around line `line` of `file`, outermost
    first, told by indentation: for tape, whose TAP names every test, nested or not, as a flat `# NAME` comment.
    Empty when the file cannot be read; the caller checks the innermost against the name the runner printed."""
    if not file:
        return []
    from dun.core.textfiles import read_bytes

    try:
        text = read_bytes(ctx.root / file, 4 * 1024 * 1024, root=ctx.root).decode("utf-8", "replace")
    except (OSError, ValueError):
        return []
    lines = text.splitlines()
    if not 0 < line <= len(lines):
        return []
    limit = len(lines[line - 1]) - len(lines[line - 1].lstrip())
    titles: list[str] = []
    for source in reversed(lines[: line - 1]):
        indent = len(source) - len(source.lstrip())
        if not source.strip() or indent >= limit:
            continue
        limit = indent
        call = _TEST_CALL.search(source)
        if call:
            titles.insert(0, call["name"])
        if indent == 0:
            break
    return titles
