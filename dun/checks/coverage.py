"""`coverage`: thresholds on coverage data (coverage.py, JSON, Cobertura XML, LCOV, Go coverprofiles)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING

from dun.config.schema import Field
from dun.core.globs import glob_errors, match_files
from dun.engine.cache import FileCache
from dun.engine.checkapi import CheckContext, CheckSpec, CheckType
from dun.engine.hookspecs import hookimpl
from dun.engine.model import Item, Outcome, Status

if TYPE_CHECKING:
    from dun.checks.readers.coverage import CoverageReport

FORMATS = ("auto", "coveragepy", "json", "cobertura", "lcov", "go")
FIELDS = {
    "file": Field("list", "Coverage data file(s); the first that exists is read.",
                  default=[".coverage", "coverage.json", "coverage.xml", "lcov.info", "coverage.out"],
                  item=Field("str", "path"), scalar_ok=True),
    "format": Field("str", "Data format; `auto` detects it from the name and content.", default="auto",
                    choices=FORMATS),
    "threshold": Field("float", "Minimum total line coverage, in percent.", default=80.0, minimum=0),
    "file_threshold": Field("float", "Minimum coverage of every single file, in percent.", default=None, minimum=0),
    "exclude": Field("list", "Globs of files left out of the thresholds.", default=[], item=Field("str", "glob"),
                     scalar_ok=True),
    "if_missing": Field("str", "Status when no data file exists.", default="fail", choices=("fail", "warn", "skip")),
    "max_items": Field("int", "Worst files listed as items.", default=10, minimum=1),
}


def _read_cached(path: Path, root: Path, fmt: str) -> CoverageReport:
    """Reports from self-contained formats are cached by the data file's size and mtime.

    coverage.py's own data is not: its statement counts come from the current sources, not from the data file.
    """
    from dun.checks.readers.coverage import CoverageReport, FileCoverage, detect_format, read_coverage

    kind = detect_format(path) if fmt == "auto" else fmt
    if kind == "coveragepy":
        return read_coverage(path, root, kind)
    cache = FileCache(root, "coverage", kind)
    key = path.relative_to(root).as_posix() if path.is_relative_to(root) else str(path)
    stamp = cache.stamp(path)
    hit = cache.get(key, stamp)
    if hit is not None:
        files = [FileCoverage(p, n, missing, ms) for p, n, missing, ms in hit["files"]]
        return CoverageReport(kind, str(path), files, hit["skipped"])
    report = read_coverage(path, root, kind)
    cache.put(key, stamp, {"files": [[f.path, f.statements, f.missing, f.missing_statements] for f in report.files],
                           "skipped": report.skipped})
    cache.save(keep={key})
    return report


def _below(value: float, limit: float) -> str:
    """Format a percentage that is below `limit` so that rounding never shows it at the limit (79.99, not 80.0)."""
    shown = f"{value:.1f}"
    if float(shown) >= limit:
        shown = f"{math.floor(value * 100) / 100:.2f}"
    return shown


def _items(report: CoverageReport, limit: int, below: float | None) -> list[Item]:
    from dun.checks.readers.coverage import line_ranges

    files = [f for f in report.files if f.missing and (below is None or f.percent < below)]
    files.sort(key=lambda f: (f.percent, -len(f.missing), f.path))
    return [Item(text=f"{f.percent:.1f}% covered; missing lines {line_ranges(f.missing)}"[:300], file=f.path,
                 line=f.missing[0]) for f in files[:limit]]


def run(spec: CheckSpec, ctx: CheckContext) -> Outcome:
    o = spec.options
    path = next((ctx.root / f for f in o["file"] if (ctx.root / f).is_file()), None)
    if path is None:
        status = Status(o["if_missing"])
        return Outcome(status, f"no coverage data: none of {', '.join(o['file'])} exists",
                       next=spec.next or "Run the tests with coverage to produce the data file.")
    from dun.checks.readers.coverage import CoverageDataError

    try:
        report = _read_cached(path, ctx.root, o["format"])
    except CoverageDataError as exc:
        return Outcome(Status.ERROR, str(exc), next="Re-run the tests with coverage to regenerate the data.")
    if o["exclude"]:
        excluded = set(match_files([f.path for f in report.files], o["exclude"]))
        report.files = [f for f in report.files if f.path not in excluded]
    total = report.percent
    rel = path.relative_to(ctx.root).as_posix() if path.is_relative_to(ctx.root) else str(path)
    problems = []
    if total < o["threshold"]:
        problems.append(f"total {_below(total, o['threshold'])}% < {o['threshold']:g}%")
    low = [f for f in report.files if o["file_threshold"] is not None and f.percent < o["file_threshold"]]
    if low:
        problems.append(f"{len(low)} file(s) below {o['file_threshold']:g}%")
    summary = f"{total:.1f}% of {sum(f.statements for f in report.files)} statements in {len(report.files)} files"
    if not problems:
        return Outcome(Status.PASS, f"{summary} ({rel})")
    items = _items(report, o["max_items"], o["file_threshold"] if low and total >= o["threshold"] else None)
    return Outcome(Status.FAIL, f"{'; '.join(problems)} ({rel})", detail=summary, items=items,
                   next="Add tests covering the missing lines of the files listed.")


@hookimpl
def dun_check_types() -> list[CheckType]:
    return [CheckType("coverage", "Coverage thresholds over coverage data files.", FIELDS, run,
                      lambda options: glob_errors(options, "exclude"))]
