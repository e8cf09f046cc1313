"""The tree look (dun/core/cache/tree.py): "nothing beneath changed since T", by find and by the Python walk that
stands in for it, on a real directory."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from dun.core.cache import tree
from dun.core.cache.tree import tree_look

OLD_NS = 1_600_000_000_000_000_000


@pytest.fixture(params=["find", "python"])
def walker(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "python":
        monkeypatch.setenv("PATH", "/nonexistent")  # no find: the Python walk answers
    return str(request.param)


def installed(base: Path) -> Path:
    (base / "pkg/sub").mkdir(parents=True)
    (base / "pkg/sub/mod.py").write_text("X = 1\n")
    (base / "pkg/__pycache__").mkdir()
    return base


def settled(base: Path, probe: Path) -> tuple[str, int]:
    """A look at `base` as of the newest ctime beneath it, once the filesystem's clock has moved past it (written
    files' ctimes come from a coarse clock: a write in the same tick would carry the same time)."""
    newest = max(os.lstat(os.path.join(d, n)).st_ctime_ns for d, dirs, files in os.walk(base) for n in [".", *dirs,
                                                                                                        *files])
    while True:  # not a sleep: waits for the clock the next write is stamped by to pass `newest`
        probe.write_text("")
        if probe.stat().st_ctime_ns > newest:
            return ("tree", newest)


def test_unchanged_holds_its_moment_and_an_in_place_rewrite_moves_it(tmp_path: Path, walker: str) -> None:
    site = installed(tmp_path / "site")
    assert tree_look(str(site), None)[0] == "tree"  # type: ignore[index]
    first = settled(site, tmp_path / "probe")
    assert tree_look(str(site), first) == first
    module = site / "pkg/sub/mod.py"
    before = module.stat()
    with open(module, "r+", encoding="utf-8") as fh:  # same inode, same size, the mtime put back
        fh.truncate(0)
        fh.write("X = 2\n")
    os.utime(module, ns=(before.st_atime_ns, before.st_mtime_ns))
    moved = tree_look(str(site), first)
    assert moved != first and isinstance(moved, tuple) and moved[0] == "tree"
    assert tree_look(str(tmp_path / "gone"), first) is None


def test_tool_caches_are_left_out_and_a_link_outside_is_followed(tmp_path: Path, walker: str) -> None:
    modules = installed(tmp_path / "node_modules")
    lib = tmp_path / "elsewhere/lib"
    lib.mkdir(parents=True)
    (lib / "index.js").write_text("1\n")
    (modules / "@scope").mkdir()
    (modules / "@scope/lib").symlink_to(lib)
    first = settled(tmp_path, tmp_path / "probe")
    os.utime(modules / "pkg/__pycache__", ns=(OLD_NS, OLD_NS))  # its ctime moves; it is pruned
    (modules / "pkg/__pycache__/mod.pyc").write_bytes(b"x")
    assert tree_look(str(modules), first) == first
    (lib / "index.js").write_text("2\n")
    assert tree_look(str(modules), first) != first


def test_a_find_that_takes_too_long_leaves_the_tree_unknown(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    site = installed(tmp_path / "site")
    first = settled(site, tmp_path / "probe")

    class Slow(subprocess.Popen[bytes]):
        def communicate(self, input: bytes | None = None, timeout: float | None = None) -> tuple[bytes, bytes]:
            if timeout is not None:
                raise subprocess.TimeoutExpired("find", timeout)
            return super().communicate()

    monkeypatch.setattr(tree.subprocess, "Popen", Slow)
    assert tree_look(str(site), first) != first
    walks = tree.Walks()
    walks.begin([("tree:" + str(site), first)])
    assert walks.look("tree:" + str(site), first) != first


def test_the_walks_of_a_run_take_each_tree_once_and_answer_as_its_look(tmp_path: Path, walker: str,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """A run compares several stored looks of one tree (each JavaScript check's inputs name node_modules, each as of
    its own moment): one walk since the earliest answers for all while nothing changed; after a change, a moment
    before it is changed and one after it is not, each as `tree_look` says."""
    modules = installed(tmp_path / "node_modules")
    lib = tmp_path / "elsewhere/lib"
    lib.mkdir(parents=True)
    (modules / "linked").symlink_to(lib)
    key = "tree:" + str(modules)
    first = settled(tmp_path, tmp_path / "probe")
    later = ("tree", first[1] + 1)
    walked: list[int] = []
    real = tree._changed
    monkeypatch.setattr(tree, "_changed", lambda path, since, begun=None: walked.append(since) or real(
        path, since, begun))
    walks = tree.Walks()
    walks.begin([(key, later), (key, first)])
    assert walks.look(key, later) == later and walks.look(key, first) == first
    assert walked == [first[1], first[1]]  # the tree and the directory its link leads to, once, since the earliest
    (lib / "index.js").write_text("1\n")  # outside, through the link
    after = settled(tmp_path, tmp_path / "probe")
    walked.clear()
    walks = tree.Walks()
    walks.begin([(key, first), (key, after)])
    moved = walks.look(key, first)
    assert moved != first and moved[0] == "tree"  # type: ignore[index]
    assert walks.look(key, after) == after == tree_look(str(modules), after)
    count = len(walked)
    assert walks.look(key, first) != first and len(walked) == count  # known changed since then: not walked again
    assert walks.look(key, later) != later  # a moment between: walked for on its own
    walks.close()
