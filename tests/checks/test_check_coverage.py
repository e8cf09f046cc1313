"""The `coverage` check type over real coverage.py data (.coverage, `coverage xml`, `coverage json`)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from checks_support import check, manifest

from dun.engine.model import Item, Status

PARTIAL = """\
def sign(x):
    if x > 0:
        return 1
    return -1


def unused():
    a = 1
    b = 2
    return a + b
"""
GOOD = "def add(a, b):\n    return a + b\n"
GENERATED = "def g():\n    return 1\n"
DRIVER = """\
from gen.generated import g  # noqa: F401
from pkg.good import add
from pkg.partial import sign

add(1, 2)
sign(5)
"""
# good.py 2/2, partial.py 4/8 (missing 4, 8-10), generated.py 1/2 (missing 2): 7 of 12 statements = 58.3%
TOTAL = "58.3% of 12 statements in"
PARTIAL_ITEM = Item("50.0% covered; missing lines 4, 8-10", "pkg/partial.py", 4)
GENERATED_ITEM = Item("50.0% covered; missing lines 2", "gen/generated.py", 2)


def _coverage(root: Path, *args: str) -> None:
    subprocess.run([sys.executable, "-m", "coverage", *args], cwd=root, check=True, capture_output=True)


@pytest.fixture(scope="module")
def measured(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A plain project with real coverage data in all three coverage.py outputs (read-only for tests)."""
    root = tmp_path_factory.mktemp("cov") / "project"
    for rel, text in {"pkg/__init__.py": "", "pkg/good.py": GOOD, "pkg/partial.py": PARTIAL,
                      "gen/generated.py": GENERATED, "run.py": DRIVER}.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    _coverage(root, "run", "--source=pkg,gen", "run.py")
    _coverage(root, "xml", "-o", "coverage.xml")
    _coverage(root, "json", "-o", "coverage.json")
    assert (root / ".coverage").is_file()
    return root


@pytest.mark.parametrize("data_file", [".coverage", "coverage.xml", "coverage.json"])
def test_threshold_met_passes_for_every_coverage_py_format(measured, data_file):
    result = check(measured, f"type: coverage\nfile: {data_file}\nthreshold: 55")
    assert result.status is Status.PASS
    assert result.signal.startswith(TOTAL)
    assert result.signal.endswith(f"({data_file})")
    assert result.items == []


@pytest.mark.parametrize("data_file", [".coverage", "coverage.xml", "coverage.json"])
def test_threshold_missed_fails_listing_worst_files_with_missing_ranges(measured, data_file):
    result = check(measured, f"type: coverage\nfile: {data_file}\nthreshold: 80")
    assert result.status is Status.FAIL
    assert result.signal == f"total 58.3% < 80% ({data_file})"
    assert result.detail.startswith(TOTAL)
    # fully covered files are not listed; ties on percent put the file with more missing lines first
    assert result.items == [PARTIAL_ITEM, GENERATED_ITEM]
    assert result.next


def test_default_file_list_reads_the_first_that_exists(measured):
    result = check(measured, "type: coverage\nthreshold: 50")
    assert result.status is Status.PASS
    assert result.signal.endswith("(.coverage)")
    xml_first = check(measured, "type: coverage\nthreshold: 50\nfile: [nope.xml, coverage.xml, .coverage]")
    assert xml_first.signal.endswith("(coverage.xml)")


def test_file_threshold_lists_only_files_below_it(measured):
    result = check(measured, "type: coverage\nfile: coverage.xml\nthreshold: 50\nfile_threshold: 60")
    assert result.status is Status.FAIL
    assert result.signal == "2 file(s) below 60% (coverage.xml)"
    assert result.items == [PARTIAL_ITEM, GENERATED_ITEM]


def test_file_threshold_met_passes(measured):
    result = check(measured, "type: coverage\nfile: coverage.xml\nthreshold: 50\nfile_threshold: 50")
    assert result.status is Status.PASS


def test_both_thresholds_missed_name_both_problems(measured):
    result = check(measured, "type: coverage\nfile: coverage.json\nthreshold: 90\nfile_threshold: 75")
    assert result.status is Status.FAIL
    assert result.signal == "total 58.3% < 90%; 2 file(s) below 75% (coverage.json)"


def test_exclude_globs_leave_files_out_of_thresholds_and_items(measured):
    result = check(measured, """\
        type: coverage
        file: coverage.xml
        threshold: 60
        exclude: ['gen/**']
        """)
    assert result.status is Status.PASS
    assert result.signal == "60.0% of 10 statements in 3 files (coverage.xml)"
    failing = check(measured, "type: coverage\nfile: coverage.xml\nthreshold: 90\nexclude: 'gen/**'")
    assert failing.status is Status.FAIL
    assert failing.items == [PARTIAL_ITEM]


def test_max_items_limits_listed_files(measured):
    result = check(measured, "type: coverage\nfile: coverage.xml\nthreshold: 99\nmax_items: 1")
    assert result.items == [PARTIAL_ITEM]


# --- missing and broken data ------------------------------------------------------------------------------------


@pytest.mark.parametrize(("if_missing", "status"), [
    ("fail", Status.FAIL), ("warn", Status.WARN), ("skip", Status.SKIP),
])
def test_missing_data_file_follows_if_missing(repo, if_missing, status):
    result = check(repo, f"type: coverage\nfile: [coverage.xml, .coverage]\nif_missing: {if_missing}")
    assert result.status is status
    assert result.signal == "no coverage data: none of coverage.xml, .coverage exists"


def test_missing_data_defaults_to_fail_with_a_next_step(repo):
    result = check(repo, "type: coverage")
    assert result.status is Status.FAIL
    assert result.signal.startswith("no coverage data")
    assert result.next


def test_if_missing_rejects_other_values():
    parsed, errors = manifest("""\
        id: test
        checks:
          - id: c
            type: coverage
            if_missing: ignore
        """)
    assert parsed is None
    assert "checks[0].if_missing: must be one of 'fail', 'warn', 'skip', got 'ignore'" in errors[0]


def test_truncated_xml_is_an_error_naming_the_file(measured, repo):
    xml = (measured / "coverage.xml").read_text()
    (repo / "coverage.xml").write_text(xml[: len(xml) // 2])
    result = check(repo, "type: coverage\nfile: coverage.xml")
    assert result.status is Status.ERROR
    assert "coverage.xml" in result.signal
    assert "invalid XML" in result.signal
    assert result.next


def test_truncated_json_is_an_error_naming_the_file(measured, repo):
    text = (measured / "coverage.json").read_text()
    (repo / "coverage.json").write_text(text[: len(text) // 2])
    result = check(repo, "type: coverage\nfile: coverage.json")
    assert result.status is Status.ERROR
    assert "coverage.json" in result.signal
    assert "invalid JSON" in result.signal


def test_corrupt_coverage_database_is_an_error_naming_it(repo):
    (repo / ".coverage").write_bytes(b"this is not sqlite at all\n")
    result = check(repo, "type: coverage\nfile: .coverage")
    assert result.status is Status.ERROR
    assert ".coverage" in result.signal


def test_empty_data_file_is_an_error(repo):
    (repo / "coverage.xml").write_text("")
    result = check(repo, "type: coverage\nfile: coverage.xml")
    assert result.status is Status.ERROR
    assert "coverage.xml" in result.signal
    assert "empty" in result.signal


def test_wrong_explicit_format_is_an_error(measured):
    result = check(measured, "type: coverage\nfile: coverage.xml\nformat: lcov")
    assert result.status is Status.ERROR
    assert "coverage.xml" in result.signal


def test_failing_signal_never_shows_a_total_at_the_threshold(repo):
    # 1599 of 1999 statements covered = 79.99%
    missing = list(range(1, 401))
    executed = list(range(401, 2000))
    report = {"files": {"big.py": {"executed_lines": executed, "missing_lines": missing,
                                   "summary": {"num_statements": 1999}}}}
    (repo / "coverage.json").write_text(json.dumps(report))
    result = check(repo, "type: coverage\nfile: coverage.json\nthreshold: 80")
    if result.status is Status.FAIL:
        shown = re.match(r"total ([0-9.]+)% < 80%", result.signal)
        assert shown is not None, result.signal
        assert float(shown.group(1)) < 80
    else:  # treating 79.99 as meeting 80, as `coverage report --fail-under` does, is also consistent
        assert result.status is Status.PASS
        assert result.signal.startswith("80.0%")


def test_data_file_in_a_sibling_directory(measured, tmp_path):
    root = tmp_path / "repo"
    root.mkdir()
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "coverage.json").write_text((measured / "coverage.json").read_text())
    result = check(root, "type: coverage\nfile: ../out/coverage.json\nthreshold: 50")
    assert result.status is Status.PASS
    assert result.signal.endswith("(../out/coverage.json)")


def test_absolute_data_file_path_outside_the_repo(measured, tmp_path):
    root = tmp_path / "repo"
    root.mkdir()
    data = tmp_path / "ci-artifacts" / "coverage.json"
    data.parent.mkdir()
    data.write_text((measured / "coverage.json").read_text())
    result = check(root, f"type: coverage\nfile: '{data}'\nthreshold: 50")
    assert result.status is Status.PASS, result.signal
    assert "coverage.json" in result.signal


# --- coverage.py data the way `coverage report` counts it -------------------------------------------------------


def _report_total(root: Path, *args: str) -> float:
    out = subprocess.run([sys.executable, "-m", "coverage", "report", "--precision=1", *args], cwd=root,
                         check=True, capture_output=True, text=True).stdout
    return float(out.strip().splitlines()[-1].split()[-1].rstrip("%"))


def _dun_total(signal: str) -> float:
    match = re.match(r"(?:total )?([0-9.]+)%", signal)
    assert match, signal
    return float(match.group(1))


@pytest.fixture
def branchy(tmp_path: Path) -> Path:
    root = tmp_path / "branchy"
    for rel, text in {"pkg/__init__.py": "", "pkg/good.py": GOOD, "pkg/partial.py": PARTIAL, "run.py": DRIVER,
                      "gen/generated.py": GENERATED, ".coveragerc": "[run]\nbranch = True\nsource = pkg,gen\n"
                      }.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    return root


def test_branch_coverage_is_counted_as_coverage_report_counts_it(branchy):
    _coverage(branchy, "run", "run.py")
    result = check(branchy, "type: coverage\nfile: .coverage\nthreshold: 90")
    assert result.status is Status.FAIL
    assert _dun_total(result.signal) == _report_total(branchy)  # lines and branches, not lines alone
    assert "branches" in result.detail
    partial = next(i for i in result.items if i.file == "pkg/partial.py")
    assert "1 of 2 branches not taken" in partial.text


def test_parallel_data_files_are_combined_in_memory(branchy):
    write_driver = (branchy / "other.py")
    write_driver.write_text("from pkg.partial import sign\nsign(-1)\n", encoding="utf-8")
    _coverage(branchy, "run", "--parallel-mode", "run.py")
    _coverage(branchy, "run", "--parallel-mode", "other.py")
    parallel = {p: p.stat().st_mtime_ns for p in branchy.glob(".coverage.*")}
    assert not (branchy / ".coverage").exists() and len(parallel) == 2
    result = check(branchy, "type: coverage\nthreshold: 10")
    assert result.status is Status.PASS
    assert result.signal.endswith("(2 parallel files .coverage.*)")
    assert {p: p.stat().st_mtime_ns for p in branchy.glob(".coverage.*")} == parallel  # combined in memory only
    _coverage(branchy, "combine", "-q")
    assert _dun_total(result.signal) == _report_total(branchy)


def test_data_that_measured_nothing_fails_with_a_hint(repo):
    import coverage

    empty = coverage.CoverageData(basename=str(repo / ".coverage"))
    empty.add_lines({})
    empty.write()
    result = check(repo, "type: coverage\nfile: .coverage\nnext: Run make coverage.")
    assert result.status is Status.FAIL
    assert result.signal == "coverage data measured nothing: 0 statements in 0 files (.coverage)"
    assert "coverage run -m pytest" in result.detail
    assert result.next == "Run make coverage."


def test_a_failing_threshold_keeps_the_manifests_next(measured):
    result = check(measured, "type: coverage\nfile: coverage.xml\nthreshold: 90\nnext: Run `make cov` and add tests.")
    assert result.status is Status.FAIL
    assert result.next == "Run `make cov` and add tests."


def test_coverage_py_results_are_cached_per_data_fingerprint(branchy, monkeypatch):
    import os
    import time

    from dun.checks.readers import coverage as readers

    _coverage(branchy, "run", "run.py")
    old = time.time() - 60  # older than the cache's racy window
    for path in [branchy / ".coverage", *branchy.rglob("*.py"), branchy / ".coveragerc"]:
        os.utime(path, (old, old))
    first = check(branchy, "type: coverage\nthreshold: 10")
    calls = []
    real = readers.read_coveragepy_files

    def counting(*args, **kwargs):
        calls.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(readers, "read_coveragepy_files", counting)
    assert check(branchy, "type: coverage\nthreshold: 10").signal == first.signal
    assert calls == []  # answered from the cache
    (branchy / "pkg" / "good.py").write_text(GOOD + "\n\ndef more():\n    return 1\n", encoding="utf-8")
    changed = check(branchy, "type: coverage\nthreshold: 10")
    assert len(calls) == 1 and changed.signal != first.signal  # a changed source is analysed again


def test_a_cached_reading_judges_as_a_fresh_one(tmp_path, monkeypatch):
    """The cache keeps the totals and the ranking of the worst files: a cached run gives the fresh run's outcome,
    whatever `max_items`, `exclude` or `file_threshold` ask for (past the rows kept decoded too)."""
    import os
    import time

    lines = ['<?xml version="1.0" ?>', '<coverage line-rate="0.5" version="7.0">', "<packages><package><classes>"]
    for i in range(150):
        hits = "".join(f'<line number="{n}" hits="{1 if n % (i % 7 + 2) else 0}"/>' for n in range(1, 12))
        lines.append(f'<class filename="src/m{i:03d}.py"><lines>{hits}</lines></class>')
    lines.append("</classes></package></packages></coverage>")
    data = tmp_path / "coverage.xml"
    data.write_text("\n".join(lines), encoding="utf-8")
    old = time.time() - 60  # older than the cache's racy window, so the reading is kept
    os.utime(data, (old, old))
    bodies = ["threshold: 99", "threshold: 99\nmax_items: 100", "threshold: 10\nfile_threshold: 70\nmax_items: 3",
              "threshold: 99\nexclude: ['src/m1*.py']\nmax_items: 80"]
    def outcome(body: str) -> tuple[object, ...]:
        r = check(tmp_path, f"type: coverage\nfile: coverage.xml\n{body}")
        return r.status, r.signal, r.detail, r.items

    for body in bodies:
        monkeypatch.setenv("DUN_NO_CACHE", "1")
        fresh = outcome(body)
        monkeypatch.delenv("DUN_NO_CACHE")
        assert outcome(body) == outcome(body) == fresh, body  # the first stores the reading, the second reuses it
        assert len(fresh[3]) > 1
