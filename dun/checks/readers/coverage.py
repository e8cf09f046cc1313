"""Read coverage data (coverage.py, its JSON, Cobertura XML, lcov, Go coverprofile) into one model."""

from __future__ import annotations

import contextlib
import json
import os
import posixpath
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any
from xml.parsers import expat

from dun.checks.readers.coveragepy import SQLITE_MAGIC
from dun.checks.readers.covmodel import (
    CoverageDataError,
    CoverageReport,
    FileCoverage,
    _error,
    _from_lines,
    _head,
    _hits,
    _Paths,
    line_ranges,
)

__all__ = ["FORMATS", "CoverageDataError", "CoverageReport", "FileCoverage", "detect_format", "line_ranges",
           "read_coverage", "read_coveragepy_files"]

FORMATS = ("coveragepy", "json", "cobertura", "lcov", "go")
_GO_MODE = re.compile(r"mode: (set|count|atomic)\s*$")
_GO_BLOCK = re.compile(r"(.+):(\d+)\.(\d+),(\d+)\.(\d+) (\d+) (\d+)")
_LCOV_KEY = re.compile(r"[A-Z][A-Z_]*:")
# Markup that could define entities (XML bombs, external entities); checked in UTF-8 and UTF-16 encodings.
_XML_MARKUP = ("<!DOCTYPE", "<!ENTITY")
_XML_ENCODINGS = ("utf-8", "utf-16-le", "utf-16-be")  # encoded when a report is read: the codecs cost 2 ms to load


def detect_format(path: Path) -> str:
    """Guess the format from the first bytes, falling back to the file name."""
    head = _head(path)
    if head.startswith(SQLITE_MAGIC):
        return "coveragepy"
    text = head.decode("utf-8", "replace").lstrip("\ufeff \t\r\n")
    first = text.split("\n", 1)[0].rstrip("\r")
    name = path.name.lower()
    if _GO_MODE.match(first):
        return "go"
    if text.startswith("<") and "<coverage" in text:
        return "cobertura"
    if text.startswith("{") and ('"files"' in text or '"meta"' in text):
        return "json"
    if first.startswith(("TN:", "SF:")):
        return "lcov"
    # Name fallback, so a truncated or corrupt file is reported as such rather than as an unknown format.
    if name == ".coverage" or (name.startswith(".coverage.") and "." not in name[len(".coverage.") :]):
        return "coveragepy"
    by_suffix = {".json": "json", ".xml": "cobertura", ".info": "lcov", ".lcov": "lcov"}
    if path.suffix.lower() in by_suffix:
        return by_suffix[path.suffix.lower()]
    raise _error(path, "unknown coverage format")


def _read_coveragepy(path: Path, paths: _Paths) -> tuple[list[FileCoverage], list[str]]:
    from dun.checks.readers.coveragepy import read_coveragepy

    return read_coveragepy([path], paths)


def _read_json(path: Path, paths: _Paths) -> tuple[list[FileCoverage], list[str]]:
    try:
        data = json.loads(path.read_text(encoding="utf-8-sig"))
    except ValueError as exc:  # includes JSONDecodeError and UnicodeDecodeError
        raise _error(path, f"invalid JSON: {exc}") from exc
    entries = data.get("files") if isinstance(data, dict) else None
    if not isinstance(entries, dict):
        raise _error(path, "not a coverage.py JSON report (no 'files' object)")
    files: list[FileCoverage] = []
    try:
        for name, entry in entries.items():
            missing = sorted(int(n) for n in entry["missing_lines"])
            summary = entry.get("summary", {})
            statements = summary.get("num_statements")
            if statements is None:
                statements = len(entry["executed_lines"]) + len(missing)
            files.append(FileCoverage(paths(name), int(statements), missing, branches=int(summary.get(
                "num_branches", 0)), missing_branches=int(summary.get("missing_branches", 0))))
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise _error(path, f"malformed coverage.py JSON report: {type(exc).__name__}: {exc}") from exc
    return files, []


def _read_cobertura(path: Path, paths: _Paths) -> tuple[list[FileCoverage], list[str]]:
    data = path.read_bytes()
    if any(m.encode(e) in data for m in _XML_MARKUP for e in _XML_ENCODINGS):
        raise _error(path, "XML with a DOCTYPE or ENTITY declaration is refused")
    sources: list[str] = []
    by_file: dict[str, dict[int, bool]] = {}
    resolved: dict[str, str] = {}
    state: dict[str, Any] = {"root": None, "lines": None, "text": None}

    # expat with plain callbacks: several times faster than building elements for 100,000s of <line>s.
    def start(tag: str, attrs: dict[str, str]) -> None:
        if tag == "line":
            lines = state["lines"]
            if lines is not None:
                number, hits = int(attrs.get("number", "")), attrs.get("hits")
                # Method-level <line>s repeat class-level ones; merging by number makes that harmless.
                if not lines.get(number):
                    lines[number] = hits != "0" and _hits(hits)  # "0" is most misses: skip the parse
        elif state["root"] is None:
            state["root"] = tag
        elif tag == "class":
            name = attrs.get("filename")
            if name is None:
                raise ValueError("<class> without filename")
            if name not in resolved:
                resolved[name] = paths(_cobertura_path(name, sources, paths.root))
            state["lines"] = by_file.setdefault(resolved[name], {})
        elif tag == "source":
            state["text"] = []

    def end(tag: str) -> None:
        if tag == "class":
            state["lines"] = None
        elif tag == "source" and state["text"] is not None:
            text = "".join(state["text"]).strip()
            if text:
                sources.append(text)
            state["text"] = None

    def chars(text: str) -> None:
        if state["text"] is not None:
            state["text"].append(text)

    parser = expat.ParserCreate()
    parser.buffer_text = True
    parser.StartElementHandler = start
    parser.EndElementHandler = end
    parser.CharacterDataHandler = chars
    try:
        parser.Parse(data, True)
    except expat.ExpatError as exc:
        raise _error(path, f"invalid XML: {exc}") from exc
    except ValueError as exc:
        raise _error(path, f"malformed Cobertura report: {exc}") from exc
    if state["root"] != "coverage":
        raise _error(path, "not a Cobertura report (root element is not <coverage>)")
    return _from_lines(by_file), []


def _cobertura_path(name: str, sources: list[str], root: Path) -> str:
    # Filenames are relative to one of the <source> roots; relative sources are taken relative to root.
    if not sources or posixpath.isabs(name.replace("\\", "/")):
        return name
    candidates = [os.path.join(root, src, name) for src in sources]
    if len(candidates) > 1:
        return next((c for c in candidates if os.path.exists(c)), candidates[0])
    return candidates[0]


def _read_lcov(path: Path, paths: _Paths) -> tuple[list[FileCoverage], list[str]]:
    by_file: dict[str, dict[int, bool]] = {}
    current: dict[int, bool] | None = None
    for lineno, raw in enumerate(path.read_text(encoding="utf-8-sig").splitlines(), 1):
        line = raw.strip()
        try:
            if not line:
                continue
            if line == "end_of_record":
                current = None
            elif line.startswith("SF:"):
                current = by_file.setdefault(paths(line[3:]), {})
            elif line.startswith("DA:"):
                if current is None:
                    raise ValueError("DA outside an SF record")
                number, hits, *_ = [*line[3:].split(","), ""]  # an optional checksum may follow
                current[int(number)] = current.get(int(number), False) or _hits(hits)
            elif not _LCOV_KEY.match(line):
                raise ValueError(f"unrecognised line {line[:60]!r}")
        except ValueError as exc:
            raise _error(path, f"line {lineno}: {exc}") from exc
    if current is not None:
        raise _error(path, "truncated: last record has no end_of_record")
    return _from_lines(by_file), []


def _go_module(root: Path) -> str | None:
    with contextlib.suppress(OSError, UnicodeDecodeError):
        for line in (root / "go.mod").read_text(encoding="utf-8").splitlines():
            words = line.split("//", 1)[0].split()
            if len(words) == 2 and words[0] == "module":
                return words[1].strip('"`')
    return None


def _read_go(path: Path, paths: _Paths) -> tuple[list[FileCoverage], list[str]]:
    text = path.read_text(encoding="utf-8-sig").splitlines()
    if not text or not _GO_MODE.match(text[0]):
        raise _error(path, "not a Go coverprofile (first line is not 'mode: set|count|atomic')")
    # (file, start line, start col, end line, end col) -> [statements, covered]
    blocks: dict[tuple[str, int, int, int, int], list[int]] = {}
    for lineno, line in enumerate(text[1:], 2):
        if not line.strip() or _GO_MODE.match(line):  # concatenated profiles repeat the mode line
            continue
        m = _GO_BLOCK.fullmatch(line.strip())
        if m is None:
            raise _error(path, f"line {lineno}: unrecognised line {line[:60]!r}")
        key = (m[1], int(m[2]), int(m[3]), int(m[4]), int(m[5]))
        block = blocks.setdefault(key, [int(m[6]), 0])
        block[1] |= int(m[7]) > 0  # a block repeated across profiles is covered if any run covered it
    module = _go_module(paths.root)
    # a go.work of modules: each module's import path stands for its directory
    from dun.checks.gorunner import go_work_modules

    dirs = [(module, "")] if module else sorted(((m, f"{rel}/") for m, rel in go_work_modules(paths.root)),
                                                key=lambda m: -len(m[0]))
    per_file: dict[str, list[tuple[int, int, int, bool]]] = {}
    for (name, start, _, end, _), (stmts, hit) in blocks.items():
        prefix = next(((m, rel) for m, rel in dirs if name.startswith(m + "/")), None)
        if prefix is not None:
            name = prefix[1] + name[len(prefix[0]) + 1 :]
        per_file.setdefault(paths(name), []).append((start, end, stmts, bool(hit)))
    files = []
    for name, entries in per_file.items():
        covered_lines = {n for s, e, _, hit in entries if hit for n in range(s, e + 1)}
        # Zero-statement blocks carry no code, so their lines are never reported as missing.
        missing = {n for s, e, k, hit in entries if not hit and k for n in range(s, e + 1)} - covered_lines
        statements = sum(k for _, _, k, _ in entries)
        unrun = sum(k for _, _, k, hit in entries if not hit)
        files.append(FileCoverage(name, statements, sorted(missing), missing_statements=unrun))
    return files, []


_READERS: dict[str, Callable[[Path, _Paths], tuple[list[FileCoverage], list[str]]]] = {
    "coveragepy": _read_coveragepy,
    "json": _read_json,
    "cobertura": _read_cobertura,
    "lcov": _read_lcov,
    "go": _read_go,
}


def read_coverage(path: Path, root: Path, fmt: str = "auto") -> CoverageReport:
    """Read `path` (format `fmt`, or detected) into a CoverageReport; any failure is a CoverageDataError.

    coveragepy: files whose source no longer exists (or no longer parses) cannot be analysed, since the
    data file holds only executed lines; they are left out of `files` and listed in `skipped`.
    """
    if fmt != "auto" and fmt not in _READERS:
        raise _error(path, f"unknown coverage format {fmt!r} (expected one of {', '.join(FORMATS)})")
    _head(path)  # missing or empty file, whatever the format
    kind = detect_format(path) if fmt == "auto" else fmt
    try:
        files, skipped = _READERS[kind](path, _Paths(root))
    except CoverageDataError:
        raise
    except Exception as exc:  # the contract is one exception type; keep the cause in the message
        raise _error(path, f"{kind} data unreadable: {type(exc).__name__}: {exc}") from exc
    files.sort(key=lambda f: f.path)
    return CoverageReport(kind, str(path), files, sorted(skipped))


def read_coveragepy_files(data_files: list[Path], root: Path) -> CoverageReport:
    """coverage.py data files combined in memory (parallel mode), as `coverage combine` then `report` count them."""
    from dun.checks.readers.coveragepy import read_coveragepy

    for path in data_files:
        _head(path)
    try:
        files, skipped = read_coveragepy(data_files, _Paths(root))
    except CoverageDataError:
        raise
    except Exception as exc:  # the contract is one exception type; keep the cause in the message
        raise _error(data_files[0], f"coveragepy data unreadable: {type(exc).__name__}: {exc}") from exc
    files.sort(key=lambda f: f.path)
    return CoverageReport("coveragepy", ", ".join(str(p) for p in data_files), files, sorted(skipped))
