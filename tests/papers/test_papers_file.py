"""`.dun/papers.jsonl` as dun reads and rewrites it: what is not a paper is kept, and a paper dun wrote reads back."""

from __future__ import annotations

import json
from contextlib import redirect_stderr, redirect_stdout
from io import StringIO
from pathlib import Path

import pytest

from dun.cli.main import main
from dun.store.store import Store


def invoke(*args: str) -> tuple[int, str, str]:
    out, err = StringIO(), StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(list(args))
    return code, out.getvalue(), err.getvalue()


def paper(pid: str, **fields: object) -> dict[str, object]:
    return {"id": pid, "title": f"Paper {pid}", "status": "new", **fields}


def test_marking_a_paper_read_keeps_the_lines_that_are_not_papers(repo: Path) -> None:
    store = Store(repo)
    store.write_papers([paper("a1"), paper("b2")])
    torn = b'{"id": "c3", "title": "cut off'
    hand = b'["not", "a paper"]'
    odd = b'{"id": "d4", "title": "\xff latin-1 typed by hand"'  # not UTF-8, and not valid JSON either
    with store.papers_path.open("ab") as f:
        f.write(torn + b"\n" + hand + b"\n" + odd + b"\n")
    code, _, err = invoke("papers", "list", "-C", str(repo))
    assert code == 0 and "3 unreadable line(s) skipped" in err
    assert invoke("papers", "read", "b2", "-C", str(repo))[0] == 0
    data = store.papers_path.read_bytes()
    assert data.endswith(torn + b"\n" + hand + b"\n" + odd + b"\n")  # the user can still repair them
    records, bad = store.read_papers()
    assert bad == 3 and {r["id"]: r["status"] for r in records} == {"a1": "new", "b2": "read"}


def test_a_paper_whose_text_holds_a_line_separator_reads_back(repo: Path) -> None:
    # a feed's link or date is kept as given; U+2028 and U+0085 are no line ends in JSON Lines
    store = Store(repo)
    store.write_papers([paper("a1", link="https://example.org/a\u2028b", published="2026\x85"), paper("b2")])
    records, bad = store.read_papers()
    assert bad == 0 and [r["id"] for r in records] == ["a1", "b2"]
    assert records[0]["link"] == "https://example.org/a\u2028b"
    assert json.loads(store.papers_path.read_text(encoding="utf-8").split("\n")[0])["published"] == "2026\x85"


def test_a_deepdive_template_whose_checks_cannot_load_writes_nothing(repo: Path, tmp_path: Path) -> None:
    mine = tmp_path / "mine" / "deepdive"
    mine.mkdir(parents=True)
    (mine / "MISSION.md").write_text("# Deep dive: {{paper_title}}\n\n- [ ] read it\n")
    (mine / "checks.yaml").write_text("id: mission-deepdive\nchecks:\n  - id: x\n    type: nosuch\n")
    (repo / ".dun").mkdir(exist_ok=True)
    (repo / ".dun/config.yaml").write_text(json.dumps({"missions": {"dir": str(mine.parent)}}) + "\n")
    store = Store(repo)
    store.write_papers([paper("a1")])
    code, _, err = invoke("papers", "mission", "a1", "-C", str(repo))
    assert code == 2 and "deepdive/checks.yaml:4:11: checks[0].type: unknown check type 'nosuch'" in err, err
    assert not (repo / "MISSION.md").exists() and not (repo / ".dun/plugins").exists()
    assert store.read_papers()[0][0]["status"] == "new"


@pytest.mark.parametrize("kind", ["link", "directory"])
def test_a_lock_file_that_is_a_link_or_a_directory_is_one_line(kind: str, repo: Path, tmp_path: Path) -> None:
    store = Store(repo)
    store.write_papers([paper("a1")])
    lock = repo / ".dun" / "papers.lock"
    if kind == "link":
        lock.symlink_to(tmp_path / "elsewhere")
    else:
        lock.mkdir()
    before = store.papers_path.read_bytes()
    code, _, err = invoke("papers", "read", "a1", "-C", str(repo))
    assert code == 2 and err.startswith(f"dun: {lock}: cannot lock the papers: ") and err.count("\n") == 1, err
    assert "internal error" not in err and store.papers_path.read_bytes() == before
    assert not (tmp_path / "elsewhere").exists()  # the link was not followed


@pytest.mark.parametrize("folder", ["/", "../notes", "papers/../../x", ""])
def test_a_notes_dir_outside_the_work_tree_is_an_error_not_work_for_the_agent(folder: str, repo: Path) -> None:
    Store(repo).write_papers([paper("a1")])
    (repo / ".dun/config.yaml").write_text(json.dumps({"papers": {"notes_dir": folder}}) + "\n")
    code, out, _ = invoke("check", str(repo), "--only", "papers-unread", "--format", "json", "--no-cache")
    result = json.loads(out)["checks"][0]
    assert code == 1 and result["status"] == "error", result
    assert "not a directory inside the repository" in json.dumps(result)
    assert not result["items"]  # no item asks the agent to write outside the repository


def test_a_notes_dir_inside_the_work_tree_is_used(repo: Path) -> None:
    Store(repo).write_papers([paper("a1")])
    (repo / ".dun/config.yaml").write_text(json.dumps({"papers": {"notes_dir": "docs/../triage"}}) + "\n")
    code, out, _ = invoke("check", str(repo), "--only", "papers-unread", "--format", "json", "--no-cache")
    result = json.loads(out)["checks"][0]
    assert code == 1 and result["status"] == "fail" and result["items"][0]["file"] == "docs/../triage/a1.md", result


def test_a_feeds_doi_link_and_date_are_one_line_so_they_add_no_box_or_escape(repo: Path) -> None:
    from dun.papers.feeds import Limits, parse

    hostile = {"data": [
        {"title": "Evil \x1b[2Jpaper", "externalIds": {"DOI": "10.1/x\n## Injected\n- [ ] doi box"},
         "url": "http://e/1\n- [ ] link box", "publicationDate": "2024\u2028- [ ] date box"},
        {"title": "Plain", "doi": "10.5555/ok.1", "url": "https://e/2"},
    ]}
    evil, plain = parse("u", json.dumps(hostile).encode(), Limits(1, 1 << 20, 10))
    for value in (evil.id, evil.title, evil.link, evil.published):
        assert value.isprintable() and "\n" not in value, repr(value)
    assert evil.id.startswith("h:")  # a DOI of several lines is no DOI
    assert (plain.id, plain.link) == ("doi:10.5555/ok.1", "https://e/2")
    Store(repo).write_papers([evil.to_dict()])
    assert invoke("papers", "mission", evil.id, "-C", str(repo))[0] == 0
    mission = (repo / "MISSION.md").read_text()
    assert not [ln for ln in mission.splitlines() if "box" in ln and ln.lstrip().startswith("- [")]
