"""Repeated runs: results cached per file must follow every edit, and the cache never dirties the repository.

Files are backdated past the cache's racy window (as they are by the time a loop re-checks them), so the first
run stores its per-file results and the second run has a cache to get wrong.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from checks_support import check, git, write

from dun.engine.model import Item, Status

OLD_NS = 1_600_000_000_000_000_000


def age(path: Path, step: int = 0) -> Path:
    """Give `path` an old mtime; a different `step` gives a different (still old) mtime."""
    stamp = OLD_NS + step * 1_000_000_000
    os.utime(path, ns=(stamp, stamp))
    return path


def cache_files(home: Path) -> list[Path]:
    return [p for p in (home / ".cache").rglob("*") if p.is_file() and p.name != "index.marshal"]  # not per-file


def test_checkboxes_follow_a_same_size_edit_after_a_cached_run(repo, isolated_home):
    mission = age(write(repo, "MISSION.md", "- [ ] first\n- [ ] second\n"))
    first = check(repo, "type: checkboxes")
    assert first.items == [Item("first", "MISSION.md", 1), Item("second", "MISSION.md", 2)]
    assert cache_files(isolated_home), "the first run should have cached the backdated file"
    mission.write_text("- [x] first\n- [ ] second\n")  # same size, new content
    age(mission, step=1)
    second = check(repo, "type: checkboxes")
    assert second.items == [Item("second", "MISSION.md", 2)]
    assert second.detail == "1/2 boxes done"


def test_checkboxes_cache_does_not_hide_a_change_of_optional_headings(repo):
    age(write(repo, "MISSION.md", "# M\n## Later\n- [ ] someday\n"))
    assert check(repo, "type: checkboxes").status is Status.FAIL
    assert check(repo, "type: checkboxes\noptional_headings: [Later]").status is Status.PASS
    assert check(repo, "type: checkboxes").status is Status.FAIL


def test_pattern_count_follows_edits_after_a_cached_run(repo, isolated_home):
    body = "type: files\nrule: pattern-count\nglob: '**/*.py'\npattern: TODO\nmax: 0"
    src = age(write(repo, "src/a.py", "x = 1  # TODO one\n"))
    age(write(repo, "src/b.py", "y = 2\n"))
    first = check(repo, body)
    assert first.items == [Item("x = 1  # TODO one", "src/a.py", 1)]
    assert cache_files(isolated_home)
    src.write_text("x = 1  # done one\n")
    age(src, step=1)
    age(write(repo, "src/b.py", "# TODO new\n"), step=2)
    second = check(repo, body)
    assert second.items == [Item("# TODO new", "src/b.py", 1)]


def test_pattern_count_cache_is_per_pattern(repo):
    age(write(repo, "notes.txt", "FIXME here\nTODO there\n"))
    todo = check(repo, "type: files\nrule: pattern-count\nglob: notes.txt\npattern: TODO\nmax: 0")
    fixme = check(repo, "type: files\nrule: pattern-count\nglob: notes.txt\npattern: FIXME\nmax: 0")
    assert todo.items == [Item("TODO there", "notes.txt", 2)]
    assert fixme.items == [Item("FIXME here", "notes.txt", 1)]


def test_cached_binary_file_is_still_reported_as_skipped(repo):
    age(write(repo, "data/ok.txt", "fine\n"))
    blob = repo / "data" / "blob.txt"
    blob.write_bytes(b"\x00binary")
    age(blob)
    body = "type: files\nrule: pattern-count\nglob: 'data/*'\npattern: nothing\nmax: 0"
    for _ in range(2):
        result = check(repo, body)
        assert result.status is Status.PASS
        assert "data/blob.txt (binary)" in result.detail


def test_coverage_report_regenerated_in_place_is_reread(repo, isolated_home):
    def report(missing: list[int]) -> str:
        executed = [n for n in range(1, 11) if n not in missing]
        return json.dumps({"files": {"m.py": {"executed_lines": executed, "missing_lines": missing,
                                              "summary": {"num_statements": 10}}}})

    old = report([1, 2, 3, 4, 5])
    data = age(write(repo, "coverage.json", old))
    first = check(repo, "type: coverage\nfile: coverage.json\nthreshold: 80")
    assert first.signal == "total 50.0% < 80% (coverage.json)"
    assert cache_files(isolated_home)
    new = report([1])
    data.write_text(new + " " * (len(old) - len(new)))  # the same size as before
    assert data.stat().st_size == len(old)
    age(data, step=1)
    second = check(repo, "type: coverage\nfile: coverage.json\nthreshold: 80")
    assert second.status is Status.PASS
    assert second.signal.startswith("90.0% of 10 statements")


def test_cached_runs_leave_the_repository_clean(repo):
    age(write(repo, "MISSION.md", "- [ ] task\n"))
    age(write(repo, "src/a.py", "# TODO\n"))
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "work")
    for _ in range(2):
        check(repo, "type: checkboxes")
        check(repo, "type: files\nrule: pattern-count\nglob: '**/*.py'\npattern: TODO\nmax: 0")
    assert git(repo, "status", "--porcelain", "--ignored") == ""


@pytest.mark.parametrize("value", ["1", "yes"])
def test_dun_no_cache_reads_no_cache_and_stores_what_it_found(repo, isolated_home, monkeypatch, value):
    age(write(repo, "MISSION.md", "- [ ] task\n"))
    assert check(repo, "type: checkboxes").status is Status.FAIL
    (stored,) = cache_files(isolated_home)
    stored.write_bytes(stored.read_bytes().replace(b"task", b"TASK"))  # a lie a plain run would repeat
    monkeypatch.setenv("DUN_NO_CACHE", value)
    fresh = check(repo, "type: checkboxes")
    assert fresh.status is Status.FAIL and "task" in fresh.items[0].text
    assert b"task" in stored.read_bytes()  # the truth was stored
