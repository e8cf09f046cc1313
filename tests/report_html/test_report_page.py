"""`dun report` answers "what happened tonight" from the top of the page: the outcome and the stop reason in words,
the command that goes on, the commits, the boxes ticked and the mission's progress, one row per iteration linking to
its prompt, answer and log; checked in the page headless Chromium renders (Debian's `chromium`; skipped with a
message where it is missing). docs/history-report.png is a screenshot of such a page."""

from __future__ import annotations

import re
import subprocess
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote

import pytest
from chromium_support import CHROMIUM_FLAGS, chromium
from history_support import NO_CIRCUIT, drive, dun, make_log, new_repo, write_run
from loop_support import idle, work

from dun.core.kinds import StopReason
from dun.loop.report import MEANING, RESUME

ROOT = Path(__file__).resolve().parents[2]


def rendered(page: Path, profile: Path) -> str:
    """The DOM Chromium built from the page, its scripts run; no console message allowed."""
    proc = subprocess.run([chromium(), *CHROMIUM_FLAGS, f"--user-data-dir={profile}", "--dump-dom", page.as_uri()],
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    console = [line for line in proc.stderr.splitlines() if ":CONSOLE" in line]
    assert console == [], console
    return proc.stdout


class _Texts(HTMLParser):
    """The visible text inside each element that has an id (nested ones included)."""

    VOID = frozenset({"br", "img", "input", "meta", "link", "hr", "col", "source", "wbr"})

    def __init__(self) -> None:
        super().__init__()
        self.open: list[str | None] = []
        self.texts: dict[str, list[str]] = {}

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in self.VOID:
            return
        element_id = dict(attrs).get("id")
        self.open.append(element_id)
        if element_id:
            self.texts.setdefault(element_id, [])

    def handle_endtag(self, tag: str) -> None:
        if tag not in self.VOID and self.open:
            self.open.pop()

    def handle_data(self, data: str) -> None:
        for element_id in filter(None, self.open):
            self.texts[element_id].append(data)


def text_of(dom: str, element_id: str) -> str:
    """The visible text of the element with `element_id`, spaces folded."""
    parser = _Texts()
    parser.feed(dom)
    assert element_id in parser.texts, element_id
    return " ".join(" ".join(parser.texts[element_id]).split())


@pytest.fixture(scope="module")
def stopped_night(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A run that ticks two of three boxes (two commits), then makes no progress until max_iterations stops it."""
    repo = new_repo(tmp_path_factory.mktemp("night") / "repo", circuit=NO_CIRCUIT, loop={"max_iterations": 4})
    proc = drive(repo, [work("alpha", cost=0.1), work("beta", cost=0.2), idle(), idle()], "loop")
    assert proc.returncode == 1, proc.stderr
    return repo


def test_every_stop_reason_has_words() -> None:
    assert set(MEANING) == set(StopReason) == set(RESUME)


def test_the_page_says_what_happened_why_it_stopped_and_how_to_go_on(stopped_night: Path, tmp_path: Path) -> None:
    out = tmp_path / "out" / "night.html"
    out.parent.mkdir()
    proc = dun(stopped_night, "report", "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    dom = rendered(out, tmp_path / "profile")
    outcome = text_of(dom, "outcome")
    assert outcome.startswith("Stopped after 4 iteration(s), $0.32 of $")
    assert "Why: it used every iteration it was allowed (loop.max_iterations)." in outcome
    assert "To go on: dun loop --max-iterations N with a higher N resumes the run" in outcome
    assert re.search(r"<code>dun loop --max-iterations N</code>", dom)  # the command, set as code
    stats = text_of(dom, "stats")
    assert "2 of 3 mission boxes done (0 before these runs)" in stats and "2 commits" in stats
    work_done = text_of(dom, "work")
    for line in ("Commits (2)", "Do alpha (#1)", "Do beta (#2)", "Boxes ticked (2)", "☑ alpha (#1)", "☑ beta (#2)"):
        assert line in work_done, (line, work_done)
    rows = re.findall(r"<tr><td>#(\d+)</td>", text_of_table(dom))
    assert rows == ["1", "2", "3", "4"]
    links = re.findall(r"<a href=\"([^\"]+)\">(prompt|answer|stderr|log)</a>", dom)
    assert {what for _, what in links} >= {"prompt", "answer", "log"}
    for href, _ in links:  # relative to where the page was written, and each one opens
        assert (out.parent / unquote(href)).resolve().is_file(), href
    assert 'data-unformatted="boxes done (of 3)"' in dom  # the mission's progress is drawn over the night


def text_of_table(dom: str) -> str:
    match = re.search(r"<table id=\"iterations\">(.*?)</table>", dom, re.S)
    assert match is not None
    return match.group(1)


def test_a_night_without_work_says_so_in_one_line(tmp_path: Path) -> None:
    """No commits, no boxes: one sentence, not two empty headings."""
    repo = new_repo(tmp_path / "repo")
    write_run(repo, "r1", [make_log("r1", 1), make_log("r1", 2)], stop_reason="circuit_open",
              circuit={"state": "OPEN", "reason": "no_progress", "no_progress": 3, "same_error": 0,
                       "last_error": None, "permission_denials": 0, "opened_at": 1.0})
    out = tmp_path / "report.html"
    assert dun(repo, "report", "-o", str(out)).returncode == 0
    page = out.read_text(encoding="utf-8")
    assert "<p id='work'>No commits and no boxes ticked in these runs.</p>" in page
    assert "Commits (" not in page and "Boxes ticked (" not in page
    assert ("Why: the circuit breaker opened: the agent kept failing to make progress (no_progress).") in page
    assert "<code>dun loop --reset-circuit</code>" in page


def test_the_screenshot_in_docs_is_a_small_png() -> None:
    shot = ROOT / "docs" / "history-report.png"  # tests/history_demo.py's night (`make demo` writes it)
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) < 400_000
    assert "(history-report.png)" in (ROOT / "docs" / "history.md").read_text(encoding="utf-8")
