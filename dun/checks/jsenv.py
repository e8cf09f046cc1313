"""The project's own JavaScript tools: what `{js:NAME}`, `{js-args:PREFIX}` and `{pm}` in a command check stand for.

A project's tests must run with the runner and packages its lockfile installed, not whatever `npx` would fetch:
`{js:NAME}` is `node_modules/.bin/NAME` in the command's directory or the root (run directly, without the package
manager's start-up), else `yarn NAME` under Plug'n'Play; a missing one is a set-up error naming the lockfile's
install command. `{js-args:PREFIX}` is what the project's `test` script passes after PREFIX, so dun runs the same
files with its own reporter. `{pm}` is the package manager.
"""

from __future__ import annotations

import functools
import os
import re
import shlex
import urllib.parse
from pathlib import Path

from dun.checks.jsproject import (
    SEGMENT_END,
    WORKSPACE_RUNNERS,
    delegates,
    is_program,
    js_tools,
    npm_scripts,
    own_runners,
    package_json,
    package_manager,
    test_script,
    workspace_dirs,
)
from dun.checks.looked import is_file, seen
from dun.store.layout import CACHE

# flags that choose a reporter or where it writes: dun sets its own, the project's would fight them
_REPORTER_FLAGS = {"--reporter", "-R", "--reporters", "--reporter-option", "--reporter-options", "-O",
                   "--test-reporter", "--test-reporter-destination", "--json", "--outputFile", "--tap", "--watch",
                   "-w", "--watchAll", "--testResultsProcessor"}
_SWITCHES = {"--json", "--tap", "--watch", "-w", "--watchAll"}  # reporter and watch flags that take no value


def script_args(directory: Path, prefix: str) -> str:
    """The arguments the project's `test` script passes after `prefix` (`node --test`, `mocha`, `tape`), as written
    there (quotes and globs kept: npm runs scripts through a shell too), with the flags that pick a reporter or
    watch left out; '' when the script does not run it."""
    test = test_script(npm_scripts(package_json(str(directory))))
    want = prefix.split()
    for segment in SEGMENT_END.split(test):
        words = _words(segment)
        if words is None:
            continue
        words = [w for w in words if not re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", w[1])]  # VAR=value before it
        plain = [w[1] for w in words]
        for start in range(len(words)):  # `mocha`, `./node_modules/.bin/mocha`, `npx mocha`, `node .../jest.js`
            if not is_program(plain[start], want[0]):
                continue
            # the prefix's other words in order; options between them are the program's own and are kept
            # (`node --import tsx --test`: node loads tsx for the test files)
            kept, at = [], start + 1
            for word in want[1:]:
                found = plain.index(word, at) if word in plain[at:] else None
                if found is None or any(not w.startswith("-") and not (i > at and plain[i - 1].startswith("-"))
                                        for i, w in enumerate(plain[at:found], at)):
                    break
                kept += words[at:found]
                at = found + 1
            else:
                return " ".join(raw for raw, _ in _without_reporters(kept + words[at:]))
    return ""




def node_options(directory: Path, program: str) -> str:
    """The node options the project's `test` script runs `program` with, as NODE_OPTIONS gives them: those before its
    script in `node --experimental-vm-modules node_modules/jest/bin/jest.js`, and a `NODE_OPTIONS=...` set for it
    (`cross-env` too); '' for none. jest needs `--experimental-vm-modules` to load an ESM project's tests at all."""
    test = test_script(npm_scripts(package_json(str(directory))))
    for segment in SEGMENT_END.split(test):
        try:
            plain = shlex.split(segment)
        except ValueError:
            continue
        at = next((i for i, word in enumerate(plain) if is_program(word, program)), None)
        if at is None:
            continue
        given = [w.split("=", 1)[1] for w in plain[:at] if w.startswith("NODE_OPTIONS=")]
        node = next((i for i, word in enumerate(plain[:at]) if os.path.basename(word) == "node"), None)
        return " ".join([*given, *(plain[node + 1: at] if node is not None else [])]).strip()
    return ""


def _words(segment: str) -> list[tuple[str, str]] | None:
    """(as written, as the shell reads it) for each word; None for a line the shell could not read."""
    lexer = shlex.shlex(segment, posix=False)
    lexer.whitespace_split = True
    try:
        raw = list(lexer)
        return [(word, shlex.split(word)[0] if shlex.split(word) else "") for word in raw]
    except ValueError:
        return None


def _without_reporters(args: list[tuple[str, str]]) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    skip = False
    for i, (raw, word) in enumerate(args):
        if skip:
            skip = False
            continue
        name = word.split("=", 1)[0]
        if name in _REPORTER_FLAGS:
            takes_value = "=" not in word and name not in _SWITCHES
            skip = takes_value and i + 1 < len(args)
            continue
        if not out and word in ("run", "watch", "dev"):  # `vitest run`: dun says run itself
            continue
        out.append((raw, word))
    return out


_JS_PLACEHOLDER = re.compile(r"\{(js|js-args):([^{}]+)\}|\{pm\}")
_INSTALL = {"npm": "npm ci", "pnpm": "pnpm install --frozen-lockfile", "yarn": "yarn install --frozen-lockfile",
            "bun": "bun install --frozen-lockfile"}


def has_js_placeholder(command: str) -> bool:
    return "{js" in command or "{pm}" in command


def expand_js(command: str, root: Path, cwd: Path, build: bool = True) -> tuple[str, str | None]:
    """`{js:NAME}`: the project's own NAME from node_modules/.bin (or `yarn NAME` under Plug'n'Play);
    `{js-args:PREFIX}`: what its test script passes after PREFIX; `{pm}`: its package manager.
    Returns the command and, when a program is not installed, why (the command is then not run).

    At a workspace root whose tests are its packages' own (`npm test --workspaces`, `pnpm -r test`), a runner's
    command runs in each package that uses that runner, as that package's script says, each writing its report
    beside the root's as `NAME@PACKAGE-DIR.EXT` (the parser reads each from its package: parsers/run.py)."""
    runner = _runner(command)
    if runner in WORKSPACE_RUNNERS and delegates(cwd):
        packages = _packages(cwd, runner)
        if packages:
            return _in_each(command, root, cwd, packages)
    return _expand(command, root, cwd, (cwd, root), build)


def runs(command: str, root: Path, cwd: Path) -> list[tuple[Path, str]]:
    """Where the command runs and as what: (directory, expanded command), one per workspace package at a root that
    runs its packages' tests (see `expand_js`), else the one, without the build steps before it. What `dun doctor`
    shows."""
    runner = _runner(command)
    if runner in WORKSPACE_RUNNERS and delegates(cwd):
        packages = _packages(cwd, runner)
        if packages:
            return [(sub, _expand(command, root, sub, (sub, cwd, root), False)[0]) for sub in packages]
    return [(cwd, expand_js(command, root, cwd, False)[0])]


def _packages(cwd: Path, runner: str) -> list[Path]:
    """The packages of a workspace root that use `runner`: the root itself first when its own test script runs it
    beside its packages' tests (`jest && npm --prefix docs test`)."""
    return ([cwd] if runner in own_runners(cwd) else []) + \
        [sub for sub in workspace_dirs(cwd) if runner in js_tools(sub)]


def _runner(command: str) -> str | None:
    """The runner a built-in check's command runs: its `{js-args:PREFIX}`."""
    found = re.search(r"\{js-args:([^{}]+)\}", command)
    prefix = found[1].strip() if found else None
    return "node-test" if prefix == "node --test" else prefix


def _in_each(command: str, root: Path, cwd: Path, packages: list[Path]) -> tuple[str, str | None]:
    runs: list[str] = []
    for package in packages:
        rel = os.path.relpath(package, cwd)
        tag = urllib.parse.quote(rel.replace(os.sep, "/"), safe="")
        own = _REPORT.sub(functools.partial(_report_in, f"{os.path.relpath(cwd, package)}/", f"@{tag}"), command)
        expanded, absent = _expand(own, root, package, (package, cwd, root))
        if absent:
            return expanded, f"{rel}: {absent}"
        runs.append(f"(cd {shlex.quote(rel)} && {expanded}) || code=$?")
    return "code=0; " + "; ".join(runs) + "; exit $code", None


def _report_in(back: str, tag: str, match: re.Match[str]) -> str:
    return f"{back}{match['stem']}{tag}{match['ext']}"


_REPORT = re.compile(rf"(?P<stem>{re.escape(CACHE)}/[\w-]+)(?P<ext>\.\w+)")


def _expand(command: str, root: Path, cwd: Path, bases: tuple[Path, ...], build: bool = True) -> tuple[str, str | None]:
    missing: list[str] = []
    if "{js-lint}" in command:  # the lint script, else the linter the test script runs
        from dun.checks.jsbuild import lint_command

        command = command.replace("{js-lint}", lint_command(cwd))

    def replace(match: re.Match[str]) -> str:
        kind, name = match[1], (match[2] or "").strip()
        if kind is None:
            return package_manager(cwd)
        if kind == "js-args":
            return script_args(cwd, name)
        for base in dict.fromkeys(bases):
            binary = base / "node_modules" / ".bin" / name
            if os.access(seen(binary), os.X_OK):
                options = node_options(cwd, name)  # NODE_OPTIONS reaches node through any wrapper .bin has
                given = f'NODE_OPTIONS={shlex.quote(options)}"${{NODE_OPTIONS:+ $NODE_OPTIONS}}" ' if options else ""
                return given + shlex.quote(os.path.relpath(binary, cwd))
        if any(is_file(base / ".pnp.cjs") for base in bases):
            return f"yarn {shlex.quote(name)}"
        missing.append(name)
        return name

    expanded = _JS_PLACEHOLDER.sub(replace, command)
    if missing:
        return expanded, f"{', '.join(missing)} not installed (no node_modules/.bin/{missing[0]})"
    runner = re.search(r"\{js-args:([^{}]+)\}", command)
    if runner and build:  # the build its tests need first: its `pretest`, its test script's steps before the runner
        from dun.checks.jsbuild import build_steps

        steps = build_steps(cwd, runner[1].strip())
        if steps:
            expanded = f"({steps}) && {expanded}"
    return expanded, None


def install_command(cwd: Path) -> str:
    """What installs the project's dependencies with its own package manager (`npm ci`, `pnpm install ...`)."""
    return _INSTALL[package_manager(cwd)]


def js_install_hint(cwd: Path) -> str:
    return f"Install the project's dependencies (`{install_command(cwd)}`), then re-run."
