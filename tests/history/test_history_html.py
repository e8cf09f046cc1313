"""`dun report`: the numbers it plots, a self-contained file, and the plots drawn in a real headless
Chromium (Debian's `chromium`; skipped with a message where it is missing)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from chromium_support import CHROMIUM_FLAGS, chromium
from fake_agent import block
from history_support import NO_CIRCUIT, T0, drive, dun, guard_line, iso, make_log, new_repo, write_run
from loop_support import idle, work

from dun.history.store import History
from dun.history.sync import sync
from dun.report_html.series import collect


def test_the_series_hold_each_iterations_numbers(tmp_path: Path) -> None:
    repo = new_repo(tmp_path / "repo")
    logs = [make_log("r1", 1, cost=0.1, before=("lint", "tests"), after=("lint", "tests")),
            make_log("r1", 2, cost=0.3, before=("lint", "tests"), after=("tests",),
                     found=({"kind": "phantom_changes", "detail": "nothing changed"},)),
            make_log("r1", 3, cost=None, status=None, error="boom", error_kind="other", before=("tests",),
                     after=("tests",), decision=("wait", "usage_limit"), wait_s=120.0)]
    base = write_run(repo, "r1", logs, budget_left_usd=0.6, cost_usd_total=0.4, stop_reason="circuit_open")
    (base / "logs" / "guard.jsonl").write_text(guard_line(iso(T0 + 1210)), encoding="utf-8")
    with History.open(repo) as history:
        sync(history)
        s = collect(history, 1)
    assert s.labels == ["#1", "#2", "#3"]
    assert s.cost == [0.1, 0.3, None] and s.cumulative == [0.1, 0.4, 0.4] and s.budget == [1.0] * 3
    assert s.actionable == [2, 1, 1] and s.duration_min == [0.5] * 3 and s.wait_min == [0, 0, 2.0]
    assert s.checks == ["lint", "tests"] and s.failing == [[1, 0, 0], [1, 1, 1]]
    assert sorted((m.lane, m.x) for m in s.markers) == [("agent error", "#3"), ("discrepancy", "#2"),
                                                         ("guard denial", "#2"), ("stop", "#3")]


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two scripted runs: the first stops on its budget after an unverified claim, the second completes."""
    pytest.importorskip("plotly", reason="plotly is not installed")
    repo = new_repo(tmp_path_factory.mktemp("html") / "repo", circuit=NO_CIRCUIT,
                    loop={"max_budget_usd": 0.5, "budget_per_iteration_usd": 0.1})
    lie = {"status": block(task="mission-boxes", status="COMPLETE", files=2), "cost_usd": 0.15}
    steps = [work("alpha", cost=0.1), lie, idle(cost_usd=0.2), work("beta", cost=0.05),
             work("gamma", cost=0.05, exit=True)]
    drive(repo, steps, "loop")
    drive(repo, steps, "loop", "--fresh")
    return repo


def test_the_html_report_is_one_file_that_needs_no_network(two_runs: Path, tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    proc = dun(two_runs, "report", "-o", str(out), "--runs", "2")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith(f"wrote {out} (") and "opens without a network" in proc.stdout
    text = out.read_text(encoding="utf-8")
    assert not re.search(r"<(script|link|img)[^>]+(src|href)=", text)  # nothing is fetched
    assert text.count("Plotly.newPlot(") == 1 and "budget" in text and "circuit_open" not in text
    assert 3_000_000 < len(text.encode()) < 8_000_000  # plotly.js inline is most of it
    assert dun(two_runs, "report", "--html").returncode == 0  # the spelling from before: the flag is ignored
    assert (two_runs / ".dun" / "report.html").is_file()


def test_the_plots_draw_in_headless_chromium(two_runs: Path, tmp_path: Path) -> None:
    browser = chromium()
    out = tmp_path / "report.html"
    assert dun(two_runs, "report", "-o", str(out), "--runs", "2").returncode == 0
    proc = subprocess.run([browser, *CHROMIUM_FLAGS, f"--user-data-dir={tmp_path / 'profile'}", "--dump-dom",
                           out.as_uri()], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    dom = proc.stdout
    console = [line for line in proc.stderr.splitlines() if ":CONSOLE" in line]
    assert console == [], console  # no script error, no warning
    assert dom.count('class="main-svg"') >= 2  # plotly drew its SVG layers
    for subplot in ("xy", "x2y2", "x3y3", "x4y4", "x5y5"):  # cost, burn-down, checks, durations, events
        assert f'class="subplot {subplot}"' in dom, subplot
    assert dom.count('class="trace bars"') == 3  # cost, agent time, waits
    for trace in ("cost", "cumulative", "budget", "actionable checks", "agent time", "discrepancy", "stop"):
        assert f'data-unformatted="{trace}"' in dom, trace  # each trace's legend entry was drawn
    assert dom.count('class="hm"') == 1  # the check heatmap
    labels = re.findall(r'data-unformatted="([0-9a-f]{6}#\d+)"', dom)
    assert len(set(labels)) == sum(json.loads((p / "state.json").read_text())["iteration"]
                                   for p in (two_runs / ".dun", *(two_runs / ".dun" / "archive").iterdir()))


def test_the_demo_night_writes_its_report(tmp_path: Path) -> None:
    """tests/history_demo.py, which `make demo` runs and which made docs/history-report.png."""
    pytest.importorskip("plotly", reason="plotly is not installed")
    demo = Path(__file__).resolve().parents[1] / "history_demo.py"
    proc = subprocess.run([sys.executable, str(demo), str(tmp_path)], capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr[-2000:]
    report = tmp_path / "repo" / ".dun" / "report.html"
    assert proc.stdout.splitlines()[-1].startswith(f"wrote {report} (")
    patterns = sorted(i["pattern"] for i in json.loads(dun(tmp_path / "repo", "review", "--json").stdout)["items"])
    assert patterns == ["box_attempts", "cost_outlier"]


def test_without_plotly_the_report_says_what_to_install(tmp_path: Path) -> None:
    repo = new_repo(tmp_path / "repo")
    write_run(repo, "r1", [make_log("r1", 1)])
    code = "import sys; sys.modules['plotly'] = None; from dun.cli.main import main; sys.exit(main(sys.argv[1:]))"
    proc = subprocess.run([sys.executable, "-c", code, "report"], cwd=repo, capture_output=True, text=True)
    assert proc.returncode == 2
    assert proc.stderr == ("dun: the HTML report needs plotly, which dun-loop depends on: pip install plotly (or "
                           "reinstall dun-loop)\n")
