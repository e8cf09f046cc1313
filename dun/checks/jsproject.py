"""A JavaScript project, told from its own files: the package manager its lockfile names, the test runner, type
checker and lint script it runs, a monorepo's workspace packages. Every look goes through dun/checks/looked.py."""

from __future__ import annotations

import fnmatch
import json
import os
import re
from collections.abc import Mapping
from pathlib import Path

from dun.checks.looked import glob_paths, is_file, read
from dun.core.lazyre import LazyPattern

JS_RUNNERS = ("node-test", "vitest", "jest", "mocha", "ava", "tape", "bun-test")
# lockfile -> package manager, in the order a project that has several is most likely to mean
LOCKFILES = (("pnpm-lock.yaml", "pnpm"), ("yarn.lock", "yarn"), ("bun.lockb", "bun"), ("bun.lock", "bun"),
             ("package-lock.json", "npm"), ("npm-shrinkwrap.json", "npm"))
_NPM_DEFAULT_TEST = "no test specified"
SEGMENT_END = LazyPattern(r"\s*(?:&&|\|\||;|\|)\s*")  # between the commands of a script


def is_program(word: str, program: str) -> bool:
    """Whether `word` runs `program`: its name, a path to it, or its script that node runs
    (`node_modules/jest/bin/jest.js`)."""
    base = os.path.basename(word)
    script = re.fullmatch(r"[\w.-]+\.[cm]?js", base) is not None
    return base == program or (script and f"node_modules/{program}/" in word)


def package_json(directory: str) -> dict[str, object]:
    try:
        data = json.loads(read(Path(directory) / "package.json", Path(directory)) or "{}")
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def npm_scripts(pkg: Mapping[str, object]) -> dict[str, str]:
    scripts = pkg.get("scripts")
    return {str(k): str(v) for k, v in scripts.items()} if isinstance(scripts, dict) else {}


# another script run by name: `npm run test:unit`, `yarn test:unit`, `pnpm run x`, `bun run x`; `run-s test:*`
_RUN_SCRIPT = LazyPattern(r"\b(?:npm\s+run(?:-script)?|pnpm(?:\s+run)?|yarn(?:\s+run)?|bun\s+run)\s+"
                          r"(?:(?:-s|--silent)\s+)?(?P<name>[\w:.][\w:.-]*)")
_RUN_ALL = LazyPattern(r"\b(?:npm-run-all|run-s|run-p)\b(?P<names>[^&|;]*)")


def test_script(scripts: Mapping[str, str], name: str = "test", depth: int = 0) -> str:
    """The `test` script with each script it runs by name put in its place (`"test": "npm run test:unit"` and
    `"test:unit": "mocha test/unit"` is `mocha test/unit`): what it really runs, for the runner and its arguments."""
    text = scripts.get(name, "")
    if depth >= 3:
        return text

    def named(match: re.Match[str]) -> str:
        target = match["name"]
        return test_script(scripts, target, depth + 1) if target in scripts and target != name else match[0]

    def each(match: re.Match[str]) -> str:
        found = [key for word in match["names"].split() if not word.startswith("-")
                 for key in scripts if fnmatch.fnmatchcase(key, word) and key != name]
        return " && ".join(test_script(scripts, key, depth + 1) for key in dict.fromkeys(found)) or match[0]

    return _RUN_ALL.sub(each, _RUN_SCRIPT.sub(named, text))


def _dependencies(pkg: Mapping[str, object]) -> set[str]:
    names: set[str] = set()
    for key in ("dependencies", "devDependencies", "optionalDependencies"):
        section = pkg.get(key)
        if isinstance(section, dict):
            names.update(str(k) for k in section)
    return names


def package_manager(directory: Path) -> str:
    declared = str(package_json(str(directory)).get("packageManager") or "").split("@", 1)[0]
    if declared in ("npm", "pnpm", "yarn", "bun"):
        return declared
    return next((pm for lock, pm in LOCKFILES if is_file(directory / lock)), "npm")


# runners a workspace root runs once per package, each package's report read apart (see jsenv.expand_js): those that
# write a report file. AVA and tape print theirs, with paths relative to where they ran.
WORKSPACE_RUNNERS = ("node-test", "vitest", "jest", "mocha")
# a `test` script that runs each workspace package's own: npm -ws / --workspaces, pnpm -r / --filter, yarn
# workspaces, lerna, turbo, nx
_DELEGATES = LazyPattern(r"--workspaces\b|(?:^|\s)-ws\b|\b(?:pnpm|yarn)\b[^&|;]*\s(?:-r|--recursive|--filter|"
                         r"workspaces)\b|\blerna\s+run\b|\bturbo\b[^&|;]*\btest\b|\bnx\s+run-many\b")
# a package of its own that the test script tests by its directory, without workspaces: `npm --prefix server test`,
# `yarn --cwd client test`, `pnpm -C web test`, `cd api && npm test`
_DIR_TEST = LazyPattern(r"\b(?:npm|pnpm|yarn|bun)\b[^&|;]*?(?:--prefix|--cwd|--dir|-C)[ =](?P<dir>[\w.@/-]+)"
                        r"[^&|;]*\btest\b|\bcd\s+(?P<cd>[\w.@/-]+)\s*&&\s*(?:npm|pnpm|yarn|bun)\s+(?:run\s+)?test\b")


def workspace_dirs(directory: Path) -> list[Path]:
    """The workspace packages a package.json (`workspaces`) or pnpm-workspace.yaml (`packages:`) declares: each
    directory a pattern matches that holds a package.json, outside node_modules; and the packages its `test` script
    tests by their directory without declaring them (`npm --prefix server test`, `cd client && npm test`)."""
    declared = package_json(str(directory)).get("workspaces")
    if isinstance(declared, dict):
        declared = declared.get("packages")
    patterns = [str(p) for p in declared] if isinstance(declared, list) else []
    pnpm = read(directory / "pnpm-workspace.yaml", directory)
    listed = re.search(r"^packages:[ \t]*\n((?:[ \t]+.*\n?|[ \t]*\n)*)", pnpm, re.M)
    if listed:
        patterns += [m.strip().strip("'\"") for m in re.findall(r"^[ \t]*-[ \t]*(.+?)[ \t]*$", listed[1], re.M)]
    found: list[Path] = []
    for named in _DIR_TEST.finditer(test_script(npm_scripts(package_json(str(directory))))):
        rel = (named["dir"] or named["cd"]).rstrip("/").removeprefix("./")
        if rel and rel != "." and ".." not in rel.split("/") and not rel.startswith("/") and \
                is_file(directory / rel / "package.json") and "node_modules" not in rel.split("/"):
            found.append(directory / rel)
    patterns = [p.strip().rstrip("/").removeprefix("./") for p in patterns]
    excluded = [p[1:].removeprefix("./") for p in patterns if p.startswith("!")]  # `!packages/legacy`
    for pattern in patterns:
        if not pattern or pattern.startswith(("!", "/")) or ".." in pattern.split("/"):
            continue
        for marker in glob_paths(directory, f"{pattern}/package.json"):
            rel = marker.parent.relative_to(directory).as_posix()
            if "node_modules" not in marker.parts and marker.parent != directory and marker.parent not in found \
                    and not any(fnmatch.fnmatchcase(rel, x) for x in excluded):
                found.append(marker.parent)
    return sorted(found)


def own_script(directory: Path) -> str:
    """What a workspace root's `test` script runs at the root itself, beside its packages' tests: the script without
    the commands that run theirs (`jest` of `jest && npm --prefix docs test`)."""
    test = _DIR_TEST.sub(" ; ", test_script(npm_scripts(package_json(str(directory)))))
    return " ; ".join(s for s in SEGMENT_END.split(test) if s.strip() and not _DELEGATES.search(s))


def own_runners(directory: Path) -> list[str]:
    """The runners a workspace root's `test` script runs at the root itself (`jest && npm --prefix docs test`,
    `vitest run && cd web && npm test`): each must run too, in the root."""
    return _named(own_script(directory))


def _named(test: str) -> list[str]:
    """The runners a test script names."""
    words = set(re.findall(r"[\w@/.-]+", test))
    return (["node-test"] if _NODE_TEST.search(test) else []) + \
        [runner for runner in JS_RUNNERS[1:] if runner in words] + (["bun-test"] if _BUN_TEST.search(test) else [])


def delegates(directory: Path) -> bool:
    """Whether the project at `directory` is a workspace root whose tests are its packages' own: it declares
    workspaces, and its `test` script runs theirs (or there is none)."""
    test = test_script(npm_scripts(package_json(str(directory))))
    if test.strip() and _NPM_DEFAULT_TEST not in test and not _DELEGATES.search(test) and not _DIR_TEST.search(test):
        return False
    return bool(workspace_dirs(directory))


def js_tools(directory: Path) -> list[str]:
    pkg = package_json(str(directory))
    if not pkg:
        return []
    scripts, deps = npm_scripts(pkg), _dependencies(pkg)
    test = test_script(scripts)
    if delegates(directory):  # a monorepo: the runners its packages use, each run in its package
        # and those its test script runs at the root itself (`jest && npm --prefix docs test`)
        own = own_runners(directory)
        used = {tool for sub in workspace_dirs(directory) for tool in js_tools(sub)} | set(own)
        return [package_manager(directory), *(r for r in WORKSPACE_RUNNERS if r in used),
                *(r for r in own if r not in WORKSPACE_RUNNERS), *_js_extras(directory, scripts, deps)]
    named = _named(test)
    # the runners the test script names; else the one among the dependencies (a script dun cannot read)
    tools = [package_manager(directory), *(named or [r for r in JS_RUNNERS[1:] if r in deps])]
    return tools + _js_extras(directory, scripts, deps)


_BUN_TEST = LazyPattern(r"\bbun\s+test\b")  # bun's own runner (`bun run test` runs a script)
# `node --test`, with node's own options before --test (`--import tsx`); not `node scripts/x.js --test`
_NODE_TEST = LazyPattern(r"\bnode(?:\s+--?[\w-]+(?:=\S+|\s+(?!-)[^\s&|;]+)?)*?\s+--test\b")


# a linter the test script runs (`vitest run && eslint .`): npm test fails on what it finds
_TEST_LINTER = LazyPattern(r"(?:^|&&|;|\|\|)\s*(?:npx\s+)?(?:eslint|biome|xo|standard|oxlint|stylelint|"
                           r"prettier\s[^&|;]*(?:--check|-c)\b)")


def _js_extras(directory: Path, scripts: dict[str, str], deps: set[str]) -> list[str]:
    tools: list[str] = []
    if "typescript" in deps and is_file(directory / "tsconfig.json"):
        # a solution-style tsconfig (`"files": []` and `references`) holds no file itself: `tsc --noEmit` checks
        # nothing there and passes; `tsc --build` checks each project it references
        config = read(directory / "tsconfig.json", directory)
        solution = re.search(r'"references"\s*:\s*\[\s*\{', config) and \
            re.search(r'"(files|include)"\s*:\s*\[\s*\]', config)
        tools.append("typescript-build" if solution else "typescript")
    if "lint" in scripts or _TEST_LINTER.search(scripts.get("test", "")):  # js-lint runs it (dun/checks/jsbuild.py)
        tools.append("lint-script")
    return tools


def js_has_tests(directory: Path) -> bool:
    test = npm_scripts(package_json(str(directory))).get("test", "")
    if delegates(directory):
        return bool(own_runners(directory)) or any(js_has_tests(sub) for sub in workspace_dirs(directory))
    return bool(test.strip()) and _NPM_DEFAULT_TEST not in test

