"""The gates that judge the agent's work, weakened in their config files: a coverage threshold lowered, pytest told to
skip tests (`addopts` with `-p no:`, `--deselect`, `-k 'not ...'`, `testpaths` emptied, `collect_ignore`), type
checkers and linters made lenient (mypy `ignore_errors`, `strict = false`, ruff `select = []` or `ignore = ["ALL"]`,
tsc `"strict": false`, an ignore file or `exclude` that covers every file), failures made not to count
(`abortOnError false`, `ignoreFailures`, `testFailureIgnore`, `soft_fail`, tests `enabled = false`), a check step
replaced by `true` in a Makefile or `package.json`, a pre-commit hook commented out, and dun's own `[tool.dun]` table.

Judged on what an edit adds and removes (confedit.py: sed, redirections, interpreter literals, the Write and Edit
tools), by effect: a threshold is compared with the one it replaces, so raising it stays free. `# type: ignore` and
`noqa` comments in source files are out of scope (they show in the diff a reviewer reads); `.dun/` is a protected
path and MISSION.md boxes ticked without work are the trust layer's to find (dun/trust).
"""

from __future__ import annotations

import re

GATE_FILES = re.compile(
    r"(?:^|/)(?:pyproject\.toml|setup\.cfg|tox\.ini|pytest\.ini|\.coveragerc|mypy\.ini|\.mypy\.ini|ruff\.toml"
    r"|\.ruff\.toml|\.flake8|\.pylintrc|pylintrc|conftest\.py|package\.json|tsconfig[^/]*\.json|jsconfig\.json"
    r"|\.eslintrc[^/]*|eslint\.config\.[cm]?[jt]s|\.[a-z]*lintignore|\.prettierignore|biome\.jsonc?|jest\.config\.[^/]+"
    r"|vitest\.config\.[^/]+|vite\.config\.[^/]+|\.nycrc[^/]*|\.c8rc[^/]*|\.?codecov\.ya?ml|karma\.conf\.[jt]s"
    r"|phpunit\.xml(?:\.dist)?|phpstan\.neon(?:\.dist)?|psalm\.xml|\.rubocop\.yml|\.golangci\.ya?ml|\.swiftlint\.yml"
    r"|build\.gradle(?:\.kts)?|pom\.xml|Cargo\.toml|\.checkov\.ya?ml|\.tfsec/[^/]+|\.tflint\.hcl|\.bandit|\.semgrepignore"
    r"|sonar-project\.properties|Makefile|GNUmakefile|justfile|Taskfile\.ya?ml|noxfile\.py|\.pre-commit-config\.yaml"
    r"|lefthook\.ya?ml|\.husky/[^/]+|\.lintstagedrc[^/]*|[^/]*thresholds?[^/]*\.(?:ya?ml|json|toml|cfg|ini)"
    r"|\.github/codeql/[^/]+|\.clippy\.toml|clippy\.toml|deny\.toml|\.hadolint\.ya?ml|\.yamllint[^/]*|\.envrc)$")
# A setting added that turns a gate off or makes failures pass: (regex over added text, what it does)
WEAKENING = (
    (r"(?i)\bignore_errors\s*=\s*true", "turns mypy's errors off"),
    (r"(?i)(?:^|[\s{,])[\"']?strict[\"']?\s*[:=]\s*false", "turns strict type checking off"),
    (r"(?i)\bdisallow_\w+\s*=\s*false|\bcheck_untyped_defs\s*=\s*false|\"no(?:Implicit\w+|Unchecked\w+|Unused\w+)\""
     r"\s*:\s*false|\"strictNullChecks\"\s*:\s*false", "drops a type checker's strictness"),
    (r"(?i)\b(?:extend-)?select\s*=\s*\[\s*\]", "selects no lint rule"),
    (r"(?i)\b(?:extend-)?ignore\s*=\s*\[[^\]]*[\"']ALL[\"']|[\"']\*\*?(?:/\*+)?[\"']\s*=\s*\[[^\]]*[\"']ALL[\"']",
     "ignores every lint rule"),
    (r"(?i)\b(?:exclude|extend-exclude|force-exclude|ignore_patterns|ignorePatterns|ignores|omit|norecursedirs"
     r"|testPathIgnorePatterns|coveragePathIgnorePatterns|skip-dirs|skip-files|paths-ignore|exclude_paths)"
     r"[\"']?\s*[:=]\s*\[?\s*(?:-\s*)?[\s\"']*(?:<rootDir>)?/?(?:\*\*?(?:/\*+(?:\.\w+)?)?|\.\*|\.|\./|\^\.\*\$?"
     r"|(?:src|tests?|__tests__|spec)/?(?:\*\*?(?:/\*+)?)?)[\"']?\s*(?:[,\]\n]|$)",
     "excludes every file (or the sources or tests) from a check"),
    (r"(?im)^\s*(?:\*\*?(?:/\*+(?:\.\*)?)?|/|\.|\./|/?src/?(?:\*\*?(?:/\*+)?)?)\s*$",
     "an ignore line that covers every file"),
    (r"(?i)\baddopts\b[^\n]*(?:-p\s*no:(?:pytest_)?(?:cov|mypy|flake8|ruff|black|pylint|typeguard|doctest)"
     r"|--deselect|--ignore(?:-glob)?[= ][^\s\"']*tests?|-k\s*[\\\"']*not\b|"
     r"--co\b|--collect-only|--no-cov\b|--continue-on-collection-errors|--exitfirst\s+--maxfail=0)",
     "makes pytest skip tests (addopts)"),
    (r"(?i)\btestpaths\s*=\s*(?:\[\s*\]|[\"']{2}|$)|\bpython_(?:files|functions|classes)\s*=\s*(?![^\n]*[Tt]est)[^\n]+",
     "points pytest at no tests"),
    (r"(?i)\bcollect_ignore(?:_glob)?\b[^\n]*(?:test|\*)", "makes pytest skip test files (collect_ignore)"),
    (r"(?i)\babortOnError\s*(?:=\s*)?false|\bignoreFailures\s*(?:=\s*)?true|testFailureIgnore>?\s*true"
     r"|<skipTests>\s*true|<maven\.test\.skip>\s*true|\bsoft[-_]fail\s*:\s*true|\bexit[-_]zero\s*[:=]\s*true"
     r"|\bfail[-_]on[-_](?:error|warning|severity)\s*[:=]\s*(?:false|none|never)|\bwarningsAsErrors\s*(?:=\s*)?false"
     r"|--passWithNoTests|\bpassWithNoTests[\"']?\s*:\s*true|\bbail\s*:\s*false",
     "makes a failing check count as passed"),
    (r"(?i)\b(?:test\w*|unitTests[\w.]*|check)\b[^\n]*\benabled\s*=\s*false|\btest\s*\{\s*enabled\s*=\s*false",
     "turns tests off in the build"),
    (r"(?i)\[tool\.dun\b", "changes dun's own configuration ([tool.dun] in pyproject.toml)"),
    (r"(?i)(?:coverageThreshold|thresholds?|fail[-_]under)[\"']?\s*[:=]\s*(?:\{\s*\}|\[\s*\]|null|none|false)",
     "empties a threshold"),
    (r"(?m)^\s*(?:extend-)?ignore\s*=\s*\[?\s*[\"']?[A-Z]{1,2}[\"']?(?:\s*,\s*[\"']?[A-Z]{1,2}[\"']?)*\s*\]?\s*$",
     "ignores whole families of lint rules"),
    (r"(?i)\bdisable-all\s*:\s*true|\ball\s*=\s*[\"']allow[\"']|\bwarnings\s*=\s*[\"']allow[\"']",
     "turns every lint off"),
    (r"(?i)\bitems\s*(?:\.clear\(\)|\[:\]\s*=\s*\[\])|allow_module_level\s*=\s*True|\bpytestmark\s*=\s*pytest\.mark\.skip",
     "makes pytest collect or run no test (conftest.py)"),
    (r"(?i)\bstages\s*:\s*\[\s*manual\s*\]|\bskip\s*:\s*true", "makes a hook run only by hand or never"),
    (r"(?i)\b(?:HUSKY|LEFTHOOK)\s*=\s*[\"']?(?:0|false)\b|\bHUSKY_SKIP_HOOKS\s*=|\bPRE_COMMIT_ALLOW_NO_CONFIG\s*=",
     "skips the commit hooks for every later command"),
    (r"(?i)\b(?:project|patch|changes)\s*:\s*(?:off|false)\b|\binformational\s*:\s*true",
     "turns a coverage status check off"),
    (r"(?i)check[-_]coverage[\"']?\s*[:=]\s*false|\bcoverage\b[^\n]{0,40}\benabled[\"']?\s*:\s*false",
     "turns coverage checking off"),
)
# Settings that mean something only in some files: (the start of what it does, the files)
SCOPES = {"an ignore line": r"(?:^|/)\.[a-z]*ignore$", "makes a hook run": r"pre-commit-config|lefthook",
          "turns a coverage status": r"codecov", "makes pytest collect": r"conftest\.py$",
          "turns coverage checking": r"\.nycrc|\.c8rc|(?:vitest|jest|vite)\.config",
          "skips the commit hooks": r"\.envrc$"}
_WEAKENING = tuple((re.compile(rx), why, re.compile(next((v for k, v in SCOPES.items() if why.startswith(k)), "")))
                   for rx, why in WEAKENING)
# Thresholds: a number under one of these keys, lowered (compared with the value it replaces) or set to 0
THRESHOLD = re.compile(r"(?i)(--cov-fail-under|fail[-_]under|(?<![\w-])level|min[-_]?[a-z0-9_]*|minimum[a-z0-9_]*"
                       r"|threshold[a-z0-9_]*|coverage[a-z_]*|branches|lines|functions|statements|target)[\"']?\s*[:=\s]\s*[\"']?"
                       r"(\d+(?:\.\d+)?)")
# A threshold's key, with or without its value (a line that sets one, deleted)
THRESHOLD_KEY = re.compile(r"(?i)--cov-fail-under|\bfail[-_]under\b|coverageThreshold"
                           r"|\bmin[-_](?:coverage|accuracy|score)\w*|\bminimum[-_]?coverage\w*|\bcoverage[-_]?threshold\w*")
# Check commands a Makefile, package.json script or hook runs (replaced by `true`, it checks nothing)
CHECKS = re.compile(r"(?i)\b(?:pytest|tox|nox|jest|vitest|mocha|go\s+(?:test|vet)|cargo\s+(?:test|clippy)|mypy|ruff"
                    r"|flake8|pylint|eslint|tsc|tflint|terraform\s+(?:fmt\s+-check|validate)|checkov|tfsec|rspec"
                    r"|phpunit|phpstan|swiftlint|ktlint|detekt|golangci-lint|shellcheck|hadolint|bandit|semgrep"
                    r"|black\s+--check|prettier\s+--check|gradlew?\s+\w*(?:test|check|lint)\w*|xcodebuild\b[^\n]*\btest"
                    r"|dvc\s+repro|dbt\s+test|great_expectations|dun\s+check)\b")
# Test files, and an assertion in one replaced by a statement that asserts nothing
TEST_FILES = re.compile(r"(?:^|/)(?:tests?/.+\.\w+|test_[^/]+\.py|[^/]+_test\.(?:py|go|rb|exs)"
                        r"|[^/]+\.(?:test|spec)\.[cm]?[jt]sx?|[^/]+Tests?\.(?:java|kt|swift|cs))$")
_ASSERTS = re.compile(r"\bassert\w*|\bexpect\s*\(|\bt\.(?:Error|Fatal)|\brequire\.\w+\(|\bXCTAssert|\bshould\b")
_NO_OP = re.compile(r"(?i)\bassert\s*\(?\s*(?:true|1)\s*\)?\s*$|^\s*pass\s*$|expect\s*\(\s*true\s*\)"
                    r"|\bassert\s+True\b|XCTAssertTrue\s*\(\s*true|assertTrue\s*\(\s*true", re.M)
# A check whose failure is made not to count where it runs (`pytest || true`, a Makefile's `-mypy src`)
_CHECK = CHECKS.pattern.removeprefix("(?i)")
_FAIL_PASSES = re.compile(r"(?im)(?:" + _CHECK + r")[^\n]*\|\|\s*(?:true|:|exit\s+0|echo)\b|^\t-\s*(?:" + _CHECK + ")")
_FOR_TESTS = re.compile(r"(?i)\[mypy-tests|module\s*=\s*\[?\s*[\"']tests")
_SEVERITY_ON = re.compile(r"[\"']?(?:error|2)[\"']?")
_SEVERITY_OFF = re.compile(r"[\"']?(?:off|warn|warning|0|1)[\"']?")
_HOOK_ID = re.compile(r"(?m)^\s*-\s*id\s*:\s*(\S+)")


def judge(path: str, added: str, removed: str) -> str | None:
    """Why this change of a gate's config file (or of a test's assertions) weakens the gate, or None."""
    if TEST_FILES.search(path) and not GATE_FILES.search(path):
        asserted = _ASSERTS.search(removed)
        return f"replaces an assertion with one that asserts nothing ({asserted.group(0)})" if asserted and \
            added.strip() and not _ASSERTS.search(_NO_OP.sub("", added)) else None
    if not GATE_FILES.search(path):
        return None
    for rx, what, scope in _WEAKENING:
        if not scope.search(path):
            continue
        if (m := rx.search(added)) and not rx.search(removed) and not (
                what.startswith("drops a type") and _FOR_TESTS.search(added)):  # [mypy-tests.*] relaxed: the tests'
            return f"{what} ({' '.join(m.group(0).split())[:60]})"
    if (m := _FAIL_PASSES.search(added)) and not _FAIL_PASSES.search(removed):
        return f"makes a failing check count as passed ({' '.join(m.group(0).split())[:60]})"
    if _SEVERITY_ON.fullmatch(removed.strip()) and _SEVERITY_OFF.fullmatch(added.strip()):  # s/'error'/'off'/g
        return f"turns lint errors off ({removed.strip()} -> {added.strip()})"
    if why := lowered(added, removed, path):
        return why
    if (m := THRESHOLD_KEY.search(removed)) and not THRESHOLD_KEY.search(added):
        return f"removes a threshold ({m.group(0)})"
    gone = [c for c in dict.fromkeys(hit.group(0) for hit in CHECKS.finditer(removed)) if c not in added]
    if gone and len(CHECKS.findall(added)) < len(CHECKS.findall(removed)) and \
            not path.endswith(("pyproject.toml", "setup.cfg", "conftest.py")):
        return f"removes a check ({gone[0]})"
    hooks = [h for h in _HOOK_ID.findall(removed) if h not in _HOOK_ID.findall(added)]
    if hooks:
        return f"removes a pre-commit hook ({hooks[0]})"
    return None


def read_text(path: str) -> str:
    """A config file on disk as text (the first MiB), or "" where there is none."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read(1 << 20)
    except OSError:
        return ""


def lowered(added: str, removed: str, path: str = "") -> str | None:
    """A threshold set lower than the value it replaces (in the removed text, else in the file on disk), or to 0
    where the old one is not known."""
    old = {k.lower().lstrip("-"): float(v) for k, v in THRESHOLD.findall(read_text(path))}
    old.update({k.lower().lstrip("-"): float(v) for k, v in THRESHOLD.findall(removed)})
    for key, value in THRESHOLD.findall(added):
        name = key.lower().lstrip("-")
        if name in old and float(value) < old[name]:
            return f"lowers a threshold ({key} {old[name]:g} -> {value})"
        if name not in old and float(value) == 0 and ("fail" in name or name.startswith(("min", "threshold", "cov"))
                                                     or re.search(r"(?i)threshold|coverage", added)):
            return f"sets a threshold to 0 ({key})"
    return None
