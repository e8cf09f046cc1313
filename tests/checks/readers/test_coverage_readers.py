"""Tests for dun.checks.readers.coverage: real coverage.py output plus hand-written lcov and Go profiles."""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dun.checks.readers.coverage import (
    CoverageDataError,
    CoverageReport,
    FileCoverage,
    detect_format,
    line_ranges,
    read_coverage,
)

MOD = """\
from pkg import helper


def used(x):
    if x > 0:
        return "pos"
    return "neg"


def unused():
    a = 1
    return a


print(used(1), helper.twice(2))
"""

HELPER = """\
def twice(n):
    return n * 2


def never():
    raise SystemExit(1)
"""

# Statements / missing lines of the two modules above, as coverage.py measures them.
MOD_STATEMENTS, MOD_MISSING = 9, [7, 11, 12]
HELPER_STATEMENTS, HELPER_MISSING = 4, [6]


@dataclass
class Project:
    root: Path
    data: Path
    json: Path
    xml: Path


def _coverage(root: Path, *args: str) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("COVERAGE_")}
    subprocess.run(
        [sys.executable, "-m", "coverage", *args], cwd=root, env=env, check=True, capture_output=True
    )


def _make_project(root: Path, rc: str = "") -> Project:
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "helper.py").write_text(HELPER)
    (root / "mod.py").write_text(MOD)
    if rc:
        (root / ".coveragerc").write_text(rc)
    _coverage(root, "run", "mod.py")
    _coverage(root, "json", "-o", "cov.json")
    _coverage(root, "xml", "-o", "cov.xml")
    return Project(root, root / ".coverage", root / "cov.json", root / "cov.xml")


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Project:
    return _make_project(tmp_path_factory.mktemp("cov") / "proj")


def _by_path(report: CoverageReport) -> dict[str, tuple[int, list[int]]]:
    return {f.path: (f.statements, f.missing) for f in report.files}


EXPECTED = {
    "mod.py": (MOD_STATEMENTS, MOD_MISSING),
    "pkg/__init__.py": (0, []),
    "pkg/helper.py": (HELPER_STATEMENTS, HELPER_MISSING),
}


@pytest.mark.parametrize(("attr", "fmt"), [("data", "coveragepy"), ("json", "json"), ("xml", "cobertura")])
def test_real_coverage_py_outputs_agree(project: Project, attr: str, fmt: str) -> None:
    source: Path = getattr(project, attr)
    report = read_coverage(source, project.root)
    assert report.format == fmt
    assert report.source == str(source)
    assert report.skipped == []
    assert _by_path(report) == EXPECTED
    total = MOD_STATEMENTS + HELPER_STATEMENTS
    covered = total - len(MOD_MISSING) - len(HELPER_MISSING)
    assert report.percent == pytest.approx(100.0 * covered / total)
    assert read_coverage(source, project.root, fmt=fmt) == report


def test_paths_outside_root_stay_absolute(project: Project, tmp_path: Path) -> None:
    report = read_coverage(project.data, tmp_path)
    assert {f.path for f in report.files} == {
        (project.root / name).as_posix() for name in ("mod.py", "pkg/__init__.py", "pkg/helper.py")
    }


def test_coveragepy_skips_files_whose_source_is_gone(project: Project, tmp_path: Path) -> None:
    copy = tmp_path / "proj"
    shutil.copytree(project.root, copy)
    # The data file records absolute paths, so rewrite it into the copy by re-running there.
    (copy / ".coverage").unlink()
    _coverage(copy, "run", "mod.py")
    (copy / "pkg" / "helper.py").unlink()
    report = read_coverage(copy / ".coverage", copy)
    assert report.skipped == ["pkg/helper.py"]
    assert _by_path(report) == {"mod.py": (MOD_STATEMENTS, MOD_MISSING), "pkg/__init__.py": (0, [])}


def test_coveragepy_relative_files_and_project_exclusions(tmp_path: Path) -> None:
    rc = "[run]\nrelative_files = True\nbranch = True\n[report]\nexclude_also =\n    def unused\n"
    proj = _make_project(tmp_path / "proj", rc)
    # Read from a different working directory: the relative paths must resolve against root.
    assert Path.cwd() != proj.root
    reports = [read_coverage(src, proj.root) for src in (proj.data, proj.json, proj.xml)]
    # `def unused` and its body are excluded, leaving 6 statements and line 7 missing.
    for report in reports:
        assert _by_path(report)["mod.py"] == (6, [7])
        assert _by_path(report)["pkg/helper.py"] == (HELPER_STATEMENTS, HELPER_MISSING)


def test_cobertura_sources_and_merged_classes(tmp_path: Path) -> None:
    (tmp_path / "src" / "b").mkdir(parents=True)
    (tmp_path / "src" / "b" / "y.py").write_text("")
    xml = tmp_path / "coverage.xml"
    xml.write_text(
        '<?xml version="1.0" ?>\n<coverage version="1"><sources>'
        f"<source>{tmp_path / 'lib'}</source><source>src</source></sources><packages>"
        '<package name="a"><classes>'
        '<class name="x" filename="a/x.py"><methods><method name="f"><lines>'
        '<line number="3" hits="0"/></lines></method></methods>'
        '<lines><line number="1" hits="2"/><line number="3" hits="0"/><line number="4" hits="0"/></lines>'
        "</class>"
        '<class name="x2" filename="a/x.py"><lines><line number="4" hits="1.0"/><line number="9" hits="0"/>'
        "</lines></class>"
        '<class name="y" filename="b/y.py"><lines><line number="2" hits="5"/></lines></class>'
        "</classes></package></packages></coverage>"
    )
    report = read_coverage(xml, tmp_path)
    # a/x.py is found under no source, so the first one is used; b/y.py exists under "src".
    assert _by_path(report) == {"lib/a/x.py": (4, [3, 9]), "src/b/y.py": (1, [])}
    assert report.files[0].covered == 2
    assert report.percent == pytest.approx(60.0)


def test_large_cobertura_report(tmp_path: Path) -> None:
    n_files, n_lines = 5000, 12
    classes = []
    for i in range(n_files):
        lines = "".join(f'<line number="{n}" hits="{(n + i) % 3}"/>' for n in range(1, n_lines + 1))
        classes.append(f'<class name="m{i}" filename="pkg{i % 50}/m{i}.py"><lines>{lines}</lines></class>')
    xml = tmp_path / "coverage.xml"
    xml.write_text(
        f'<coverage><sources><source>{tmp_path}</source></sources><packages><package name="p"><classes>'
        + "".join(classes)
        + "</classes></package></packages></coverage>"
    )
    report = read_coverage(xml, tmp_path)
    assert len(report.files) == n_files
    assert sum(f.statements for f in report.files) == n_files * n_lines
    missing = sum(1 for i in range(n_files) for n in range(1, n_lines + 1) if (n + i) % 3 == 0)
    assert sum(len(f.missing) for f in report.files) == missing == 20000
    m7 = next(f for f in report.files if f.path == "pkg7/m7.py")
    assert m7.missing == [2, 5, 8, 11]


def test_lcov(tmp_path: Path) -> None:
    info = tmp_path / "lcov.info"
    info.write_text(
        "TN:unit\n"
        f"SF:{tmp_path}/src/a.js\nFN:1,f\nFNDA:1,f\nDA:1,1\nDA:2,0\nDA:3,4,abc123\nDA:5,0\nLF:99\nLH:0\n"
        "end_of_record\n"
        "TN:e2e\n"
        "SF:src/a.js\nDA:2,3\nend_of_record\n"
        "SF:lib\\b.js\nBRDA:1,0,0,1\nDA:1,0\nend_of_record\n"
    )
    report = read_coverage(info, tmp_path)
    assert report.format == "lcov"
    # The second record for src/a.js covers line 2; LF/LH are ignored in favour of DA lines.
    assert _by_path(report) == {"lib/b.js": (1, [1]), "src/a.js": (4, [5])}
    assert report.percent == pytest.approx(60.0)


GO_PROFILE = """\
mode: count
example.com/proj/main.go:3.13,5.2 2 1
example.com/proj/main.go:7.20,9.16 2 0
example.com/proj/main.go:9.16,11.3 1 0
example.com/proj/main.go:7.20,9.16 2 3
example.com/proj/main.go:12.2,12.10 1 0
example.com/proj/main.go:14.1,15.2 0 0
example.com/proj/pkg/util.go:3.20,6.2 3 0
other.org/lib/x.go:1.1,2.2 1 1
"""


def test_go_coverprofile(tmp_path: Path) -> None:
    (tmp_path / "go.mod").write_text("// comment\nmodule example.com/proj // trailing\n\ngo 1.22\n")
    profile = tmp_path / "coverage.out"
    profile.write_text(GO_PROFILE)
    report = read_coverage(profile, tmp_path)
    assert report.format == "go"
    files = {f.path: f for f in report.files}
    assert sorted(files) == ["main.go", "other.org/lib/x.go", "pkg/util.go"]
    main = files["main.go"]
    # The repeated 7-9 block is covered by its second occurrence; line 9 is shared with a covered block.
    assert (main.statements, main.missing, main.covered) == (6, [10, 11, 12], 4)
    assert main.percent == pytest.approx(400 / 6)
    util = files["pkg/util.go"]
    assert (util.statements, util.missing, util.covered) == (3, [3, 4, 5, 6], 0)
    assert (files["other.org/lib/x.go"].statements, files["other.org/lib/x.go"].missing) == (1, [])
    assert report.percent == pytest.approx(50.0)


def test_go_without_go_mod_keeps_import_paths(tmp_path: Path) -> None:
    profile = tmp_path / "cover.profile"
    profile.write_text("mode: set\nexample.com/proj/main.go:3.13,5.2 2 1\n")
    report = read_coverage(profile, tmp_path)
    assert _by_path(report) == {"example.com/proj/main.go": (2, [])}


def test_line_ranges() -> None:
    assert line_ranges([1, 2, 3, 7, 9, 10]) == "1-3, 7, 9-10"
    assert line_ranges([]) == ""
    assert line_ranges([5]) == "5"
    assert line_ranges([10, 9, 9, 1]) == "1, 9-10"


@given(st.lists(st.integers(min_value=1, max_value=200)))
def test_line_ranges_round_trips(lines: list[int]) -> None:
    expanded: list[int] = []
    for part in filter(None, line_ranges(lines).split(", ")):
        lo, _, hi = part.partition("-")
        expanded.extend(range(int(lo), int(hi or lo) + 1))
    assert expanded == sorted(set(lines))


def test_percent_of_nothing_is_full() -> None:
    assert FileCoverage("a.py", 0, []).percent == 100.0
    assert CoverageReport("json", "x.json", []).percent == 100.0
    assert FileCoverage("a.py", 4, [1]).percent == 75.0


@pytest.mark.parametrize(
    ("name", "content", "fmt"),
    [
        (".coverage.host.123.abc", b"SQLite format 3\x00rest", "coveragepy"),
        ("data.db", b"SQLite format 3\x00rest", "coveragepy"),
        (".coverage", b"garbage", "coveragepy"),
        ("report.txt", b'\xef\xbb\xbf{"meta": {"format": 3}, "files": {}}', "json"),
        ("coverage.json", b'{"me', "json"),
        ("cov.xml", b'<?xml version="1.0" ?>\n<coverage line-rate="1">', "cobertura"),
        ("broken.xml", b"<not-closed", "cobertura"),
        ("out", b"TN:\nSF:a.c\n", "lcov"),
        ("out2", b"SF:a.c\nDA:1,1\n", "lcov"),
        ("lcov.info", b"garbage", "lcov"),
        ("x.lcov", b"garbage", "lcov"),
        ("coverage.out", b"mode: atomic\n", "go"),
        ("c.txt", b"mode: set\r\na.go:1.1,2.2 1 1\r\n", "go"),
    ],
)
def test_detect_format(tmp_path: Path, name: str, content: bytes, fmt: str) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    assert detect_format(path) == fmt


def _assert_error(path: Path, fmt: str = "auto", contains: str = "") -> str:
    with pytest.raises(CoverageDataError) as info:
        read_coverage(path, path.parent, fmt=fmt)
    message = str(info.value)
    assert message.startswith(f"{path}: ")
    assert "\n" not in message
    assert contains in message
    return message


@pytest.mark.parametrize("fmt", ["auto", "coveragepy", "json", "cobertura", "lcov", "go"])
def test_missing_and_empty_files(tmp_path: Path, fmt: str) -> None:
    _assert_error(tmp_path / "nope.json", fmt, "No such file or directory")
    empty = tmp_path / "coverage.xml"
    empty.write_bytes(b"")
    _assert_error(empty, fmt, "empty file")
    with pytest.raises(CoverageDataError, match="empty file"):
        detect_format(empty)


BILLION_LAUGHS = b"""<?xml version="1.0"?>
<!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">]>
<coverage><packages/><lol>&lol2;</lol></coverage>"""


@pytest.mark.parametrize(
    ("name", "content", "fmt", "cause"),
    [
        ("unknown.dat", b"hello world\n", "auto", "unknown coverage format"),
        ("cov.json", b"{}", "yaml", "unknown coverage format 'yaml'"),
        ("cov.json", b'{"meta": {"format": 3}, "files": {"a.py": {"executed_', "auto", "invalid JSON"),
        ("cov.json", b'{"meta": {}, "files": {"a.py": {"summary": {}}}}', "auto", "malformed"),
        ("cov.json", b'{"meta": {}, "files": {"a.py": {"missing_lines": ["x"]}}}', "auto", "malformed"),
        ("cov.json", b'{"meta": {}}', "auto", "no 'files' object"),
        ("cov.json", b"[1, 2]", "json", "no 'files' object"),
        ("cov.json", b'{"files": "\xff\xfe"}', "json", "invalid JSON"),
        ("coverage.xml", b'<?xml version="1.0" ?>\n<coverage><packages><package', "auto", "invalid XML"),
        ("coverage.xml", b"<report><x/></report>", "auto", "not a Cobertura report"),
        (
            "coverage.xml",
            b'<coverage><class filename="a.py"><lines><line number="x" hits="1"/></lines></class></coverage>',
            "auto",
            "malformed Cobertura",
        ),
        ("coverage.xml", b"<coverage><class><lines/></class></coverage>", "auto", "without filename"),
        (
            "coverage.xml",
            b'<coverage><class filename="a"><lines><line number="1"/></lines></class></coverage>',
            "auto",
            "bad hit count None",
        ),
        ("coverage.xml", BILLION_LAUGHS, "auto", "DOCTYPE"),
        ("coverage.xml", b'<coverage><!ENTITY x "y"></coverage>', "cobertura", "ENTITY"),
        ("coverage.xml", "<!DOCTYPE x><coverage/>".encode("utf-16"), "cobertura", "DOCTYPE"),
        (".coverage", b"this is not sqlite", "auto", "not a SQLite database"),
        ("lcov.info", b"SF:a.c\nDA:1,1\nthis is garbage\nend_of_record\n", "auto", "line 3"),
        ("lcov.info", b"SF:a.c\nDA:one,1\nend_of_record\n", "auto", "line 2"),
        ("lcov.info", b"DA:1,1\n", "lcov", "DA outside an SF record"),
        ("lcov.info", b"TN:\nSF:a.c\nDA:1,1\nDA:2,0\n", "auto", "no end_of_record"),
        ("lcov.info", b"TN:\nSF:a.c\nDA:1,1\nDA:2", "auto", "line 4"),
        ("lcov.info", b"SF:\xff\xfe.c\n", "lcov", "UnicodeDecodeError"),
        ("coverage.out", b"mode: set\na.go:1.1,2.2 1 1\na.go:3.1,4\n", "auto", "line 3"),
        ("coverage.out", b"a.go:1.1,2.2 1 1\n", "go", "not a Go coverprofile"),
        ("coverage.out", b"mode: set\nwhat\n", "go", "line 2"),
    ],
)
def test_corrupt_data(tmp_path: Path, name: str, content: bytes, fmt: str, cause: str) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    _assert_error(path, fmt, cause)


def test_corrupt_and_foreign_sqlite(project: Project, tmp_path: Path) -> None:
    truncated = tmp_path / ".coverage"
    data = project.data.read_bytes()
    truncated.write_bytes(data[: len(data) // 2])
    _assert_error(truncated)
    foreign = tmp_path / ".coverage.other"
    with sqlite3.connect(foreign) as db:
        db.execute("create table t (x)")
    db.close()
    _assert_error(foreign, contains="not a coverage.py data file")
    # Reading must not have written coverage.py's schema into someone else's database.
    with sqlite3.connect(foreign) as db:
        assert db.execute("select name from sqlite_master").fetchall() == [("t",)]
    db.close()


def test_wrong_explicit_format_is_a_data_error(project: Project) -> None:
    for source, fmt in [
        (project.json, "cobertura"),
        (project.xml, "lcov"),
        (project.data, "json"),
        (project.json, "go"),
        (project.xml, "coveragepy"),
    ]:
        _assert_error(source, fmt)
