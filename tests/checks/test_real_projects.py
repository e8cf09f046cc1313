"""`dun check` on real projects built here: a Python project with its own .venv and a Go module, run through the
real CLI under forced colour. Every failure the runner counts must be an item with the right file, line and
message, and the summary must carry the runner's own counts."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path
from typing import Any

import pytest
from checks_support import git, write

DUN = str(Path(sys.executable).parent / "dun")
COLOUR = {"PY_COLORS": "1", "FORCE_COLOR": "1", "CLICOLOR_FORCE": "1"}
LONG = "the value should have been three because every later step depends on it; " * 6

TESTS = f'''\
import pytest
from pkg import helper


def test_long_message():
    value = 2
    assert value == 3, "{LONG}"


class TestThing:
    def test_method(self):
        assert [1, 2, 3] == [1, 2, 4]

    def test_helper_fails_inside(self):
        helper.check(4)


@pytest.mark.parametrize("word", ["a b", "c d", "e f"], ids=["first case", "second case", "third case"])
def test_param(word):
    assert word == "a b"


@pytest.fixture
def broken():
    raise RuntimeError("fixture broke")


def test_fixture_error(broken):
    pass


def test_passes():
    assert True


@pytest.mark.skip(reason="not today")
def test_skipped():
    pass
'''
HELPER = 'def check(x):\n    assert x == 3, f"x should be three but was {x}"\n'
# test id -> (line of the failing statement, text the message must hold)
EXPECTED = {
    "tests/test_things.py::test_long_message": (7, LONG.strip()),
    "tests/test_things.py::TestThing::test_method": (12, "assert [1, 2, 3] == [1, 2, 4]"),
    "tests/test_things.py::TestThing::test_helper_fails_inside": (15, "x should be three but was 4"),
    "tests/test_things.py::test_param[second case]": (20, "assert 'c d' == 'a b'"),
    "tests/test_things.py::test_param[third case]": (20, "assert 'e f' == 'a b'"),
    "tests/test_things.py::test_fixture_error": (25, "RuntimeError: fixture broke"),
}


def make_venv(root: Path, with_test_tools: bool) -> None:
    """The project's own .venv: the running interpreter, seeing this suite's packages through a .pth file."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root / ".venv")], check=True)
    if with_test_tools:
        site = next((root / ".venv" / "lib").glob("python3*/site-packages"))
        (site / "dun_suite.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")


def decoy_python(tmp: Path) -> dict[str, str]:
    """PATH whose python3 is not the project's: a check that used it would fail loudly."""
    bin_dir = tmp / "decoy-bin"
    write(bin_dir, "python3", "#!/bin/sh\necho 'decoy python3 used' >&2\nexit 97\n").chmod(0o755)
    return {"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}


def dun_json(root: Path, *args: str, env: dict[str, str] | None = None) -> dict[str, Any]:
    proc = subprocess.run([DUN, "check", "--format", "json", *args], cwd=root, capture_output=True, text=True,
                          env={**os.environ, **COLOUR, **(env or {})}, timeout=300)
    assert proc.returncode in (0, 1), proc.stderr
    data: dict[str, Any] = json.loads(proc.stdout)
    return data


def result(data: dict[str, Any], check_id: str) -> dict[str, Any]:
    return next(c for c in data["checks"] if c["id"] == check_id)


@pytest.fixture(scope="module")
def python_project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("pyproj") / "project"
    write(root, "pyproject.toml", '[project]\nname = "pkg"\nversion = "0"\n[tool.pytest.ini_options]\n'
                                  'pythonpath = ["src"]\naddopts = "-ra"\n')
    write(root, "src/pkg/__init__.py", "")
    write(root, "src/pkg/helper.py", HELPER)
    write(root, "tests/test_things.py", TESTS)
    write(root, ".gitignore", ".venv/\n")
    make_venv(root, with_test_tools=True)
    git(root, "init", "-q", "-b", "main")
    return root


def runner_counts(root: Path) -> dict[str, int]:
    """pytest's own closing line, run the plain way."""
    proc = subprocess.run([str(root / ".venv/bin/python"), "-m", "pytest", "-q", "-p", "no:cacheprovider"],
                          cwd=root, capture_output=True, text=True)
    last = proc.stdout.strip().splitlines()[-1]
    return {word: int(n) for n, word in re.findall(r"(\d+) (failed|passed|skipped|errors?)", last)}


def test_pytest_failures_are_items_with_node_id_line_and_full_message(python_project: Path, tmp_path: Path) -> None:
    data = dun_json(python_project, "--only", "pytest", env=decoy_python(tmp_path))
    pytest_result = result(data, "pytest")
    assert pytest_result["status"] == "fail"
    items = {i["text"].split(": ", 1)[0]: i for i in pytest_result["items"]}
    assert set(items) == set(EXPECTED)
    for test_id, (line, message) in EXPECTED.items():
        item = items[test_id]
        assert (item["file"], item["line"]) == ("tests/test_things.py", line), test_id
        assert message in item["text"], test_id
        assert "\x1b" not in item["text"] and "#x1B" not in item["text"]
    helper = items["tests/test_things.py::TestThing::test_helper_fails_inside"]["text"]
    assert helper.endswith("at src/pkg/helper.py:2 in check")  # the traceback tail reaches the library code
    counts = runner_counts(python_project)
    assert counts == {"failed": 5, "passed": 2, "skipped": 1, "error": 1}
    assert pytest_result["signal"].startswith("exit 1: 5 failed, 1 error, 2 passed, 1 skipped; ")
    assert "\x1b" not in pytest_result["detail"]
    assert (python_project / ".dun/cache/pytest-junit.xml").is_file()  # the report pytest wrote, in dun's cache
    assert git(python_project, "status", "--porcelain", "--", ".dun") == ""  # .dun/cache ignores itself


def test_missing_test_runner_is_an_environment_error_with_a_setup_step(tmp_path: Path) -> None:
    root = tmp_path / "bare"
    write(root, "pyproject.toml", '[project]\nname = "bare"\nversion = "0"\n')
    write(root, "tests/test_x.py", "def test_x():\n    assert True\n")
    make_venv(root, with_test_tools=False)
    git(root, "init", "-q", "-b", "main")
    pytest_result = result(dun_json(root, "--only", "pytest"), "pytest")
    assert pytest_result["status"] == "error"
    assert pytest_result["signal"] == "pytest is not installed for .venv/bin/python (.venv)"
    assert pytest_result["level"] == "HIGH"
    assert "-m pip install pytest" in pytest_result["next"]


def test_iterate_never_says_all_pass_for_a_mistyped_check(python_project: Path) -> None:
    proc = subprocess.run([DUN, "iterate", "--only", "pytets"], cwd=python_project, capture_output=True, text=True)
    assert proc.returncode == 2
    assert "EXIT_SIGNAL" not in proc.stdout
    assert "--only 'pytets' matches no check (did you mean 'pytest'?)" in proc.stderr


# --- Go ---------------------------------------------------------------------------------------------------------

GO = shutil.which("go")
needs_go = pytest.mark.skipif(GO is None, reason="go is not installed (Debian: golang-go)")
GO_FILES = {
    "go.mod": "module example.com/calc\n\ngo 1.19\n",
    "calc.go": "package calc\n\nfunc Double(x int) int { return 2 * x }\n",
    "calc_test.go": 'package calc\n\nimport "testing"\n\nfunc TestDouble(t *testing.T) {\n'
                    '\tif Double(2) != 4 {\n\t\tt.Fatal("double")\n\t}\n}\n',
    "internal/ops/ops.go": "package ops\n\nfunc Add(a, b int) int { return a - b }\n",
    "internal/ops/ops_test.go": 'package ops\n\nimport "testing"\n\nfunc TestAdd(t *testing.T) {\n'
                                '\tif got := Add(1, 2); got != 3 {\n'
                                '\t\tt.Errorf("Add(1, 2) = %d, want 3\\nthe sum of one and two is three", got)\n'
                                "\t}\n}\n",
    "broken/broken.go": "package broken\n\nfunc F() int { return undefinedThing }\n",
    "internal/ops/example_test.go": 'package ops\n\nimport "fmt"\n\nfunc ExampleAdd() {\n'
                                    '\tfmt.Println(Add(2, 2))\n\t// Output: 4\n}\n',
    "vetted/vetted.go": 'package vetted\n\nfunc U() int {\n\treturn 1\n\tpanic("never")\n}\n',
}


@pytest.fixture(scope="module")
def go_env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """One build cache for the module's Go runs: the isolated HOME would otherwise rebuild the standard library."""
    base = tmp_path_factory.mktemp("go")
    return {"GOCACHE": str(base / "cache"), "GOPATH": str(base / "path"), "GOFLAGS": "-mod=mod",
            "GOTOOLCHAIN": "local"}


@needs_go
def test_go_failures_and_compile_errors_are_items_from_the_repository_root(tmp_path: Path,
                                                                            go_env: dict[str, str]) -> None:
    root = tmp_path / "gomod"
    for rel, text in GO_FILES.items():
        write(root, rel, text)
    git(root, "init", "-q", "-b", "main")
    data = dun_json(root, "--only", "go", env=go_env)
    go_test = result(data, "go-test")
    assert go_test["status"] == "fail"
    assert go_test["items"] == [
        {"file": "broken/broken.go", "line": 3, "text": "build error: undefined: undefinedThing"},
        {"file": "internal/ops/ops_test.go", "line": 7,
         "text": "TestAdd (example.com/calc/internal/ops): Add(1, 2) = -1, want 3\nthe sum of one and two is three"},
        {"file": "internal/ops/example_test.go", "line": 7,
         "text": "ExampleAdd (example.com/calc/internal/ops): got:\n0\nwant:\n4"},
    ]
    assert "2 failed, 1 passed; 1 package failed to build" in go_test["signal"]
    vet = result(data, "go-vet")  # its findings, not the compile error go-test lists already
    assert vet["status"] == "fail"
    assert [(i["file"], i["line"]) for i in vet["items"]] == [("vetted/vetted.go", 5)]
    assert vet["items"][0]["text"] == "unreachable code"
    assert result(data, "go-staticcheck")["status"] in ("skip", "pass", "fail")
    coverage = result(data, "go-coverage")  # not judged while the tests fail
    assert (coverage["status"], coverage["signal"]) == ("skip",
                                                        "no coverage data: none of .dun/cache/go-cover.out exists")


@needs_go
def test_go_coverage_is_judged_once_the_tests_pass(tmp_path: Path, go_env: dict[str, str]) -> None:
    root = tmp_path / "gobroken"
    write(root, "go.mod", "module example.com/b\n\ngo 1.19\n")
    write(root, "b.go", "package b\n\nfunc F() int { return nope }\n\nfunc G() int { return 2 }\n")
    write(root, "b_test.go", 'package b\n\nimport "testing"\n\nfunc TestF(t *testing.T) { F() }\n')
    git(root, "init", "-q", "-b", "main")
    data = dun_json(root, "--only", "go-test,go-vet,go-coverage", env=go_env)
    assert result(data, "go-test")["items"][0]["file"] == "b.go"
    assert result(data, "go-vet")["status"] == "pass"  # the compile error is go-test's item, once
    assert result(data, "go-coverage")["status"] == "skip"  # no "measured nothing, add tests" for a build error
    write(root, "b.go", "package b\n\nfunc F() int { return 1 }\n\nfunc G() int { return 2 }\n")
    data = dun_json(root, "--only", "go-test,go-coverage", env=go_env)
    assert result(data, "go-test")["status"] == "pass"
    coverage = result(data, "go-coverage")
    assert coverage["status"] == "fail" and coverage["signal"].startswith("total 50.0% < 80%"), coverage
