from __future__ import annotations

import marshal
import os
import time
from pathlib import Path

import pytest
from conftest import git, write

from dun.cli.commands.check import CheckOptions, build_report
from dun.core.cache import RACY_WINDOW_NS
from dun.core.cache.files import FileCache
from dun.core.cachedir import cache_dir_path
from dun.engine.session import open_session

PLUGIN = """\
id: p
checks:
  - {id: todos, type: files, rule: pattern-count, glob: ["**/*.py"], pattern: 'TODO', max: 0}
  - {id: boxes, type: checkboxes, files: ["plans/*.md"]}
"""


def age(path: Path) -> None:
    """Backdate a file past the racy window, as files are by the time a loop re-checks them."""
    os.utime(path, ns=(1_600_000_000_000_000_000, 1_600_000_000_000_000_000))


def signals(repo: Path) -> dict[str, str]:
    report = build_report(open_session(repo), CheckOptions(only=["p"]))
    return {r.id: r.signal for r in report.results}


@pytest.fixture
def project(repo: Path) -> Path:
    write(repo, ".dun/plugins/p.yaml", PLUGIN)
    age(write(repo, "src/a.py", "x = 1  # TODO one\n"))
    age(write(repo, "plans/one.md", "- [ ] first\n- [x] done\n"))
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "project")
    return repo


def cache_files(repo: Path) -> list[Path]:
    return sorted(Path(cache_dir_path(str(repo.resolve()))).glob("*-*.marshal"))


def test_results_are_cached_outside_the_repository(project: Path) -> None:
    first = signals(project)
    assert first["todos"].startswith("1 line(s) match")
    names = [p.name.split("-")[0] for p in cache_files(project)]
    assert "pattern" in names and "checkboxes" in names
    assert git(project, "status", "--porcelain") == ""  # nothing written into the repo
    assert signals(project) == first


def test_a_changed_file_is_read_again(project: Path) -> None:
    signals(project)
    path = project / "src/a.py"
    path.write_text("x = 1  # TODO one\ny = 2  # TODO two\n")
    age(path)  # same old mtime: the size still tells the change
    assert signals(project)["todos"].startswith("2 line(s) match")
    boxes = project / "plans/one.md"
    boxes.write_text("- [x] first\n- [x] done\n")  # same size, fresh mtime
    assert signals(project)["boxes"] == "2/2 boxes done"


def test_files_modified_just_now_are_not_stored(project: Path) -> None:
    write(project, "src/fresh.py", "# TODO fresh\n")
    signals(project)
    (todo_cache,) = [p for p in cache_files(project) if p.name.startswith("pattern-count")]
    assert marshal.loads(todo_cache.read_bytes())[3][0].split("\0") == ["src/a.py"]  # the paths' column


def test_a_corrupt_cache_is_ignored(project: Path) -> None:
    first = signals(project)
    for path in cache_files(project):
        path.write_text("{not json")
    assert signals(project) == first


def test_dun_no_cache_reads_nothing_and_stores_the_truth(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A box ticked keeping the file's size and mtime: a plain run may not see it (git's racy case, forced here by
    setting the mtime back), `DUN_NO_CACHE=1` must, and the next plain run then starts from what it found."""
    signals(project)
    boxes = project / "plans/one.md"
    before = os.stat(boxes)
    boxes.write_text("- [x] first\n- [x] done\n")  # same size
    os.utime(boxes, ns=(before.st_atime_ns, before.st_mtime_ns))
    monkeypatch.setenv("DUN_NO_CACHE", "1")
    assert signals(project)["boxes"] == "2/2 boxes done"
    monkeypatch.delenv("DUN_NO_CACHE")
    assert signals(project)["boxes"] == "2/2 boxes done"


def test_an_edit_reverted_by_git_is_read_again(project: Path) -> None:
    """An entry git vouched for at this commit is not trusted again once the file was changed in between: the
    revert gives it HEAD's content, and the cache the edited one's result."""
    first = signals(project)
    path = project / "src/a.py"
    path.write_text("x = 1  # TODO one\ny = 2  # TODO two\n")
    age(path)
    assert signals(project)["todos"].startswith("2 line(s) match")
    git(project, "checkout", "--", "src/a.py")
    age(path)
    assert signals(project) == first


def test_a_new_commit_is_not_vouched_for_by_the_old_one(project: Path) -> None:
    signals(project)
    path = project / "src/a.py"
    path.write_text("x = 1  # TODO one\ny = 2  # TODO two\n")
    age(path)
    git(project, "commit", "-qam", "two todos")
    assert signals(project)["todos"].startswith("2 line(s) match")


def vouched_after_put(tmp_path: Path, view: tuple[str, set[str], int], written_ns: int) -> object:
    path = tmp_path / "f.txt"
    path.write_text("content\n")
    os.utime(path, ns=(written_ns, written_ns))
    cache = FileCache(tmp_path, "unit", view=view)
    cache.put("f.txt", FileCache.stamp(path), "value", path)
    cache.save()
    return FileCache(tmp_path, "unit", view=view).vouched_many(["f.txt"]).get("f.txt")


def test_git_vouches_only_for_a_clean_file_written_before_its_look(tmp_path: Path) -> None:
    now = time.time_ns()
    old = now - 10 * RACY_WINDOW_NS
    assert vouched_after_put(tmp_path, ("c0ffee", set(), now), old) == "value"
    assert vouched_after_put(tmp_path, ("c0ffee", {"f.txt"}, now), old) is None  # git names it: changed
    assert vouched_after_put(tmp_path, ("c0ffee", set(), old), old) is None  # written as git looked


def test_a_vouched_entry_needs_the_same_commit(tmp_path: Path) -> None:
    now = time.time_ns()
    assert vouched_after_put(tmp_path, ("c0ffee", set(), now), now - 10 * RACY_WINDOW_NS) == "value"
    assert FileCache(tmp_path, "unit", view=("beef", set(), now)).vouched_many(["f.txt"]) == {}
    assert FileCache(tmp_path, "unit").vouched_many(["f.txt"]) == {}  # no view: only a stamp can tell


def test_entries_survive_the_columns_as_they_were_put(tmp_path: Path) -> None:
    """Values of every shape a check stores, commits and none, stamps with negative and large numbers: read back
    through a new cache (a new run) exactly as put, and dropped when outside `keep`."""
    now = time.time_ns()
    old = now - 10 * RACY_WINDOW_NS
    view = ("c0ffee", {"changed.txt"}, now)
    stamps = {f"f{i}.txt": (i, old - i, old, 2**40 + i, 0o100644) for i in range(6)}
    stamps["changed.txt"] = (9, -5, old, 7, 0o100644)
    values: dict[str, object] = {"f0.txt": ([], ""), "f1.txt": ([], ""), "f2.txt": ([[3, "TODO x"]], ""),
                                 "f3.txt": ("ok", 1.5, None), "f4.txt": {"a": [1, 2]}, "f5.txt": ([], ""),
                                 "changed.txt": ([], "binary")}
    cache = FileCache(tmp_path, "unit", view=view)
    for key, st in stamps.items():
        cache.put(key, st, values[key])  # no path: the entry is kept, but git does not vouch for it
    cache.save()
    again = FileCache(tmp_path, "unit", view=view)
    assert again.vouched_many(list(stamps)) == {}
    for key, st in stamps.items():
        assert again.get(key, st) == values[key]
        assert again.get(key, (st[0] + 1, *st[1:])) is None  # another stamp: a miss
    again.save()  # each clean entry is now vouched for at c0ffee (the changed one is not)
    third = FileCache(tmp_path, "unit", view=view)
    assert third.vouched_many(list(stamps)) == {k: v for k, v in values.items() if k != "changed.txt"}
    third.save(keep={"f2.txt", "f4.txt"})
    fourth = FileCache(tmp_path, "unit", view=view)
    assert fourth.vouched_many(list(stamps)) == {"f2.txt": values["f2.txt"], "f4.txt": values["f4.txt"]}


@pytest.mark.parametrize("payload", [
    ("a\0b", "1,2,3,4,5", ("c",), b"\0\0\0\0", ("v",), b"\0\0\0\0\0\0\0\0"),  # one stamp for two paths
    ("a", "1,2,3,4,5", ("c",), b"\1\0", ("v",), b"\0\0\0\0"),  # a commit index past the table
    ("a", "1,2,3,4,5", ("c",), b"\0\0", ("v",), b"\5\0\0\0"),  # a value index past the table
    ("a", "1,2,3,4,5", ("c",), b"\0", ("v",), b"\0\0\0\0"),  # half an index
    ("a", "1,2,3,4,5", ["c"], b"\0\0", ("v",), b"\0\0\0\0"),  # a list where a tuple belongs
    {"a": [[1, 2, 3, 4, 5], "v", "c"]},  # the layout before columns
])
def test_columns_of_another_shape_are_an_empty_cache(tmp_path: Path, payload: object) -> None:
    cache = FileCache(tmp_path, "unit", view=("c", set(), time.time_ns()))
    from dun.core.cache import VERSION
    from dun.core.cache.file import MAGIC

    cache.path.parent.mkdir(parents=True, exist_ok=True)
    cache.path.write_bytes(marshal.dumps((MAGIC, VERSION, "files:unit", payload)))
    again = FileCache(tmp_path, "unit", view=("c", set(), time.time_ns()))
    assert again.vouched_many(["a"]) == {}
    assert again.get("a", (1, 2, 3, 4, 5)) is None


def test_a_stamp_that_does_not_read_is_a_miss(tmp_path: Path) -> None:
    cache = FileCache(tmp_path, "unit")
    from dun.core.cache import VERSION
    from dun.core.cache.file import MAGIC

    cache.path.parent.mkdir(parents=True, exist_ok=True)
    payload = ("a", "1,2,x,4,5", (None,), b"\0\0", ("v",), b"\0\0\0\0")
    cache.path.write_bytes(marshal.dumps((MAGIC, VERSION, "files:unit", payload)))
    assert FileCache(tmp_path, "unit").get("a", (1, 2, 3, 4, 5)) is None


def test_the_same_paths_at_one_commit_are_vouched_for_at_once_less_the_changed(tmp_path: Path) -> None:
    """Asked for exactly the stored paths, all read at HEAD: every value comes back but for the files git names
    as changed; a commit that is not HEAD's, or other paths, still go entry by entry."""
    now = time.time_ns()
    old = now - 10 * RACY_WINDOW_NS
    paths = [f"f{i}.txt" for i in range(5)]
    cache = FileCache(tmp_path, "unit", view=("c0ffee", set(), now))
    for i, rel in enumerate(paths):
        path = tmp_path / rel
        path.write_text(f"content {i}\n")
        os.utime(path, ns=(old, old))
        cache.put(rel, FileCache.stamp(path), i, path)
    cache.save()
    values = {rel: i for i, rel in enumerate(paths)}
    assert FileCache(tmp_path, "unit", view=("c0ffee", {"f2.txt"}, now)).vouched_many(paths) == {
        k: v for k, v in values.items() if k != "f2.txt"}
    assert FileCache(tmp_path, "unit", view=("c0ffee", set(), now)).vouched_many(paths[1:]) == {
        k: v for k, v in values.items() if k != "f0.txt"}
    assert FileCache(tmp_path, "unit", view=("beef", set(), now)).vouched_many(paths) == {}
