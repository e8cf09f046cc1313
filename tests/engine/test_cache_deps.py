"""Cache truth for what a built-in check reads outside what git looks at: installed dependencies rewritten in place
(the project's site-packages, node_modules), each a cached run compared with a run with every cache off
(`DUN_NO_CACHE=1`, here `fresh=True`)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import git, write

from dun.engine.model import CheckResult, Status
from dun.engine.session import open_session

PLUGINS = ["python", "go", "git", "mission", "hooks", "beads", "helix", "javascript", "rust", "test-suites"]
OLD_NS = 1_600_000_000_000_000_000


def only(repo: Path, *enabled: str, more: str = "") -> None:
    disabled = ", ".join(p for p in PLUGINS if p not in enabled)
    write(repo, ".dun/config.yaml", f"plugins: {{disabled: [{disabled}]}}\n{more}")


def commit(repo: Path) -> None:
    git(repo, "add", "-A")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "setup")


def result(repo: Path, check: str, fresh: bool = False) -> CheckResult:
    return next(r for r in open_session(repo, fresh=fresh).report().results if r.id == check)


def agree(repo: Path, check: str) -> CheckResult:
    cached, fresh = result(repo, check), result(repo, check, fresh=True)
    assert (cached.status, cached.signal) == (fresh.status, fresh.signal)
    return cached


def age(base: Path) -> None:
    """Every file and directory dated back to one instant (out of the racy window); ctimes stay what they are."""
    for dirpath, dirnames, filenames in os.walk(base):
        dirnames[:] = [d for d in dirnames if d != ".git"]
        for name in [*filenames, *dirnames, "."]:
            os.utime(os.path.join(dirpath, name), ns=(OLD_NS, OLD_NS), follow_symlinks=False)


def rewrite_in_place(path: Path, old: str, new: str) -> None:
    """What an editor that saves in place does: open, truncate, write; same inode, same size, the mtime put back,
    and no directory's listing moves."""
    before, parent = path.stat(), path.parent.stat()
    text = path.read_text()
    assert len(old) == len(new) and old in text
    with open(path, "r+", encoding="utf-8") as fh:
        fh.truncate(0)
        fh.write(text.replace(old, new))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = path.stat()
    assert (after.st_ino, after.st_size, after.st_mtime_ns) == (before.st_ino, before.st_size, before.st_mtime_ns)
    assert path.parent.stat().st_mtime_ns == parent.st_mtime_ns


def runner_dir(tmp_path: Path) -> Path:
    """The pytest running these tests, and what it imports, linked into a directory of their own (a `.pth` file names
    it: the whole site-packages it comes from would be too large a walk)."""
    runner = tmp_path / "runner"
    runner.mkdir()
    site = Path(pytest.__path__[0]).parent
    for name in ("pytest", "_pytest", "pluggy", "iniconfig", "packaging", "pygments", "py.py"):
        if (site / name).exists():
            (runner / name).symlink_to(site / name)
    return runner


def test_a_site_packages_module_rewritten_in_place_is_seen_by_the_built_in_pytest(repo: Path, tmp_path: Path) -> None:
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(repo / ".venv")], check=True)
    (site,) = (repo / ".venv/lib").glob("python*/site-packages")
    write(site, "runner.pth", f"{runner_dir(tmp_path)}\n")
    write(site, "extpkg/__init__.py", "")
    write(site, "extpkg/sub/mod.py", "X = 1\n")
    only(repo, "python")
    write(repo, "pyproject.toml", "[tool.pytest.ini_options]\ntestpaths = ['tests']\n")
    write(repo, ".gitignore", ".venv/\n__pycache__/\n")
    write(repo, "tests/test_dep.py", "import extpkg.sub.mod as m\n\n\ndef test_x():\n    assert m.X == 1\n")
    commit(repo)
    age(tmp_path)
    assert result(repo, "pytest").status is Status.PASS
    assert result(repo, "pytest").cached
    for old, new in (("1", "2"), ("2", "1")):
        rewrite_in_place(site / "extpkg/sub/mod.py", f"X = {old}", f"X = {new}")
        assert agree(repo, "pytest").status is (Status.FAIL if new == "2" else Status.PASS)
    assert result(repo, "pytest").cached


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_a_node_modules_file_rewritten_in_place_is_seen_by_the_built_in_node_test(repo: Path) -> None:
    only(repo, "javascript")
    write(repo, "package.json", json.dumps({"name": "p", "scripts": {"test": "node --test"}}))
    write(repo, "package-lock.json", json.dumps({"name": "p", "lockfileVersion": 3, "packages": {}}))
    write(repo, "node_modules/dep/package.json", json.dumps({"name": "dep", "main": "lib/index.js"}))
    write(repo, "node_modules/dep/lib/index.js", "module.exports = { x: 1 };\n")
    write(repo, ".gitignore", "node_modules/\n")
    write(repo, "test/dep.test.js", "const test = require('node:test');\nconst assert = require('node:assert');\n"
                                    "test('dep', () => { assert.strictEqual(require('dep').x, 1); });\n")
    commit(repo)
    age(repo)
    assert result(repo, "node-test").status is Status.PASS
    assert result(repo, "node-test").cached
    for old, new in (("1", "2"), ("2", "1")):
        rewrite_in_place(repo / "node_modules/dep/lib/index.js", f"x: {old}", f"x: {new}")
        assert agree(repo, "node-test").status is (Status.FAIL if new == "2" else Status.PASS)
    assert result(repo, "node-test").cached


def test_a_tool_cache_written_beneath_a_declared_tree_does_not_stop_reuse(repo: Path) -> None:
    """`node_modules/.cache` and `.vite` (babel, eslint, vitest write there while they run) and `__pycache__` are
    made from the rest: a check that fills one on every run is still reused (once the run that made them is over:
    making one moves node_modules' own listing)."""
    only(repo, more="")
    write(repo, "node_modules/dep/index.js", "1\n")
    write(repo, ".gitignore", "node_modules/\n")
    write(repo, ".dun/plugins/c.yaml",
          "id: c\nchecks:\n  - id: fills\n    type: command\n    command: 'mkdir -p node_modules/.cache && date +%N "
          "> node_modules/.cache/x && mkdir -p node_modules/.vite && date +%N > node_modules/.vite/y'\n"
          "    inputs: {trees: [node_modules]}\n")
    commit(repo)
    age(repo)
    assert not result(repo, "fills").cached
    assert not result(repo, "fills").cached
    assert result(repo, "fills").cached
    write(repo, "node_modules/dep/extra.js", "2\n")  # a file added beneath is a change
    assert not result(repo, "fills").cached


def readme_overrides() -> str:
    """The README's example of `check.overrides`, as the user would copy it."""
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    (block,) = [b for b in readme.split("```yaml\n")[1:] if b.startswith("# .dun/config.yaml\ncheck:\n  overrides:")]
    return block.split("```", 1)[0]


def test_a_built_in_pytest_reading_a_file_under_home_is_reused_on_it_by_the_readme_override(
        repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    settings = write(home, ".config/myapp/settings.toml", "level = 1\n")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(repo / ".venv")], check=True)
    (site,) = (repo / ".venv/lib").glob("python*/site-packages")
    write(site, "runner.pth", f"{runner_dir(tmp_path)}\n")
    write(repo, "pyproject.toml", "[tool.pytest.ini_options]\ntestpaths = ['tests']\n")
    write(repo, ".gitignore", ".venv/\n__pycache__/\n")
    write(repo, "tests/test_home.py", "import os\n\n\ndef test_level():\n    path = os.path.expanduser("
                                      "'~/.config/myapp/settings.toml')\n"
                                      "    assert open(path).read() == 'level = 1\\n'\n")
    only(repo, "python", more=readme_overrides())
    commit(repo)
    age(tmp_path)
    assert result(repo, "pytest").status is Status.PASS
    assert result(repo, "pytest").cached
    for old, new in (("1", "2"), ("2", "1")):
        rewrite_in_place(settings, f"level = {old}", f"level = {new}")
        assert agree(repo, "pytest").status is (Status.FAIL if new == "2" else Status.PASS)
    assert result(repo, "pytest").cached


def test_an_override_of_a_check_no_plugin_defines_is_an_error(repo: Path) -> None:
    from dun.core.errors import ConfigError

    only(repo, "python", more="check:\n  overrides:\n    pytset: {ttl: 60}\n    go-test: {flaky: true}\n")
    with pytest.raises(ConfigError, match=r"check\.overrides\.pytset: no loaded plugin has a check 'pytset' "
                                          r"\(did you mean 'pytest'\?\)"):
        open_session(repo).report()
    only(repo, "python", more="check:\n  overrides:\n    pytest: {ttl: -1, inputs: {files: 3, colour: [x]}}\n")
    with pytest.raises(ConfigError) as raised:
        open_session(repo).report()
    text = "\n".join(raised.value.errors)
    for part in ("check.overrides.pytest.ttl: must be at least 0", "check.overrides.pytest.inputs.colour: unknown key"):
        assert part in text


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_a_linked_npm_dependency_outside_the_repository_is_looked_at(repo: Path, tmp_path: Path) -> None:
    """`npm link`, or a `file:`/`link:` dependency: node_modules/NAME is a link to a directory outside the repository,
    which node reads as the installed package."""
    only(repo, "javascript")
    lib = tmp_path / "lib"
    write(lib, "package.json", json.dumps({"name": "dep", "main": "index.js"}))
    write(lib, "index.js", "module.exports = { x: 1 };\n")
    write(repo, "package.json", json.dumps({"name": "p", "scripts": {"test": "node --test"},
                                            "dependencies": {"dep": "file:../lib"}}))
    write(repo, "package-lock.json", json.dumps({"name": "p", "lockfileVersion": 3, "packages": {}}))
    (repo / "node_modules/@scope").mkdir(parents=True)
    (repo / "node_modules/dep").symlink_to(lib)
    (repo / "node_modules/@scope/dep").symlink_to(lib)
    write(repo, ".gitignore", "node_modules/\n")
    write(repo, "test/dep.test.js", "const test = require('node:test');\nconst assert = require('node:assert');\n"
                                    "test('dep', () => { assert.strictEqual(require('dep').x, 1); });\n")
    commit(repo)
    age(tmp_path)
    assert result(repo, "node-test").status is Status.PASS
    assert result(repo, "node-test").cached
    rewrite_in_place(lib / "index.js", "x: 1", "x: 2")
    assert agree(repo, "node-test").status is Status.FAIL
    assert result(repo, "node-test").cached


def go_module(base: Path, rel: str, module: str, body: str) -> None:
    write(base, f"{rel}/go.mod", f"module {module}\n\ngo 1.18\n{body}")


@pytest.mark.skipif(shutil.which("go") is None, reason="go is not installed")
def test_go_replace_and_a_go_work_above_the_repository_are_looked_at(repo: Path, tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """`replace example.com/lib => ../lib` reads a module outside the repository; a go.work in a directory above it
    (go looks upward for one) changes which code builds."""
    monkeypatch.setenv("GOFLAGS", "-mod=mod")
    monkeypatch.setenv("GOPROXY", "off")
    monkeypatch.delenv("GOWORK", raising=False)
    outer = repo.parent
    go_module(outer, "lib", "example.com/lib", "")
    write(outer, "lib/lib.go", "package lib\n\nconst X = 1\n")
    go_module(outer, "lib2", "example.com/lib", "")
    write(outer, "lib2/lib.go", "package lib\n\nconst X = 2\n")
    only(repo, "go")
    go_module(repo, ".", "example.com/app", "\nrequire example.com/lib v0.0.0\n\nreplace example.com/lib => ../lib\n")
    write(repo, "app_test.go", 'package app\n\nimport (\n\t"testing"\n\n\t"example.com/lib"\n)\n\n'
                               'func TestX(t *testing.T) {\n\tif lib.X != 1 {\n\t\tt.Fatal("X is", lib.X)\n\t}\n}\n')
    commit(repo)
    age(outer)
    assert result(repo, "go-test").status is Status.PASS
    assert result(repo, "go-test").cached
    rewrite_in_place(outer / "lib/lib.go", "X = 1", "X = 3")
    assert agree(repo, "go-test").status is Status.FAIL
    rewrite_in_place(outer / "lib/lib.go", "X = 3", "X = 1")
    write(outer, "go.work", "go 1.18\n\nuse ./repo\n\nreplace example.com/lib => ./lib2\n")
    assert agree(repo, "go-test").status is Status.FAIL  # the go.work above, not lib (back to 1), decides


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_a_workspace_packages_own_node_modules_rewritten_in_place_is_seen(repo: Path) -> None:
    """npm installs a workspace package's dependency into its own node_modules when the root's holds another
    version: node reads it from there."""
    only(repo, "javascript")
    write(repo, "package.json", json.dumps({"name": "root", "private": True, "workspaces": ["packages/*"],
                                            "scripts": {"test": "node --test"}}))
    write(repo, "package-lock.json", json.dumps({"name": "root", "lockfileVersion": 3, "packages": {}}))
    write(repo, "packages/a/package.json", json.dumps({"name": "a", "dependencies": {"dep": "2.0.0"}}))
    write(repo, "packages/a/node_modules/dep/package.json", json.dumps({"name": "dep", "main": "index.js"}))
    write(repo, "packages/a/node_modules/dep/index.js", "module.exports = { x: 1 };\n")
    write(repo, ".gitignore", "node_modules/\n")
    write(repo, "packages/a/test/dep.test.js", "const test = require('node:test');\n"
                                               "const assert = require('node:assert');\n"
                                               "test('dep', () => { assert.strictEqual(require('dep').x, 1); });\n")
    commit(repo)
    age(repo)
    assert result(repo, "node-test").status is Status.PASS
    assert result(repo, "node-test").cached
    rewrite_in_place(repo / "packages/a/node_modules/dep/index.js", "x: 1", "x: 2")
    assert agree(repo, "node-test").status is Status.FAIL
    assert result(repo, "node-test").cached


def test_a_base_interpreters_package_rewritten_in_place_is_seen_by_a_venv_that_includes_it(
        repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A venv made with `--system-site-packages` (`include-system-site-packages = true` in pyvenv.cfg) imports the
    base interpreter's packages: one rewritten there is seen (the base here a real Python prefix of its own, its
    standard library linked from the running one's); the user's site-packages such a venv enables too, once made."""
    base = tmp_path / "base"
    stdlib = Path(os.__file__).parent
    (base / "bin").mkdir(parents=True)
    shutil.copy2(os.path.realpath(sys._base_executable), base / "bin/python3")  # found from its own place, as copied
    lib = base / "lib" / stdlib.name
    lib.mkdir(parents=True)
    for entry in stdlib.iterdir():
        if entry.name != "site-packages":
            (lib / entry.name).symlink_to(entry)
    write(lib, "site-packages/extpkg/__init__.py", "X = 1\n")
    write(lib, "site-packages/runner.pth", f"{runner_dir(tmp_path)}\n")
    subprocess.run([str(base / "bin/python3"), "-m", "venv", "--without-pip", "--system-site-packages",
                    str(repo / ".venv")], check=True)
    monkeypatch.setenv("PYTHONUSERBASE", str(tmp_path / "user"))
    only(repo, "python")
    write(repo, "pyproject.toml", "[tool.pytest.ini_options]\ntestpaths = ['tests']\n")
    write(repo, ".gitignore", ".venv/\n__pycache__/\n")
    write(repo, "tests/test_dep.py", "import extpkg as m\n\n\ndef test_x():\n    assert m.X == 1\n")
    commit(repo)
    age(tmp_path)
    assert result(repo, "pytest").status is Status.PASS
    assert result(repo, "pytest").cached
    rewrite_in_place(lib / "site-packages/extpkg/__init__.py", "X = 1", "X = 2")
    assert agree(repo, "pytest").status is Status.FAIL
    rewrite_in_place(lib / "site-packages/extpkg/__init__.py", "X = 2", "X = 1")
    assert agree(repo, "pytest").status is Status.PASS
    assert result(repo, "pytest").cached
    user = tmp_path / "user" / "lib" / stdlib.name / "site-packages"
    write(user, "extpkg/__init__.py", "X = 3\n")  # the user's site comes before the base's
    assert agree(repo, "pytest").status is Status.FAIL
