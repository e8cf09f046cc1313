"""`coverage`: thresholds on coverage data (coverage.py, JSON, Cobertura XML, LCOV, Go coverprofiles)."""

from __future__ import annotations

import marshal
import math
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dun.config.schema import Field
from dun.core.cache import stamp
from dun.core.cache.files import FileCache
from dun.core.digest import sha256
from dun.core.globs import glob_errors, match_files
from dun.engine.checkapi import CheckContext, CheckSpec, CheckType
from dun.engine.hookspecs import hookimpl
from dun.engine.model import Item, Outcome, Status

if TYPE_CHECKING:
    from dun.checks.readers.coverage import CoverageReport, FileCoverage
    from dun.core.cache import Stamp
    from dun.core.cache.session import Caches

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


def _fingerprint(paths: list[Path], root: Path) -> Stamp | None:
    """One stamp for the data files and the coverage config that decide the numbers: a hash of their stamps, with
    the newest mtime and ctime among them (the racy rule reads those)."""
    from dun.checks.readers.coveragepy import coverage_rc

    rc = coverage_rc(root)
    parts = []
    for path in [*paths, *([Path(rc)] if isinstance(rc, str) else [])]:
        st = stamp(path)
        if st is None:
            return None
        parts.append((str(path), st))
    digest = int(sha256(repr(parts).encode()).hexdigest()[:15], 16)
    return digest, max(st[1] for _, st in parts), max(st[2] for _, st in parts), 0, 0


class _Reading:
    """A report as the cache keeps it: one row per file, plus the totals, the file count and the ranking of the
    files with something missing (the first rows of it included), worked out once when it was stored. The rows are
    kept marshalled inside the entry and decoded only when `exclude` or `file_threshold` need them: otherwise
    10,000s of files are neither decoded, rebuilt as objects nor sorted on every run."""

    WORST_KEPT = 64  # rows of the worst files kept decoded: `max_items` rarely asks for more

    def __init__(self, kind: str, source: str, rows: list[Any] | bytes, skipped: list[str],
                 summary: dict[str, Any]) -> None:
        self.kind, self.source, self.skipped = kind, source, skipped
        self._rows = rows
        self.summary = summary

    @classmethod
    def of(cls, report: CoverageReport) -> _Reading:
        rows = [[f.path, f.statements, f.missing, f.missing_statements, f.branches, f.missing_branches]
                for f in report.files]
        return cls(report.format, report.source, rows, report.skipped, _summary(report, rows))

    @property
    def rows(self) -> list[Any]:
        if isinstance(self._rows, bytes):
            self._rows = list(marshal.loads(self._rows))
        return self._rows

    def report(self) -> CoverageReport:
        from dun.checks.readers.covmodel import CoverageReport, FileCoverage

        return CoverageReport(self.kind, self.source, [FileCoverage(*row) for row in self.rows], self.skipped)

    def worst(self, limit: int) -> list[FileCoverage]:
        """The `limit` files with the lowest coverage (then the most missing lines, then by path)."""
        from dun.checks.readers.covmodel import FileCoverage

        kept = self.summary["worst_rows"]
        rows = kept[:limit] if limit <= len(kept) else [self.rows[i] for i in self.summary["worst"][:limit]]
        return [FileCoverage(*row) for row in rows]

    def stored(self) -> dict[str, object]:
        return {"source": self.source, "files": marshal.dumps(self.rows), "skipped": self.skipped,
                "summary": self.summary}


def _summary(report: CoverageReport, rows: list[Any]) -> dict[str, object]:
    worst = [i for i, f in enumerate(report.files) if f.missing or f.missing_branches]
    files = report.files
    worst.sort(key=lambda i: (files[i].percent, -len(files[i].missing), files[i].path))
    return {"totals": list(report.totals()), "count": len(rows), "worst": worst,
            "worst_rows": [rows[i] for i in worst[:_Reading.WORST_KEPT]]}


def _read_coveragepy(paths: list[Path], root: Path, caches: Caches | None) -> _Reading:
    """coverage.py data, cached per fingerprint: analysing the sources is the slow part (seconds on big projects).

    A hit also needs every measured source file unchanged: the statement counts come from the sources.
    """
    from dun.checks.readers.coverage import read_coveragepy_files

    cache = FileCache(root, "coveragepy", "\0".join(str(p) for p in paths), caches=caches)
    data_stamp = _fingerprint(paths, root)
    hit = cache.get("report", data_stamp)
    notes = cache.caches.reads.note
    try:
        if hit is not None and all(stamp(root / p) == s for p, s in hit["sources"]):
            for _, s in hit["sources"]:
                notes(s, False)  # the counts come from the measured sources too
            return _Reading("coveragepy", hit["source"], hit["files"], hit["skipped"], hit["summary"])
    except (KeyError, TypeError, ValueError):
        pass  # an entry of another shape: read the data
    reading = _Reading.of(read_coveragepy_files(paths, root))
    sources = [(row[0], stamp(root / row[0])) for row in reading.rows]
    for _, s in sources:
        notes(s, False)
    cache.put("report", data_stamp, {**reading.stored(), "sources": sources})
    cache.save()
    return reading


def _read_cached(path: Path, root: Path, fmt: str, caches: Caches | None) -> _Reading:
    """Reports from self-contained formats are cached by the data file's size and mtime. The readers (and the XML
    parser) load only when a report is read: a cached one needs neither."""
    if fmt == "auto":
        from dun.checks.readers.coverage import detect_format

        kind = detect_format(path)
    else:
        kind = fmt
    if kind == "coveragepy":
        return _read_coveragepy([path], root, caches)
    cache = FileCache(root, "coverage", kind, caches=caches)
    key = path.relative_to(root).as_posix() if path.is_relative_to(root) else str(path)
    data_stamp = stamp(path)
    hit = cache.get(key, data_stamp)
    try:
        if hit is not None:
            return _Reading(kind, str(path), hit["files"], hit["skipped"], hit["summary"])
    except (KeyError, TypeError):
        pass  # an entry of another shape: read the data
    from dun.checks.readers.coverage import read_coverage

    reading = _Reading.of(read_coverage(path, root, kind))
    cache.put(key, data_stamp, reading.stored())
    cache.save(keep={key})
    return reading


def _below(value: float, limit: float) -> str:
    """Format a percentage that is below `limit` so that rounding never shows it at the limit (79.99, not 80.0)."""
    shown = f"{value:.1f}"
    if float(shown) >= limit:
        shown = f"{math.floor(value * 100) / 100:.2f}"
    return shown


def _items(reading: _Reading, limit: int, below: float | None) -> list[Item]:
    from dun.checks.readers.covmodel import line_ranges

    if below is None:
        files = reading.worst(limit)
    else:
        import heapq

        files = [f for f in reading.report().files if (f.missing or f.missing_branches) and f.percent < below]
        files = heapq.nsmallest(limit, files, key=lambda f: (f.percent, -len(f.missing), f.path))
    out = []
    for f in files:
        what = [f"missing lines {line_ranges(f.missing)}"] if f.missing else []
        what += [f"{f.missing_branches} of {f.branches} branches not taken"] if f.missing_branches else []
        out.append(Item(text=f"{f.percent:.1f}% covered; {'; '.join(what)}"[:300], file=f.path,
                        line=f.missing[0] if f.missing else None))
    return out


def _locate(ctx: CheckContext, names: list[str]) -> tuple[list[Path], str]:
    """The first data file that exists, or for a missing `.coverage` its parallel-mode files (`.coverage.*`);
    and how to name what was read."""
    for name in names:
        path = ctx.root / name
        shown = os.path.relpath(path, ctx.root) if path.is_relative_to(ctx.root) else str(path)
        if path.is_file():
            return [path], shown
        if path.name.startswith(".coverage"):
            from dun.checks.readers.coveragepy import parallel_files

            if parallel := parallel_files(path):
                return parallel, f"{len(parallel)} parallel files {shown}.*"
    return [], ""


def run(spec: CheckSpec, ctx: CheckContext) -> Outcome:
    o = spec.options
    paths, shown = _locate(ctx, o["file"])
    if not paths:
        status = Status(o["if_missing"])
        return Outcome(status, f"no coverage data: none of {', '.join(o['file'])} exists",
                       next=spec.next or "Run the tests with coverage to produce the data file.")
    from dun.checks.readers.covmodel import CoverageDataError

    try:
        reading = _read_cached(paths[0], ctx.root, o["format"], ctx.caches) if len(paths) == 1 else (
            _read_coveragepy(paths, ctx.root, ctx.caches))
    except CoverageDataError as exc:
        return Outcome(Status.ERROR, str(exc), next="Re-run the tests with coverage to regenerate the data.")
    if o["exclude"]:
        report = reading.report()
        excluded = set(match_files([f.path for f in report.files], o["exclude"]))
        report.files = [f for f in report.files if f.path not in excluded]
        reading = _Reading.of(report)
    statements, branches, total = reading.summary["totals"]
    if statements == 0:
        hint = EMPTY_HINTS.get(reading.kind, EMPTY_HINTS["default"])
        count = reading.summary["count"]
        return Outcome(Status.FAIL, f"coverage data measured nothing: 0 statements in {count} files ({shown})",
                       detail=hint, next=spec.next or hint)
    return _judge(spec, reading, shown, (statements, branches, total))


def _judge(spec: CheckSpec, reading: _Reading, shown: str, totals: tuple[int, int, float]) -> Outcome:
    o: dict[str, Any] = spec.options
    statements, branches, total = totals
    problems = []
    if total < o["threshold"]:
        problems.append(f"total {_below(total, o['threshold'])}% < {o['threshold']:g}%")
    low = [] if o["file_threshold"] is None else [
        f for f in reading.report().files if f.percent < o["file_threshold"]]
    if low:
        problems.append(f"{len(low)} file(s) below {o['file_threshold']:g}%")
    with_branches = f" and {branches} branches" if branches else ""
    summary = f"{total:.1f}% of {statements} statements{with_branches} in {reading.summary['count']} files"
    if not problems:
        return Outcome(Status.PASS, f"{summary} ({shown})")
    items = _items(reading, o["max_items"], o["file_threshold"] if low and total >= o["threshold"] else None)
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
                      lambda options: glob_errors(options, "exclude"), inputs=inputs, stamped=lambda spec: True)]
