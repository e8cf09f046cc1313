"""Cache truth where a stamp or git itself does not tell a change, each a cached run compared with a run with every
cache off: a clean filter that drops the content (git LFS-like) when dun runs the filters (DUN_GIT_FILTERS=1); an
`after:` chain run again within the racy window of the file the first check writes for the second."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import git, write
from test_cache_deps import age, agree, commit, only, result, rewrite_in_place

from dun.engine.model import Status
from dun.engine.session import open_session


def test_a_file_behind_a_clean_filter_that_drops_content_is_seen_with_filters_on(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DUN_GIT_FILTERS", "1")
    git(repo, "config", "filter.lfs.clean", "sh -c 'cat >/dev/null; echo pointer'")
    git(repo, "config", "filter.lfs.smudge", "cat")
    git(repo, "config", "filter.lfs.required", "true")
    only(repo)
    write(repo, ".dun/plugins/c.yaml", "id: c\nchecks:\n  - {id: c1, type: command, command: 'grep -q v1 big.bin', "
                                       "inputs: {}}\n")
    write(repo, ".gitattributes", "*.bin filter=lfs\n")
    write(repo, "big.bin", "v1\n")
    commit(repo)
    age(repo)
    assert result(repo, "c1").status is Status.PASS
    assert result(repo, "c1").cached
    assert git(repo, "status", "--porcelain") == ""
    for old, new in (("v1", "v2"), ("v2", "v1")):
        rewrite_in_place(repo / "big.bin", old, new)
        assert git(repo, "status", "--porcelain") == ""  # git compares "pointer" with "pointer"
        assert agree(repo, "c1").status is (Status.FAIL if new == "v2" else Status.PASS)
    assert result(repo, "c1").cached


PIPELINE = """\
id: pipe
checks:
  - {id: gen, type: command, command: 'mkdir -p out && cp src.txt out/report.txt', inputs: {}}
  - {id: use, type: command, command: 'grep -q ok out/report.txt', after: [gen], inputs: {files: [out/report.txt]}}
"""


def test_an_after_chain_run_again_within_the_racy_window_sees_its_file_spoiled(repo: Path) -> None:
    """gen writes out/report.txt, use reads it: use's input is always within the racy window of its look, so its
    result was never kept, and the next run reused gen and ran use alone on whatever was left in the file."""
    only(repo)
    write(repo, ".dun/plugins/pipe.yaml", PIPELINE)
    write(repo, ".gitignore", "out/\n")
    write(repo, "src.txt", "okk\n")
    commit(repo)
    age(repo)
    first = {r.id: r.cached for r in open_session(repo).report().results if r.id in ("gen", "use")}
    assert first == {"gen": False, "use": False}
    again = {r.id: r.cached for r in open_session(repo).report().results if r.id in ("gen", "use")}
    assert again == {"gen": True, "use": True}  # use kept on its report's content
    write(repo, "out/report.txt", "bad\n")  # within a second of gen writing it
    assert agree(repo, "use").status is Status.PASS
    assert agree(repo, "gen").status is Status.PASS
