"""Test suites in the repository that no built-in check runs (the `test-suites` check, `dun init`): another
ecosystem's (Ruby, Maven, ...), a JavaScript runner dun does not read, a toolchain not on PATH, a project in a
subdirectory. Every look at the disk goes through dun/checks/looked.py's recorded helpers, so `reads` can tell
what an answer depended on."""

from __future__ import annotations

import os
import re
from pathlib import Path

from dun.checks.ecosystems import Ecosystem, detect, uses
from dun.checks.gorunner import go_work_modules
from dun.checks.jsproject import (
    JS_RUNNERS,
    WORKSPACE_RUNNERS,
    delegates,
    js_has_tests,
    js_tools,
    npm_scripts,
    own_script,
    package_json,
    workspace_dirs,
)
from dun.checks.looked import dir_names, is_dir, is_file, read, seen
from dun.core.lazyre import LazyPattern

# Test suites of ecosystems dun has no built-in check for: marker -> (what it is, directories holding its tests)
FOREIGN_SUITES = (
    ("Gemfile", "Ruby (rspec or minitest: `bundle exec rake test`)", ("spec", "test")),
    ("pom.xml", "Maven (`mvn -q test`, Surefire's JUnit XML in target/surefire-reports)", ("src/test",)),
    ("build.gradle", "Gradle (`./gradlew test`, JUnit XML in build/test-results)", ("src/test",)),
    ("build.gradle.kts", "Gradle (`./gradlew test`, JUnit XML in build/test-results)", ("src/test",)),
    ("composer.json", "PHP (`vendor/bin/phpunit --log-junit FILE`)", ("tests", "test")),
    ("mix.exs", "Elixir (`mix test`)", ("test",)),
    ("Package.swift", "Swift (`swift test --xunit-output FILE`)", ("Tests",)),
    ("deno.json", "Deno (`deno test --reporter=junit`)", ("",)),
    ("deno.jsonc", "Deno (`deno test --reporter=junit`)", ("",)),
    ("CMakeLists.txt", "CMake/CTest (`ctest --output-junit FILE`)", ("",)),
)
# JavaScript test runners no built-in check reads, named in a workspace root's own part of its test script
_OTHER_RUNNER = LazyPattern(r"(?:^|[\s/])(karma|jasmine|playwright|cypress|uvu|qunit|wdio|testcafe|web-test-runner|"
                            r"wtr|zora)\b")
_CMAKE_TESTS = LazyPattern(r"^\s*(enable_testing|add_test)\s*\(", re.M | re.I)
_MAKE_TEST = LazyPattern(r"^(test|check|tests)\s*:", re.M)


# ecosystem -> the program its built-in test checks need (`requires:`): without it they skip, and nothing else says so
TOOLCHAINS = {"javascript": "node", "rust": "cargo", "go": "go"}
NOT_INSTALLED = "is not installed (not on PATH)"


def on_path(program: str) -> bool:
    """Whether `program` is an executable on PATH; every place it was looked for is recorded (installing it there
    changes that place's stamp)."""
    for directory in os.environ.get("PATH", "").split(os.pathsep):
        path = Path(directory or ".") / program
        if seen(path).is_file() and os.access(path, os.X_OK):
            return True
    return False


def unrun_suites(root: Path) -> list[tuple[str, str]]:
    """(file, why) for every test suite in the repository that no built-in check runs: a runner dun does not read,
    an ecosystem it has no check for, or one whose toolchain is not installed here (its checks skip)."""
    found: list[tuple[str, str]] = []
    ours = detect(root)
    monorepo = any(eco.name == "javascript" for eco in ours) and delegates(root)
    for sub in workspace_dirs(root) if monorepo else []:
        runners = [t for t in js_tools(sub) if t in JS_RUNNERS]
        if js_has_tests(sub) and not set(runners) & set(WORKSPACE_RUNNERS):
            rel = sub.relative_to(root).as_posix()
            script = npm_scripts(package_json(str(sub))).get("test", "").strip()
            why = f"runs {runners[0]}, which dun runs only at the top of a project, not in each workspace package" \
                if runners else f"has a `test` script running `{script[:80]}`, which no built-in check reads"
            found.append((f"{rel}/package.json", f"workspace package {rel} {why}"))
    other = _OTHER_RUNNER.search(own_script(root)) if monorepo else None
    if other:  # its packages' tests run; a runner no check reads at the root beside them does not
        found.append(("package.json", f"the `test` script runs `{other[1]}` at the root beside its packages' tests, "
                                      f"which no built-in check reads (they read {', '.join(JS_RUNNERS)})"))
    for eco in ours:
        program = TOOLCHAINS.get(eco.name)
        if eco.tests and program is not None and not on_path(program):
            found.append((eco.marker, f"a {eco.name} test suite, but `{program}` {NOT_INSTALLED}: "
                                      f"its built-in checks are skipped, so nothing runs these tests"))
            continue
        if eco.name == "javascript" and eco.tests and not monorepo and not set(JS_RUNNERS) & set(eco.tools):
            script = npm_scripts(package_json(str(root))).get("test", "").strip()
            found.append(("package.json", f"the `test` script runs `{script[:80]}`, which no built-in check reads "
                                          f"(they read {', '.join(JS_RUNNERS)})"))
    for marker, what, dirs in FOREIGN_SUITES:
        if not is_file(root / marker):
            continue
        if marker == "CMakeLists.txt":
            if _CMAKE_TESTS.search(read(root / marker, root)):
                found.append((marker, f"a {what} test suite"))
        elif any(is_dir(root / d) if d else True for d in dirs):
            found.append((marker, f"a {what} test suite"))
    if not ours and not found and (make := read(root / "Makefile", root)) and _MAKE_TEST.search(make):
        found.append(("Makefile", "a `make test` target"))
    return found + _subprojects(root, ours)


# directories whose projects are not the repository's own suites: fixtures, examples, vendored code
_NOT_SUBPROJECTS = {"node_modules", "vendor", "third_party", "testdata", "fixtures", "examples", "example", "test",
                    "tests", "docs", "target", "build", "dist"}


def _subprojects(root: Path, ours: list[Ecosystem]) -> list[tuple[str, str]]:
    """Projects one or two directories down (`backend/go.mod`, `services/web/package.json`) with a test suite: the
    built-in checks run at the repository root only, so nothing runs theirs. Not: a JavaScript workspace package, a
    crate of a root Cargo workspace, a Python package under a Python root (their root's checks run them)."""
    names = {eco.name for eco in ours}
    covered = set(workspace_dirs(root)) if "javascript" in names else set()
    if "go" in names:  # a go.work's modules: the root's go-test runs each
        covered |= {root / rel for _, rel in go_work_modules(root)}
    found: list[tuple[str, str]] = []
    tops = _subdirs(root)
    for sub in tops + [d for top in tops if top.name in _CONTAINERS for d in _subdirs(top)]:
        if sub not in covered:
            rel = sub.relative_to(root).as_posix()
            found += [(f"{rel}/{eco.marker}", f"a {eco.name} project in {rel}/ whose tests no built-in check runs "
                                              f"(they run at the repository root): add a check with `cwd: {rel}`")
                      for eco in detect(sub) if eco.tests and not (eco.name in _ROOT_RUNS and eco.name in names)]
    return found


_ROOT_RUNS = ("rust", "python")  # a root of these runs what lies below it (cargo's workspace, pytest's collection)
# directories that hold projects a level further down (`services/api/go.mod`); others are looked into one level only
_CONTAINERS = {"services", "apps", "packages", "libs", "crates", "modules", "projects", "components", "cmd", "tools",
               "tooling", "plugins", "extensions", "clients", "sdks", "sdk", "bindings", "functions", "workers",
               "backends", "frontends", "contrib"}


def _subdirs(directory: Path) -> list[Path]:
    return [directory / name for name in sorted(dir_names(directory, dirs_only=True))
            if not name.startswith(".") and name not in _NOT_SUBPROJECTS]


def applying_checks(root: Path) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """Built-in manifest id -> its checks that apply here: the manifest's trigger matches, the check's `uses` holds;
    one whose `requires:` program is not on PATH is shown skipped (`go-staticcheck (skipped: staticcheck is not
    installed)`), since it will not run. Then the user's own command checks by the directory they run in (`cwd:`),
    which run a project there (as the `test-suites` check counts them, dun/engine/catalog.py)."""
    from dun.checks.jsenv import expand_js, has_js_placeholder, install_command
    from dun.engine.runner import trigger_miss
    from dun.engine.session import open_session

    session = open_session(root, agents=False)
    catalog, ctx = session.catalog(), session.context()
    out: dict[str, list[str]] = {}
    for manifest in catalog.manifests:
        if manifest.origin == "builtin" and trigger_miss(manifest.triggers, ctx) is None:
            shown = []
            for c in manifest.checks:
                if c.options.get("uses") and not uses(root, str(c.options["uses"])):
                    continue
                missing = [str(p) for p in c.options.get("requires") or [] if not on_path(str(p))]
                absent = None
                if not missing and has_js_placeholder(command := str(c.options.get("command") or "")):
                    absent = expand_js(command, root, root, build=False)[1]  # node_modules not installed
                shown.append(f"{c.id} (skipped: {missing[0]} is not installed)" if missing
                             else f"{c.id} (an error until installed: `{install_command(root)}`)"
                             if absent else c.id)
            out[manifest.id] = shown
    own: dict[str, list[str]] = {}
    for check in catalog.checks:
        cwd = str(check.options.get("cwd") or ".").strip("/").removeprefix("./")
        if check.type == "command" and cwd not in (".", ""):
            own.setdefault(cwd, []).append(check.id)
    return out, own


def init_report(root: Path) -> list[str]:
    """What `dun init` and `dun doctor` say: each ecosystem found, what it uses and the built-in checks that apply
    (those that will skip said so); the test suites no built-in check runs. Each once: an ecosystem whose toolchain
    is missing is its own line, not a second one among the suites."""
    checks, own = applying_checks(root)
    lines = []
    unrun = unrun_suites(root)
    for eco in detect(root):
        applying = checks.get(eco.name, [])
        skipped = [why for marker, why in unrun if marker == eco.marker and NOT_INSTALLED in why]
        warns = "; `dun check` warns until it is installed" if skipped else ""
        lines.append(f"found {eco.name} ({eco.marker}; uses {', '.join(eco.tools) or 'nothing dun knows'}): "
                     f"{'checks ' + ', '.join(applying) if applying else 'no built-in check applies'}{warns}\n")
    markers = {eco.marker for eco in detect(root)}
    for marker, why in unrun:
        if marker in markers and NOT_INSTALLED in why:
            continue
        where = marker.rpartition("/")[0]
        running = [i for cwd, ids in own.items() if where and f"{cwd}/".startswith(f"{where}/") for i in ids]
        if running:  # a check of the user's runs it: `dun check` does not warn, and neither does this
            lines.append(f"found {marker}: run by your check{'s' if len(running) > 1 else ''} {', '.join(running)} "
                         f"(`cwd: {where}`)\n")
            continue
        until = "it is installed" if NOT_INSTALLED in why else "a check runs it (docs/plugins.md)"
        lines.append(f"found {marker}: {why}; `dun check` warns until {until}\n")
    return lines or ["found no ecosystem dun has built-in checks for (package.json, Cargo.toml, pyproject.toml, "
                     "go.mod)\n"]
