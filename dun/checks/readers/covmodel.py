"""The one model every coverage reader fills: files with their statements, missing lines and branches."""

from __future__ import annotations

import posixpath
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import groupby
from pathlib import Path


class CoverageDataError(Exception):
    """Unreadable coverage data: a one-line message naming the file and cause."""


@dataclass(slots=True)
class FileCoverage:
    """One measured file: statements, the lines missed, and branches when measured."""

    path: str
    statements: int
    missing: list[int]
    # Uncovered statement count when it differs from len(missing): Go counts statements per block, not line.
    missing_statements: int | None = None
    # Branch coverage (coverage.py measured with branch=True): counted into the percentage as `coverage report` does.
    branches: int = 0
    missing_branches: int = 0

    @property
    def covered(self) -> int:
        missed = len(self.missing) if self.missing_statements is None else self.missing_statements
        return max(self.statements - missed, 0)

    @property
    def measured(self) -> int:
        """Statements plus branches: the denominator of the percentage."""
        return self.statements + self.branches

    @property
    def covered_points(self) -> int:
        return self.covered + max(self.branches - self.missing_branches, 0)

    @property
    def percent(self) -> float:
        # Written out rather than through the properties above: sorting 10,000s of files calls this a lot.
        measured = self.statements + self.branches
        if not measured:
            return 100.0
        missed = len(self.missing) if self.missing_statements is None else self.missing_statements
        covered = max(self.statements - missed, 0) + max(self.branches - self.missing_branches, 0)
        return 100.0 * covered / measured


@dataclass
class CoverageReport:
    """Every measured file of one coverage data file, whatever its format."""

    format: str
    source: str
    files: list[FileCoverage]
    # Recorded files that could not be analysed (coveragepy: the source file no longer exists).
    skipped: list[str] = field(default_factory=list)

    def totals(self) -> tuple[int, int, float]:
        """(statements, branches, percent) in one pass: reports can hold tens of thousands of files."""
        statements = branches = covered = 0
        for f in self.files:
            statements += f.statements
            branches += f.branches
            missed = len(f.missing) if f.missing_statements is None else f.missing_statements
            covered += max(f.statements - missed, 0) + max(f.branches - f.missing_branches, 0)
        measured = statements + branches
        return statements, branches, (100.0 * covered / measured if measured else 100.0)

    @property
    def percent(self) -> float:
        return self.totals()[2]

    @property
    def statements(self) -> int:
        return self.totals()[0]

    @property
    def branches(self) -> int:
        return self.totals()[1]


def _error(path: Path, cause: object) -> CoverageDataError:
    return CoverageDataError(f"{path}: {' '.join(str(cause).split())}")


def line_ranges(lines: Sequence[int]) -> str:
    """Compress line numbers: [1, 2, 3, 7, 9, 10] -> "1-3, 7, 9-10"."""
    # Consecutive numbers share the same (number - position) key.
    runs = [[n for _, n in g] for _, g in groupby(enumerate(sorted(set(lines))), lambda t: t[1] - t[0])]
    return ", ".join(str(r[0]) if len(r) == 1 else f"{r[0]}-{r[-1]}" for r in runs)


class _Paths:
    """Normalises recorded paths: relative to root when under it, '/' separators."""

    def __init__(self, root: Path) -> None:
        self.root = root.absolute()
        forms = {self.root.as_posix(), root.resolve().as_posix()}
        self._prefixes = [f.rstrip("/") + "/" for f in sorted(forms, key=len, reverse=True)]

    def __call__(self, recorded: str) -> str:
        p = posixpath.normpath(recorded.replace("\\", "/"))
        for prefix in self._prefixes:
            if p.startswith(prefix):
                return p[len(prefix) :]
        return p


def _from_lines(by_file: dict[str, dict[int, bool]]) -> list[FileCoverage]:
    return [
        FileCoverage(path, len(lines), sorted(n for n, hit in lines.items() if not hit))
        for path, lines in by_file.items()
    ]


def _hits(value: str | None) -> bool:
    # Some tools write hit counts as floats ("1.0"); only "was it run" matters here.
    try:
        return float(value or "") > 0
    except ValueError:
        raise ValueError(f"bad hit count {value!r}") from None


def _head(path: Path, size: int = 4096) -> bytes:
    try:
        with path.open("rb") as fh:
            head = fh.read(size)
    except OSError as exc:
        raise _error(path, exc.strerror or exc) from None
    if not head:
        raise _error(path, "empty file")
    return head
