"""The paper watch against a local HTTP server serving recorded arXiv RSS, arXiv Atom and search-API JSON, and
feeds that fail every way a network can: malformed, huge (announced and not), slow, HTTP 500, connection refused,
a redirect to a file. A failure is one line naming the URL, never a traceback; the good feeds are still kept."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import redirect_stderr, redirect_stdout
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from conftest import git, write
from feed_server import FeedServer, refused, start, stop
from missions.mission_work import WORK, review

from dun.cli.main import main
from dun.papers.feeds import Limits, parse

GOOD = ("/arxiv-cs-se.rss", "/arxiv-query.atom", "/search.json")
TIMEOUT = 2.0  # generous: the good feed shares the host and the deadline on a loaded machine


@pytest.fixture(scope="module")
def feeds() -> Iterator[FeedServer]:
    server = start()
    yield server
    stop(server)


@pytest.fixture(scope="module")
def refused_url() -> str:
    return refused()


def invoke(*args: str) -> tuple[int, str, str]:
    out, err = StringIO(), StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(list(args))
    return code, out.getvalue(), err.getvalue()


def configure(repo: Path, feeds: list[str], **papers: Any) -> None:
    config = {"papers": {"feeds": feeds, "timeout_s": TIMEOUT, "max_bytes": 1024 * 1024, **papers},
              "plugins": {"disabled": ["example"]}}
    write(repo, ".dun/config.yaml", json.dumps(config) + "\n")


def stored(repo: Path) -> dict[str, dict[str, Any]]:
    lines = (repo / ".dun" / "papers.jsonl").read_text(encoding="utf-8").splitlines()
    return {r["id"]: r for r in map(json.loads, lines)}


def test_poll_records_each_paper_once_across_rss_atom_and_json(repo: Path, feeds: Any) -> None:
    configure(repo, [feeds.url(p) for p in GOOD])
    code, out, err = invoke("papers", "poll", "-C", str(repo))
    assert (code, err) == (0, ""), err
    assert f"{feeds.url('/arxiv-cs-se.rss')}: 4 entries, 4 new" in out
    assert f"{feeds.url('/arxiv-query.atom')}: 3 entries, 2 new" in out  # 2511.09876 came with the RSS
    assert f"{feeds.url('/search.json')}: 2 entries, 1 new" in out  # the untitled record is skipped
    papers = stored(repo)
    assert len(papers) == 7 and "7 papers, 7 unread" in out
    cochange = papers["arxiv:2511.09876"]
    assert cochange["feeds"] == [feeds.url(p) for p in GOOD]
    assert cochange["authors"] == ["Maria Keller", "Tomasz Nowak", "Priya Raman"]
    assert cochange["summary"].startswith("Coding agents that start")  # arXiv's "Announce Type" prefix dropped
    assert {"arxiv:cs/0112017", "doi:10.1109/icse.2025.00042", "arxiv:2509.01337"} <= set(papers)
    assert papers["arxiv:2510.04411"]["title"] == "Flaky Tests Under Load: A Replication"  # markup dropped

    again = invoke("papers", "poll", "-C", str(repo))
    assert again[0] == 0 and "4 entries, 0 new" in again[1] and len(stored(repo)) == 7

    code, out, _ = invoke("papers", "list", "-C", str(repo), "--unread")
    assert code == 0 and len(out.splitlines()) == 7 and "arxiv:2511.10002  new" in out
    code, out, _ = invoke("papers", "list", "-C", str(repo), "--json")
    assert {json.loads(line)["id"] for line in out.splitlines()} == set(papers)


@pytest.mark.parametrize(("path", "message"), [
    ("/malformed.rss", "not a well-formed feed (line 4: no element found), nothing recorded from it"),
    ("/page.html", "not a well-formed feed (line 2: syntax error)"),
    ("/external-entity.rss", "not a well-formed feed (line 2: syntax error)"),  # file:///etc/hostname never read
    ("/bad.json", "not valid JSON (Unterminated string"),
    ("/object.json", "JSON without a list of papers"),
    ("/huge.rss", "bytes, more than papers.max_bytes (1048576)"),
    ("/huge-unannounced.rss", "more than papers.max_bytes (1048576 bytes), not read further"),
    ("/error.rss", "HTTP 500 Internal Server Error"),
    ("/slow.rss", f"timed out after {TIMEOUT:g} s (papers.timeout_s)"),
    ("/redirect.rss", "HTTP 302"),
    ("/missing.rss", "HTTP 404 Not Found"),
])
def test_a_failing_feed_is_one_line_naming_its_url_and_the_good_one_is_kept(path: str, message: str, repo: Path,
                                                                           feeds: Any) -> None:
    bad, good = feeds.url(path), feeds.url("/arxiv-cs-se.rss")
    configure(repo, [bad, good])
    started = time.monotonic()
    code, out, err = invoke("papers", "poll", "-C", str(repo))
    assert time.monotonic() - started < TIMEOUT + 2  # bounded in time, whatever the server does
    assert code == 1 and err.startswith(f"dun: {bad}: ") and message in err and err.count("\n") == 1, err
    assert "Traceback" not in err and f"{good}: 4 entries, 4 new" in out
    assert len(stored(repo)) == 4


def test_the_feeds_of_one_host_are_read_one_after_the_other(repo: Path, feeds: Any) -> None:
    """A second request to a host waits for the first to end (here: the slow feed giving up)."""
    configure(repo, [feeds.url("/slow.rss"), feeds.url("/arxiv-cs-se.rss"), feeds.url("/slow.rss")])
    del feeds.requests[:]
    code, out, err = invoke("papers", "poll", "-C", str(repo))
    assert code == 1 and err.count("\n") == 1 and ": 4 entries, 4 new" in out  # a feed named twice is read once
    (first, slow_at), (second, rss_at) = feeds.requests
    assert (first, second) == ("/slow.rss", "/arxiv-cs-se.rss") and rss_at - slow_at >= TIMEOUT * 0.9


def test_a_refused_connection_and_a_url_that_is_not_http(repo: Path, refused_url: str) -> None:
    configure(repo, [refused_url])
    code, _, err = invoke("papers", "poll", "-C", str(repo))
    assert (code, err) == (1, f"dun: {refused_url}: connection refused\n")
    assert not (repo / ".dun" / "papers.jsonl").exists()  # nothing read, nothing written
    code, _, err = invoke("papers", "poll", "-C", str(repo), "--feed", "file:///etc/passwd")
    assert (code, err) == (2, "dun: file:///etc/passwd: not an http(s) URL\n")
    code, _, err = invoke("papers", "poll", "-C", str(repo), "--feed", "")
    assert code == 2 and err.count("\n") == 1
    configure(repo, [])
    code, _, err = invoke("papers", "poll", "-C", str(repo))
    assert code == 2 and "no feeds to poll: list them in papers.feeds" in err


def test_entries_and_papers_are_bounded(repo: Path, feeds: Any) -> None:
    configure(repo, [feeds.url("/many.rss")], max_entries=50, max_papers=60)
    assert invoke("papers", "poll", "-C", str(repo))[1].startswith(f"{feeds.url('/many.rss')}: 50 entries, 50 new")
    first = set(stored(repo))
    invoke("papers", "read", *sorted(first)[:20], "-C", str(repo))
    configure(repo, [feeds.url("/arxiv-cs-se.rss"), feeds.url("/arxiv-query.atom")], max_papers=52)
    code, out, _ = invoke("papers", "poll", "-C", str(repo))
    papers = stored(repo)  # 50 + 6 new = 56 > 52: four of the 20 read ones go, no unread one
    assert code == 0 and len(papers) == 52 and "52 papers, 36 unread" in out
    assert sum(p["status"] == "read" for p in papers.values()) == 16


def test_the_unread_check_lists_new_papers_until_each_is_settled(repo: Path, feeds: Any) -> None:
    configure(repo, [feeds.url("/arxiv-cs-se.rss")])
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "paper watch")
    code, out, _ = invoke("check", str(repo), "--only", "papers-unread")
    assert code == 0 and "no check applies here (1 skipped" in out  # no papers.jsonl yet: not applicable
    assert invoke("papers", "poll", "-C", str(repo))[0] == 0
    code, out, _ = invoke("check", str(repo), "--only", "papers-unread", "--format", "json")
    result = json.loads(out)["checks"][0]
    assert code == 1 and result["status"] == "fail" and len(result["items"]) == 4
    assert {"file": "papers/arxiv-2511-10002.md", "line": None,
            "text": "unread paper arxiv:2511.10002: Trust, but Verify: Auditing the Claims of Autonomous Programming "
                    "Agents (https://arxiv.org/abs/2511.10002): write papers/arxiv-2511-10002.md"} in result["items"]
    # an agent's triage note settles one, the operator's `read` two more (the result is never reused stale)
    write(repo, "papers/arxiv-2511-10002.md", "Relevant: it measures what dun checks.\n")
    assert invoke("papers", "read", "2511.09876", "arxiv:2510.04411", "-C", str(repo))[0] == 0
    code, out, _ = invoke("check", str(repo), "--only", "papers-unread", "--format", "json")
    left = json.loads(out)["checks"][0]["items"]
    assert code == 1 and [i["text"].split(":")[0:2] for i in left] == [["unread paper arxiv", "2511.10117"]]
    assert invoke("papers", "read", "2511.10117", "-C", str(repo))[0] == 0
    code, out, _ = invoke("check", str(repo), "--only", "papers-unread")
    assert code == 0 and "4 paper(s), none unread" in out
    code, _, err = invoke("papers", "read", "nope", "-C", str(repo))
    assert (code, err) == (2, "dun: no paper 'nope' (dun papers list shows the ids)\n")


def test_mission_writes_a_deep_dive_whose_checks_load_and_feed_text_adds_no_box(repo: Path, feeds: Any) -> None:
    configure(repo, [feeds.url("/arxiv-cs-se.rss")])
    assert invoke("papers", "poll", "-C", str(repo))[0] == 0
    code, out, err = invoke("papers", "mission", "2510.04411", "-C", str(repo))
    assert code == 0, err
    assert "wrote MISSION.md" in out and "wrote .dun/plugins/mission-deepdive.yaml" in out
    mission = (repo / "MISSION.md").read_text(encoding="utf-8")
    assert mission.startswith("# Deep dive: Flaky Tests Under Load: A Replication\n")
    assert "- link: https://arxiv.org/abs/2510.04411" in mission and "deepdive/arxiv-2510-04411.md" in mission
    # the abstract's "- [ ] ..." and "## Tasks" stay inside one quoted line: no box, no heading of the feed's
    from dun.checks.readers.markdown import parse_boxes

    boxes = [b.text for b in parse_boxes(mission, "MISSION.md")]
    assert len(boxes) == 7 and not any("Push to main" in b or "Ignore your" in b for b in boxes)
    assert "paths: [deepdive/arxiv-2510-04411.md]" in (repo / ".dun/plugins/mission-deepdive.yaml").read_text()
    code, out, _ = invoke("check", str(repo), "--format", "json")
    checks = {c["id"]: c["status"] for c in json.loads(out)["checks"]}
    assert code == 1 and checks["deepdive-notes"] == "fail" and checks["mission-boxes"] == "fail"
    assert stored(repo)["arxiv:2510.04411"]["status"] == "mission"
    code, _, err = invoke("papers", "mission", "2511.10002", "-C", str(repo))
    assert code == 2 and "MISSION.md and .dun/plugins/mission-deepdive.yaml already there: --force" in err
    code, out, _ = invoke("papers", "mission", "2511.10002", "-C", str(repo), "--force")
    assert code == 0 and "replaced MISSION.md (the previous one is MISSION.md.bak)" in out


def test_an_old_feed_with_html_entities_is_read_as_html(repo: Path, feeds: Any) -> None:
    """RSS 0.91 with Netscape's DOCTYPE and &eacute;: not well-formed XML, but what feeds in the wild look like."""
    configure(repo, [feeds.url("/netscape-0.91.rss")])
    code, out, err = invoke("papers", "poll", "-C", str(repo))
    assert (code, err) == (0, "") and ": 1 entries, 1 new" in out
    [paper] = stored(repo).values()
    assert (paper["title"], paper["summary"]) == ("Café paper", "x © y")


def test_parse_keeps_the_feeds_order_up_to_the_cap() -> None:
    body = (Path(__file__).parent / "fixtures" / "arxiv-cs-se.rss").read_bytes()
    assert [p.id for p in parse("u", body, Limits(1, 1 << 20, 2))] == ["arxiv:2511.09876", "arxiv:2511.10002"]


def test_a_scheduled_run_triages_the_new_papers_then_a_deep_dive_completes(repo: Path, feeds: Any, tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """The night's shape: `dun papers poll`, then `dun loop`: the papers-unread items are the agent's work (its
    notes settle them); then `dun papers mission ID` and a second loop does the deep dive to `complete`."""
    from fake_agent import FAKE_COMMAND, block, write_scenario

    from dun.checks.readers.markdown import parse_boxes

    configure(repo, [feeds.url("/arxiv-cs-se.rss")])
    config = json.loads((repo / ".dun/config.yaml").read_text())
    config.update(agent={"name": "command", "command": FAKE_COMMAND, "prompt_via": "stdin"},
                  loop={"cooldown_s": 0, "iteration_timeout_s": 30, "sandbox": "off", "max_iterations": 3})
    config["plugins"]["disabled"] = ["example", "python"]
    write(repo, ".dun/config.yaml", json.dumps(config) + "\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "nightly paper watch")
    assert invoke("papers", "poll", "-C", str(repo))[0] == 0
    slugs = ["arxiv-2511-09876", "arxiv-2511-10002", "arxiv-2510-04411", "arxiv-2511-10117"]
    triage = {"actions": [{"write": f"papers/{s}.md", "content": f"{s}: not for this repository.\n"} for s in slugs]
              + [{"commit": "Triage the new papers"}],
              "status": block(task="papers-unread", files=4, exit=True), "cost_usd": 0.05}
    monkeypatch.setenv("DUN_FAKE_SCENARIO", str(write_scenario(tmp_path / "night", [triage])))
    done = subprocess.run([sys.executable, "-m", "dun", "loop"], cwd=repo, capture_output=True, text=True,
                          timeout=120)
    state = json.loads((repo / ".dun/state.json").read_text())
    assert (done.returncode, state["stop_reason"]) == (0, "complete"), done.stderr
    prompt = (repo / ".dun/logs/iteration-1.prompt.md").read_text()
    assert "papers-unread" in prompt and "unread paper arxiv:2511.10117: Sandboxing Agent Tool Calls" in prompt

    assert invoke("papers", "mission", "2511.09876", "-C", str(repo))[0] == 0
    # an earlier dive's section is in the running review: this paper's is still to be merged beside it
    write(repo, "deepdive/REVIEW.md", review(("Sandboxing Agent Tool Calls", "arxiv-2511-10117")))
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "Deep dive into the co-change paper")
    code, out, _ = invoke("check", str(repo), "--format", "json")
    assert code == 1 and {c["id"]: c["status"] for c in json.loads(out)["checks"]}["deepdive-review"] == "fail"
    boxes = [b.text for b in parse_boxes((repo / "MISSION.md").read_text(), "MISSION.md") if not b.optional]
    notes = WORK["deepdive"]["deepdive/paper.md"]
    merged = review(("Sandboxing Agent Tool Calls", "arxiv-2511-10117"),
                    ("Co-change memory", "arxiv-2511-09876"))
    dive = {"actions": [{"write": "deepdive/arxiv-2511-09876.md", "content": notes},
                        {"write": "deepdive/REVIEW.md", "content": merged}]
            + [{"tick": "MISSION.md", "box": b} for b in boxes] + [{"commit": "Deep dive"}],
            "status": block(task="mission-boxes", files=2, exit=True), "cost_usd": 0.2}
    monkeypatch.setenv("DUN_FAKE_SCENARIO", str(write_scenario(tmp_path / "dive", [dive])))
    done = subprocess.run([sys.executable, "-m", "dun", "loop", "--fresh"], cwd=repo, capture_output=True, text=True,
                          timeout=120)
    state = json.loads((repo / ".dun/state.json").read_text())
    assert (done.returncode, state["stop_reason"]) == (0, "complete"), done.stderr
