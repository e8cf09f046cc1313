"""`dun check` on a Python project whose tests use unittest and no pytest: discovery honours `load_tests`
(doctests), subtests keep their parameters, a SyntaxError is one item at the broken line, and the signal carries
the runner's own counts. The project's own .venv runs it; pytest does not apply."""

from __future__ import annotations

from pathlib import Path

from checks_support import git, write
from test_real_projects import dun_json, make_venv, result

MATHX = '''\
def add(a, b):
    """Add.

    >>> add(1, 2)
    3
    >>> add(2, 2)
    5
    """
    return a + b
'''
TESTS = '''\
import doctest
import unittest

import pkg.mathx
from pkg.mathx import add


def load_tests(loader, tests, ignore):
    tests.addTests(doctest.DocTestSuite(pkg.mathx))
    return tests


class TestMath(unittest.TestCase):
    def test_adds(self):
        self.assertEqual(add(1, 1), 3)

    def test_sub(self):
        for i in range(3):
            with self.subTest(i=i, name="case"):
                self.assertLess(i, 1)

    def test_error(self):
        raise KeyError("missing")

    def test_ok(self):
        self.assertTrue(True)
'''
IMPORTER = "import unittest\n\nimport pkg.broken\n\n\nclass T(unittest.TestCase):\n    def test_x(self):\n" \
           "        pass\n"
# item text prefix -> (file, line, text the item must hold)
EXPECTED = {
    "SyntaxError: '(' was never closed": ("pkg/broken.py", 2, "(imported by tests.test_broken, tests.test_broken2)"),
    "tests.test_math.TestMath.test_adds": ("tests/test_math.py", 15, "AssertionError: 2 != 3"),
    "tests.test_math.TestMath.test_sub (i=1, name='case')": ("tests/test_math.py", 20, "1 not less than 1"),
    "tests.test_math.TestMath.test_sub (i=2, name='case')": ("tests/test_math.py", 20, "2 not less than 1"),
    "tests.test_math.TestMath.test_error": ("tests/test_math.py", 23, "KeyError: 'missing'"),
    "pkg.mathx.add (doctest)": ("pkg/mathx.py", 6, "Failed example:\n    add(2, 2)\nExpected:\n    5\nGot:\n    4"),
}


def project(root: Path, broken: bool = True) -> Path:
    write(root, "pyproject.toml", '[project]\nname = "pkg"\nversion = "0"\n')
    write(root, "pkg/__init__.py", "")
    write(root, "pkg/mathx.py", MATHX if broken else MATHX.replace("    5\n", "    4\n"))
    write(root, "tests/__init__.py", "")
    write(root, "tests/test_math.py", TESTS if broken else TESTS.split("    def test_adds")[0] +
          "    def test_ok(self):\n        self.assertTrue(True)\n")
    if broken:
        write(root, "pkg/broken.py", "def ok():\n    return (1,\n")
        write(root, "tests/test_broken.py", IMPORTER)
        write(root, "tests/test_broken2.py", IMPORTER)
    write(root, ".gitignore", ".venv/\n")
    make_venv(root, with_test_tools=False)
    git(root, "init", "-q", "-b", "main")
    return root


def test_unittest_failures_subtests_doctests_and_one_syntax_error(tmp_path: Path) -> None:
    data = dun_json(project(tmp_path / "p"), "--only", "python")
    assert result(data, "pytest")["status"] == "skip"
    assert result(data, "pytest")["signal"] == "not applicable: the project does not use pytest"
    check = result(data, "unittest")
    assert check["status"] == "fail"
    assert check["signal"].startswith("exit 1: 4 failed, 3 errors; 7 tests run; SyntaxError")
    assert len(check["items"]) == len(EXPECTED), check["items"]
    for prefix, (file, line, text) in EXPECTED.items():
        item = next((i for i in check["items"] if i["text"].startswith(prefix)), None)
        assert item is not None, (prefix, check["items"])
        assert (item["file"], item["line"]) == (file, line), item
        assert text in item["text"], item["text"]
    assert check["next"].startswith("Fix the failing tests listed")
    assert "-m unittest TEST_ID" in check["next"] and ".venv/bin/python" in check["next"]


def test_a_clean_unittest_project_is_clean(tmp_path: Path) -> None:
    data = dun_json(project(tmp_path / "clean", broken=False), "--only", "python")
    check = result(data, "unittest")
    assert (check["status"], check["signal"]) == ("pass", "exit 0: 2 tests run"), check


def test_with_pytest_a_syntax_error_is_one_item_at_the_broken_line_too(tmp_path: Path) -> None:
    root = tmp_path / "pytest-project"
    write(root, "pyproject.toml", '[project]\nname = "pkg"\nversion = "0"\n[tool.pytest.ini_options]\naddopts = "-q"\n')
    write(root, "pkg/__init__.py", "")
    write(root, "pkg/broken.py", "def ok():\n    return (1,\n")
    for name in ("test_one", "test_two"):
        write(root, f"tests/{name}.py", "import pkg.broken\n\n\ndef test_x():\n    assert True\n")
    write(root, ".gitignore", ".venv/\n")
    make_venv(root, with_test_tools=True)
    git(root, "init", "-q", "-b", "main")
    check = result(dun_json(root, "--only", "pytest"), "pytest")
    assert check["status"] == "fail"
    assert check["items"] == [{"file": "pkg/broken.py", "line": 2, "text": (
        "SyntaxError: '(' was never closed\n    return (1,\n           ^\n"
        "(imported by tests/test_one.py, tests/test_two.py)")}]
