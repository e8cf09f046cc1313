"""The steps of a JavaScript project's test script around its runner, told from its own scripts. The build its tests
need first: what its `pretest` script and the
steps of its `test` script before the runner do (`"test": "tsc -p . && node --test dist/test/"`). The runner dun
starts alone would test a dist/ that is not there (a clean project failing on day one) or, worse, one built from
older sources. Type checks and linters among those steps are left out: the tsc and js-lint checks run them, and a
lint failure must not hide the tests. The linter its test script runs (`"test": "vitest run && eslint ."`) when it
has no `lint` script: `npm test` fails on what it finds, so js-lint runs it.

Read-only and cheap: package.json only, through dun/checks/looked.py (jsproject.package_json)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from dun.checks.jsproject import (
    JS_RUNNERS,
    SEGMENT_END,
    is_program,
    npm_scripts,
    package_json,
    package_manager,
    test_script,
)

# steps that check rather than build: their own checks run them (tsc, js-lint), or they are the tests themselves
_CHECKERS = {"eslint", "prettier", "biome", "xo", "standard", "stylelint", "oxlint", "tslint", "echo", "true",
             "npm-run-all", "run-s", "run-p", "concurrently", "c8", "nyc"}
_NO_EMIT = re.compile(r"(?:^|\s)--noEmit\b")


def build_steps(directory: Path, prefix: str) -> str:
    """A shell command running the build steps the project's `pretest` (npm and yarn run it before `test`) and its
    `test` script's steps before `prefix`'s runner do, with node_modules/.bin on PATH as a script has it; '' for
    none."""
    scripts = npm_scripts(package_json(str(directory)))
    runner = prefix.split()[0]
    steps: list[str] = []
    if "pretest" in scripts and package_manager(directory) in ("npm", "yarn"):
        steps += [s for s in _flat(scripts["pretest"], scripts) if _builds(s)]
    before: list[str] = []
    for segment in _flat(scripts.get("test", ""), scripts):
        try:
            words = shlex.split(segment)
        except ValueError:
            return ""
        if any(is_program(w, runner) for w in words):
            steps += [s for s in before if _builds(s)]
            break
        before.append(segment)
    if not steps:
        return ""
    return 'PATH="$PWD/node_modules/.bin:$PATH" && ' + " && ".join(steps)


# a script run by name whose name says it checks rather than builds: `npm run lint`, `yarn typecheck`
_CHECK_NAME = re.compile(r"lint|format|prettier|typecheck|type-check|tsc|check|test|coverage", re.I)
_BY_NAME = re.compile(r"^\s*(?:npm\s+run(?:-script)?|pnpm(?:\s+run)?|yarn(?:\s+run)?|bun\s+run)\s+"
                      r"(?:(?:-s|--silent)\s+)?(?P<name>[\w:.][\w:.-]*)\s*$")


def _flat(text: str, scripts: dict[str, str], depth: int = 0) -> list[str]:
    """The commands a script runs, in order, each script it runs by name put in its place, except one whose name
    says it checks (`npm run lint`): left out, as its commands would be."""
    out: list[str] = []
    for segment in SEGMENT_END.split(text):
        named = _BY_NAME.match(segment)
        if named and named["name"] in scripts and depth < 3:
            if not _CHECK_NAME.search(named["name"]) or named["name"].startswith(("test", "pretest")):
                out += _flat(scripts[named["name"]], scripts, depth + 1)
            continue
        out.append(segment)
    return out


def _builds(segment: str) -> bool:
    try:
        words = [w for w in shlex.split(segment) if not re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", w)]
    except ValueError:
        return False
    if not words:
        return False
    program = words[1] if words[0] in ("npx", "cross-env") and len(words) > 1 else words[0]
    if program in _CHECKERS or program in JS_RUNNERS or program.startswith("test"):
        return False
    if program == "node" and "--test" in words:
        return False
    return not (program == "tsc" and _NO_EMIT.search(segment))


_LINTERS = ("eslint", "biome", "xo", "standard", "oxlint", "stylelint", "prettier")


def test_linter(directory: Path) -> str:
    """The linter step of the project's `test` script (`eslint .`, `biome check .`, `prettier --check .`); ''."""
    for segment in SEGMENT_END.split(test_script(npm_scripts(package_json(str(directory))))):
        try:
            words = [w for w in shlex.split(segment) if not re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", w)]
        except ValueError:
            continue
        program = words[1] if words and words[0] == "npx" and len(words) > 1 else (words[0] if words else "")
        if program in _LINTERS and (program != "prettier" or "--check" in words or "-c" in words):
            return segment.strip()
    return ""


def lint_command(directory: Path) -> str:
    """What js-lint runs: the `lint` script, else the linter step of the `test` script."""
    if "lint" in npm_scripts(package_json(str(directory))):
        return f"{package_manager(directory)} run lint"
    linter = test_linter(directory)
    if not linter:
        return f"{package_manager(directory)} run lint"
    # its program from node_modules/.bin, as the script's PATH has it (`dun doctor` shows that one)
    return re.sub(r"^(?:npx\s+)?(?P<name>[\w-]+)", lambda m: f"node_modules/.bin/{m['name']}", linter, count=1)
