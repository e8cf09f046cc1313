"""`coverage`: thresholds on coverage data (coverage.py, JSON, Cobertura XML, LCOV, Go coverprofiles)."""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dun.config.schema import Field
from dun.core.digest import sha256
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
    "threshold": Field("float", "Minimum total coverage (lines, plus branches when measured), in percent.",
                       default=80.0, minimum=0),
    "file_threshold": Field("float", "Minimum coverage of every single file, in percent.", default=None, minimum=0),
    "exclude": Field("list", "Globs of files left out of the thresholds.", default=[], item=Field("str", "glob"),
                     scalar_ok=True),
    "if_missing": Field("str", "Status when no data file exists.", default="fail", choices=("fail", "warn", "skip")),
    "max_items": Field("int", "Worst files listed as items.", default=10, minimum=1),
}
EMPTY_HINTS = {
    "go": "The profile measured no statements: the build or the tests probably failed before coverage was "
          "written (see go-test), or the packages have no code. Fix the build, then re-run the tests.",
    "default": "The data measured no code: run the tests under coverage (`coverage run -m pytest`, or "
               "`pytest --cov=PACKAGE`) and check that `[run] source` or `--cov` names the project's package.",
}


def _fingerprint(paths: list[Path], root: Path) -> tuple[int, int] | None:
    """One (hash, newest mtime) stamp for the data files and the coverage config that decide the numbers."""
    from dun.checks.readers.coveragepy import coverage_rc

    rc = coverage_rc(root)
    parts = []
    newest = 0
    for path in [*paths, *([Path(rc)] if isinstance(rc, str) else [])]:
        stamp = FileCache.stamp(path)
        if stamp is None:
            return None
        parts.append(f"{path}\0{stamp[0]}\0{stamp[1]}")
        newest = max(newest, stamp[1])
    return int(sha256("\n".join(parts).encode()).hexdigest()[:15], 16), newest


def _read_coveragepy(paths: list[Path], root: Path) -> CoverageReport:
    """coverage.py data, cached per fingerprint: analysing the sources is the slow part (seconds on big projects).

    A hit also needs every measured source file unchanged: the statement counts come from the sources.
    """
    from dun.checks.readers.coverage import CoverageReport, FileCoverage, read_coveragepy_files

    cache = FileCache(root, "coveragepy", "\0".join(str(p) for p in paths))
    stamp = _fingerprint(paths, root)
    hit = cache.get("report", stamp)
    if hit is not None and all(list(FileCache.stamp(root / p) or ()) == s for p, s in hit["sources"]):
        files = [FileCoverage(*fields) for fields in hit["files"]]
        return CoverageReport("coveragepy", hit["source"], files, hit["skipped"])
    report = read_coveragepy_files(paths, root)
    sources = [[f.path, list(FileCache.stamp(root / f.path) or ())] for f in report.files]
    cache.put("report", stamp, {"source": report.source, "skipped": report.skipped, "sources": sources,
                                "files": [[f.path, f.statements, f.missing, f.missing_statements, f.branches,
                                           f.missing_branches] for f in report.files]})
    cache.save()
    return report


def _read_cached(path: Path, root: Path, fmt: str) -> CoverageReport:
    """Reports from self-contained formats are cached by the data file's size and mtime."""
    from dun.checks.readers.coverage import CoverageReport, FileCoverage, detect_format, read_coverage

    kind = detect_format(path) if fmt == "auto" else fmt
    if kind == "coveragepy":
        return _read_coveragepy([path], root)
    cache = FileCache(root, "coverage", kind + ":branches")  # entries before branch counts are not reused
    key = path.relative_to(root).as_posix() if path.is_relative_to(root) else str(path)
    stamp = cache.stamp(path)
    hit = cache.get(key, stamp)
    if hit is not None:
        files = [FileCoverage(*fields) for fields in hit["files"]]
        return CoverageReport(kind, str(path), files, hit["skipped"])
    report = read_coverage(path, root, kind)
    cache.put(key, stamp, {"files": [[f.path, f.statements, f.missing, f.missing_statements, f.branches,
                                      f.missing_branches] for f in report.files], "skipped": report.skipped})
    cache.save(keep={key})
    return report


def _below(value: float, limit: float) -> str:
    """Format a percentage that is below `limit` so that rounding never shows it at the limit (79.99, not 80.0)."""
    shown = f"{value:.1f}"
    if float(shown) >= limit:
        shown = f"{math.floor(value * 100) / 100:.2f}"
    return shown


def _items(report: CoverageReport, limit: int, below: float | None) -> list[Item]:
    import heapq

    from dun.checks.readers.coverage import line_ranges

    files = [f for f in report.files if (f.missing or f.missing_branches) and (below is None or f.percent < below)]
    out = []
    for f in heapq.nsmallest(limit, files, key=lambda f: (f.percent, -len(f.missing), f.path)):  # a sort of all
        what = [f"missing lines {line_ranges(f.missing)}"] if f.missing else []
        what += [f"{f.missing_branches} of {f.branches} branches not taken"] if f.missing_branches else []
        out.append(Item(text=f"{f.percent:.1f}% covered; {'; '.join(what)}"[:300], file=f.path,
                        line=f.missing[0] if f.missing else None))
    return out


def _locate(ctx: CheckContext, names: list[str]) -> tuple[list[Path], str]:
    """The first data file that exists, or for a missing `.coverage` its parallel-mode files (`.coverage.*`);
    and how to name what was read."""
    from dun.checks.readers.coveragepy import parallel_files

    for name in names:
        path = ctx.root / name
        shown = os.path.relpath(path, ctx.root) if path.is_relative_to(ctx.root) else str(path)
        if path.is_file():
            return [path], shown
        if path.name.startswith(".coverage") and (parallel := parallel_files(path)):
            return parallel, f"{len(parallel)} parallel files {shown}.*"
    return [], ""


def run(spec: CheckSpec, ctx: CheckContext) -> Outcome:
    o = spec.options
    paths, shown = _locate(ctx, o["file"])
    if not paths:
        status = Status(o["if_missing"])
        return Outcome(status, f"no coverage data: none of {', '.join(o['file'])} exists",
                       next=spec.next or "Run the tests with coverage to produce the data file.")
    from dun.checks.readers.coverage import CoverageDataError

    try:
        report = _read_cached(paths[0], ctx.root, o["format"]) if len(paths) == 1 else _read_coveragepy(
            paths, ctx.root)
    except CoverageDataError as exc:
        return Outcome(Status.ERROR, str(exc), next="Re-run the tests with coverage to regenerate the data.")
    if o["exclude"]:
        excluded = set(match_files([f.path for f in report.files], o["exclude"]))
        report.files = [f for f in report.files if f.path not in excluded]
    totals = report.totals()
    if totals[0] == 0:
        hint = EMPTY_HINTS.get(report.format, EMPTY_HINTS["default"])
        return Outcome(Status.FAIL, f"coverage data measured nothing: 0 statements in {len(report.files)} files "
                                    f"({shown})", detail=hint, next=spec.next or hint)
    return _judge(spec, report, shown, totals)


def _judge(spec: CheckSpec, report: CoverageReport, shown: str, totals: tuple[int, int, float]) -> Outcome:
    o: dict[str, Any] = spec.options
    statements, branches, total = totals
    problems = []
    if total < o["threshold"]:
        problems.append(f"total {_below(total, o['threshold'])}% < {o['threshold']:g}%")
    low = [f for f in report.files if o["file_threshold"] is not None and f.percent < o["file_threshold"]]
    if low:
        problems.append(f"{len(low)} file(s) below {o['file_threshold']:g}%")
    with_branches = f" and {branches} branches" if branches else ""
    summary = f"{total:.1f}% of {statements} statements{with_branches} in {len(report.files)} files"
    if not problems:
        return Outcome(Status.PASS, f"{summary} ({shown})")
    items = _items(report, o["max_items"], o["file_threshold"] if low and total >= o["threshold"] else None)
    return Outcome(Status.FAIL, f"{'; '.join(problems)} ({shown})", detail=summary, items=items,
                   next=spec.next or "Add tests covering the missing lines of the files listed.")


def inputs(spec: CheckSpec, ctx: CheckContext) -> list[str]:
    """Coverage data is usually ignored by git: every candidate file, coverage.py's config files, and for a missing
    `.coverage` the directory its parallel files (`.coverage.*`) would appear in."""
    from dun.checks.readers.coveragepy import RC_FILES

    names = list(spec.options["file"])
    dirs = [os.path.dirname(os.path.join(ctx.root, n)) for n in names
            if os.path.basename(n).startswith(".coverage") and not os.path.exists(os.path.join(ctx.root, n))]
    return [*names, *dirs, *RC_FILES]


@hookimpl
def dun_check_types() -> list[CheckType]:
    return [CheckType("coverage", "Coverage thresholds over coverage data files.", FIELDS, run,
                      lambda options: glob_errors(options, "exclude"), inputs=inputs)]
