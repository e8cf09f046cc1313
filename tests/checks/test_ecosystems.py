"""What a project uses, told from its files (dun/checks/ecosystems.py), and what users see of it: `dun init` names
the ecosystems and the checks that apply, `dun check` warns about a test suite no check runs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from checks_support import write

from dun.checks.ecosystems import detect
from dun.checks.jsenv import script_args
from dun.checks.jsproject import js_tools, package_manager
from dun.checks.looked import glob_paths, reads
from dun.checks.pyrunner import python_runner

DUN = str(Path(sys.executable).parent / "dun")


def package(root: Path, test: str, dev: dict[str, str] | None = None, **scripts: str) -> None:
    write(root, "package.json", json.dumps({"scripts": {"test": test, **scripts}, "devDependencies": dev or {}}))


@pytest.mark.parametrize(("test", "dev", "runner"), [
    ("node --test test/", {}, "node-test"),
    ("NODE_ENV=test node --experimental-vm-modules --test", {}, "node-test"),
    ("vitest run", {"vitest": "3"}, "vitest"),
    ("jest --coverage", {"jest": "30", "ts-jest": "29"}, "jest"),
    ("mocha 'spec/**/*.js' | tee out", {"mocha": "11", "chai": "5"}, "mocha"),
    ("ava", {"ava": "6"}, "ava"),
    ("tape test/*.js | tap-spec", {"tape": "5", "tap-spec": "5"}, "tape"),
    ("npm run build && vitest", {"vitest": "3", "jest": "30"}, "vitest"),  # the script says which one runs
    ("node --test", {"mocha": "10"}, "node-test"),
    ("npm run unit", {"jest": "30"}, "jest"),  # a script dun cannot read: the runner among the dependencies
])
def test_the_runner_is_the_one_the_test_script_runs(tmp_path: Path, test: str, dev: dict[str, str],
                                                    runner: str) -> None:
    package(tmp_path, test, dev)
    runners = [t for t in js_tools(tmp_path) if t in ("node-test", "vitest", "jest", "mocha", "ava", "tape")]
    assert runners == [runner]


def test_package_manager_from_the_lockfile_or_the_package_manager_field(tmp_path: Path) -> None:
    package(tmp_path, "jest")
    assert package_manager(tmp_path) == "npm"
    write(tmp_path, "yarn.lock", "")
    assert package_manager(tmp_path) == "yarn"
    write(tmp_path, "pnpm-lock.yaml", "")
    assert package_manager(tmp_path) == "pnpm"
    write(tmp_path, "package.json", json.dumps({"packageManager": "bun@1.2.0"}))
    assert package_manager(tmp_path) == "bun"


def test_script_arguments_keep_files_and_drop_reporters_and_pipes(tmp_path: Path) -> None:
    package(tmp_path, "mocha --reporter spec -R dot --recursive 'spec/**/*.js' | tee log && eslint .")
    assert script_args(tmp_path, "mocha") == "--recursive 'spec/**/*.js'"  # as written: mocha expands this glob
    package(tmp_path, "tape test/*.js -t 5")
    assert script_args(tmp_path, "tape") == "test/*.js -t 5"  # and the shell this one
    package(tmp_path, "FOO=1 node --test --test-reporter=spec test/")
    assert script_args(tmp_path, "node --test") == "test/"
    package(tmp_path, "vitest run --coverage")
    assert script_args(tmp_path, "vitest") == "--coverage"
    assert script_args(tmp_path, "jest") == ""


def test_typescript_and_lint_only_when_the_project_has_them(tmp_path: Path) -> None:
    package(tmp_path, "vitest", {"vitest": "3", "typescript": "5"})
    assert "typescript" not in js_tools(tmp_path)  # no tsconfig.json: nothing to type-check against
    write(tmp_path, "tsconfig.json", "{}")
    package(tmp_path, "vitest", {"vitest": "3", "typescript": "5"}, lint="eslint .")
    assert {"typescript", "lint-script"} <= set(js_tools(tmp_path))


def test_python_runner_from_the_projects_files(tmp_path: Path) -> None:
    write(tmp_path, "pyproject.toml", '[project]\nname = "x"\n')
    write(tmp_path, "tests/test_a.py", "def test_a():\n    assert True\n")
    assert python_runner(tmp_path) == "pytest"  # plain test functions need pytest
    write(tmp_path, "tests/test_a.py", "import unittest\n\nclass T(unittest.TestCase):\n    pass\n")
    assert python_runner(tmp_path) == "unittest"
    write(tmp_path, "requirements-dev.txt", "pytest>=8\n")
    assert python_runner(tmp_path) == "pytest"  # unittest classes run under pytest too when the project says so
    (tmp_path / "requirements-dev.txt").unlink()
    write(tmp_path, "tox.ini", "[testenv]\ncommands = python -m unittest discover -s tests\n")
    write(tmp_path, "tests/test_a.py", "def test_a():\n    assert True\n")
    assert python_runner(tmp_path) == "unittest"
    write(tmp_path, "tests/conftest.py", "")
    assert python_runner(tmp_path) == "pytest"
    (tmp_path / "tests/conftest.py").unlink()
    (tmp_path / "tox.ini").unlink()
    write(tmp_path, "tests/test_a.py", "import unittest\n")
    write(tmp_path, ".github/workflows/ci.yml", "jobs: {t: {steps: [{run: python -m pytest -q}]}}\n")
    assert python_runner(tmp_path) == "pytest"  # the project's CI runs pytest



def test_reads_names_every_path_an_answer_looked_at(tmp_path: Path) -> None:
    """What test-suites declares as its inputs: each file read or tested, each directory listed, nothing else."""
    write(tmp_path, "pyproject.toml", '[project]\nname = "x"\n')
    write(tmp_path, "tests/unit/test_a.py", "import unittest\n")
    write(tmp_path, ".github/workflows/ci.yml", "jobs: {}\n")
    runner, seen = reads(lambda: python_runner(tmp_path))
    assert runner == "unittest"
    rel = {str(Path(p).relative_to(tmp_path)) for p in seen}
    assert {"conftest.py", "tests/conftest.py", "pyproject.toml", ".github/workflows", ".github/workflows/ci.yml",
            "tests", "tests/unit", "tests/unit/test_a.py", "."} <= rel
    assert python_runner(tmp_path) == "unittest" and reads(lambda: None) == (None, [])  # nothing kept afterwards


def test_the_recorded_glob_finds_what_pathlib_finds(tmp_path: Path) -> None:
    for rel in ("test_a.py", "tests/test_b.py", "tests/x/y/test_c.py", "pkg/tests/test_d.py", ".hidden/tests/test_e.py",
                "tests/notatest.py", "tests/x/test_f.txt"):
        write(tmp_path, rel, "")
    for pattern in ("test_*.py", "tests/test_*.py", "tests/**/test_*.py", "*/tests/test_*.py", "missing/*.py"):
        assert glob_paths(tmp_path, pattern) == sorted(tmp_path.glob(pattern)), pattern

def test_detect_names_each_ecosystem_with_what_it_uses(tmp_path: Path) -> None:
    package(tmp_path, "jest", {"jest": "30"})
    write(tmp_path, "pnpm-lock.yaml", "")
    write(tmp_path, "Cargo.toml", "[package]\nname = 'x'\n")
    write(tmp_path, "go.mod", "module x\n")
    found = {e.name: (e.marker, e.tools, e.tests) for e in detect(tmp_path)}
    assert found == {"javascript": ("package.json", ["pnpm", "jest"], True), "rust": ("Cargo.toml", ["cargo"], True),
                     "go": ("go.mod", ["go"], True)}


def run_dun(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([DUN, *args], cwd=root, capture_output=True, text=True, timeout=120)


def test_init_says_which_ecosystems_and_checks_apply(repo: Path) -> None:
    package(repo, "mocha", {"mocha": "11"}, lint="eslint .")
    write(repo, "pyproject.toml", '[project]\nname = "x"\n')
    write(repo, "tests/test_a.py", "import unittest\n")
    write(repo, "Gemfile", "gem 'rspec'\n")
    write(repo, "spec/a_spec.rb", "")
    proc = run_dun(repo, "init")
    assert proc.returncode == 0, proc.stderr
    # node_modules is not installed: mocha's check will be an error until it is (js-lint runs npm's own script)
    assert "found javascript (package.json; uses npm, mocha, lint-script): checks mocha (an error until installed: " \
        "`npm ci`), js-lint\n" in proc.stdout, proc.stdout
    assert "found python (pyproject.toml; uses unittest): checks unittest, python-coverage\n" in proc.stdout
    assert "found Gemfile: a Ruby (rspec or minitest: `bundle exec rake test`) test suite; `dun check` warns" \
        in proc.stdout


def test_check_warns_about_a_test_suite_no_check_runs(repo: Path) -> None:
    package(repo, "karma start --single-run", {"karma": "6"})
    text = run_dun(repo, "check", "--only", "test-suites").stdout
    assert text.startswith("WARN  MEDIUM test-suites              a test suite dun cannot run: package.json: ")
    proc = run_dun(repo, "check", "--strict", "--format", "json", "--only", "test-suites")
    assert proc.returncode == 1, proc.stderr  # a warning: work remains under --strict
    [check] = json.loads(proc.stdout)["checks"]
    assert (check["status"], check["level"]) == ("warn", "MEDIUM")
    assert check["items"] == [{"file": "package.json", "line": None, "text": (
        "the `test` script runs `karma start --single-run`, which no built-in check reads (they read node-test, "
        "vitest, jest, mocha, ava, tape, bun-test)")}]
    assert "plugins: {disabled: [test-suites]}" in check["next"]
    summary = text.splitlines()[-1]  # exit 0, yet not "nothing actionable": the warning is said in the verdict
    assert summary.startswith("nothing failing, but 1 warning to read (test-suites; --strict makes it actionable)")
    package(repo, "vitest", {"vitest": "3"})
    [check] = json.loads(run_dun(repo, "check", "--format", "json", "--only", "test-suites").stdout)["checks"]
    assert (check["status"], check["signal"]) == ("pass", "every test suite found has a check (javascript)")


def test_no_test_suite_is_no_warning(repo: Path) -> None:
    write(repo, "package.json", json.dumps({"scripts": {"test": 'echo "Error: no test specified" && exit 1'}}))
    write(repo, "Makefile", "test:\n\techo none\n")  # a known ecosystem is there: its Makefile is not a suite
    [check] = json.loads(run_dun(repo, "check", "--format", "json", "--only", "test-suites").stdout)["checks"]
    assert (check["status"], check["signal"]) == ("skip", "no test suite found")


def test_js_programs_come_from_the_projects_own_node_modules(tmp_path: Path) -> None:
    from dun.checks.jsenv import expand_js, js_install_hint

    package(tmp_path, "mocha spec/", {"mocha": "11"})
    sub = tmp_path / "packages" / "web"
    write(sub, "package.json", json.dumps({"scripts": {"test": "vitest --run"}}))
    write(tmp_path, "node_modules/.bin/mocha", "#!/bin/sh\n").chmod(0o755)
    write(sub, "node_modules/.bin/vitest", "#!/bin/sh\n").chmod(0o755)
    assert expand_js("{js:mocha} {js-args:mocha} -R json", tmp_path, tmp_path) == (
        "node_modules/.bin/mocha spec/ -R json", None)
    # a package's own node_modules first, then the root's (a workspace hoists to the root)
    assert expand_js("{js:vitest} run {js-args:vitest}; {js:mocha}", tmp_path, sub) == (
        "node_modules/.bin/vitest run --run; ../../node_modules/.bin/mocha", None)
    assert expand_js("{js:jest}", tmp_path, tmp_path) == ("jest", "jest not installed (no node_modules/.bin/jest)")
    assert js_install_hint(tmp_path) == "Install the project's dependencies (`npm ci`), then re-run."
    write(tmp_path, ".pnp.cjs", "")  # Yarn Plug'n'Play: no node_modules, yarn runs the package's binary
    write(tmp_path, "yarn.lock", "")
    assert expand_js("{js:jest} --ci && {pm} run lint", tmp_path, tmp_path) == ("yarn jest --ci && yarn run lint",
                                                                             None)
