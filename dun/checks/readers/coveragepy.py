"""coverage.py's own `.coverage` data, read and reported through coverage.py's public API, so the numbers are the
ones `coverage report` prints: the project's config (exclusions, omit), branch coverage when it was measured, and
parallel data files (`.coverage.HOST.PID.RANDOM`) combined in memory the way `coverage combine` would."""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from dun.checks.readers.covmodel import FileCoverage, _Paths

SQLITE_MAGIC = b"SQLite format 3\x00"
# coverage.py config files in its search order, with the text that shows a file configures coverage.
_RCS = {
    ".coveragerc": "",
    "setup.cfg": "[coverage:",
    "tox.ini": "[coverage:",
    "pyproject.toml": "[tool.coverage",
}
RC_FILES = tuple(_RCS)


def coverage_rc(root: Path) -> str | bool:
    """The project's coverage config file, found the way `coverage` finds it (exclusions change the counts)."""
    for name, marker in _RCS.items():
        candidate = root / name
        with contextlib.suppress(OSError, UnicodeDecodeError):
            if candidate.is_file() and marker in candidate.read_text(encoding="utf-8"):
                return str(candidate)
    return False


def parallel_files(path: Path) -> list[Path]:
    """`.coverage.*` data files next to `path` (`.coverage`), as `coverage run --parallel-mode` leaves them."""
    found = []
    for candidate in sorted(path.parent.glob(path.name + ".*")):
        with contextlib.suppress(OSError), candidate.open("rb") as fh:
            if fh.read(len(SQLITE_MAGIC)) == SQLITE_MAGIC:
                found.append(candidate)  # the suffix holds the host name, which may hold dots: go by content
    return found


def _check_database(path: Path) -> None:
    import sqlite3  # here, not at the top: `dun check` imports this module for its constants (sqlite3 costs 3 ms)

    from dun.checks.readers.covmodel import _error, _head

    if not _head(path).startswith(SQLITE_MAGIC):
        raise _error(path, "not a SQLite database (coverage.py data file)")
    # Check read-only first: coverage.py (before 7.17's read_only) writes its schema into a foreign database.
    try:
        uri = f"{path.absolute().as_uri()}?mode=ro"
        with contextlib.closing(sqlite3.connect(uri, uri=True)) as db:
            db.execute("select version from coverage_schema").fetchone()
    except sqlite3.Error as exc:
        raise _error(path, f"not a coverage.py data file: {exc}") from exc


def read_coveragepy(data_files: list[Path], paths: _Paths) -> tuple[list[FileCoverage], list[str]]:
    """Files and their numbers as `coverage report` counts them, and the measured files whose source is gone."""
    import coverage  # slow to import; only needed for this format
    from coverage.exceptions import CoverageException, NoDataError

    from dun.checks.readers.covmodel import _error

    for path in data_files:
        _check_database(path)
    # Analyse an in-memory copy keyed by absolute path: relative_files data then resolves against root
    # without os.chdir (checks run in threads), and the user's data files are never written to.
    cov = coverage.Coverage(data_file=None, config_file=coverage_rc(paths.root))
    cov.set_option("run:relative_files", False)
    cov.set_option("report:ignore_errors", True)  # a measured file whose source is gone is reported as skipped
    cov.set_option("run:disable_warnings", ["couldnt-parse", "no-data-collected"])  # dun reports them itself
    data = cov.get_data()
    measured: dict[str, str] = {}
    for path in data_files:
        try:
            recorded = coverage.CoverageData(basename=str(path.absolute()))
            recorded.read()
            names = {f: str(paths.root / f) for f in recorded.measured_files()}  # an absolute f stays as it is
            if recorded.has_arcs():
                data.add_arcs({names[f]: recorded.arcs(f) or [] for f in names})
            else:
                data.add_lines({names[f]: recorded.lines(f) or [] for f in names})
            data.add_file_tracers({names[f]: t for f in names if (t := recorded.file_tracer(f))})
        except CoverageException as exc:  # also line data mixed with branch data across parallel files
            raise _error(path, exc) from exc
        measured.update({name: paths(name) for name in names.values()})
    import tempfile

    with tempfile.TemporaryDirectory(prefix="dun-coverage-") as tmp:
        out = os.path.join(tmp, "coverage.json")
        try:
            cov.json_report(outfile=out)
        except NoDataError:
            return [], []  # nothing measured at all: the check says so
        except CoverageException as exc:
            raise _error(data_files[0], exc) from exc
        with open(out, encoding="utf-8") as fh:
            report = json.load(fh)
    return _files(report, paths, measured)


def _files(report: dict[str, object], paths: _Paths, measured: dict[str, str]) -> tuple[list[FileCoverage], list[str]]:
    from dun.checks.readers.covmodel import FileCoverage

    files: list[FileCoverage] = []
    seen: set[str] = set()
    entries = report.get("files")
    assert isinstance(entries, dict)
    for name, entry in entries.items():
        # Names are relative to the directory coverage.py took as current, or absolute.
        full = name if os.path.isabs(name) else os.path.join(os.getcwd(), name)
        rel = paths(full)
        seen.add(rel)
        summary = entry["summary"]
        files.append(FileCoverage(rel, int(summary["num_statements"]), sorted(entry["missing_lines"]),
                                  branches=int(summary.get("num_branches", 0)),
                                  missing_branches=int(summary.get("missing_branches", 0))))
    gone = [rel for full, rel in measured.items() if rel not in seen and not os.path.exists(full)]
    return files, gone
