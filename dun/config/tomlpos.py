"""`[tool.dun]` from pyproject.toml with line numbers: tomllib keeps no positions, so the key lines are found in the
text and attached to the tables as ruamel attaches its own (`.lc`), for the validator's `file:line:col` errors."""

from __future__ import annotations

import re

_HEADER = re.compile(r"^[ \t]*\[\[?[ \t]*([^\]\n]*?)[ \t]*\]\]?")
_KEY = re.compile(r"^[ \t]*([A-Za-z0-9_.\"' -]+?)[ \t]*=")


def _parts(dotted: str) -> tuple[str, ...]:
    return tuple(p.strip().strip("\"'") for p in dotted.split("."))


def key_lines(text: str) -> dict[tuple[str, ...], tuple[int, int]]:
    """Full key path -> (line, col), 0-based, for table headers and `key = value` lines (a best effort: keys inside
    inline tables take their table's line)."""
    out: dict[tuple[str, ...], tuple[int, int]] = {}
    table: tuple[str, ...] = ()
    for number, line in enumerate(text.split("\n")):
        if len(line) > 4096:  # no key of ours is this long; keeps the scan linear
            continue
        header = _HEADER.match(line)
        if header:
            table = _parts(header.group(1))
            out.setdefault(table, (number, line.find("[")))
            continue
        key = _KEY.match(line)
        if key:
            path = table + _parts(key.group(1))
            for end in range(len(table) + 1, len(path) + 1):  # `a.b = 1` declares `a` too
                out.setdefault(path[:end], (number, len(line) - len(line.lstrip())))
    return out


class _Lines:
    """ruamel's `.lc` interface over the found lines: `line`, `col`, `key(k)`, `value(k)`, `item(i)`."""

    def __init__(self, lines: dict[tuple[str, ...], tuple[int, int]], path: tuple[str, ...]) -> None:
        self.lines, self.path = lines, path
        self.line, self.col = self._at(path)

    def _at(self, path: tuple[str, ...]) -> tuple[int, int]:
        while path and path not in self.lines:
            path = path[:-1]  # the nearest declared ancestor
        return self.lines.get(path, (0, 0))

    def key(self, key: object) -> tuple[int, int]:
        return self._at((*self.path, str(key)))

    def value(self, key: object) -> tuple[int, int]:
        return self.key(key)

    def item(self, index: int) -> tuple[int, int]:
        return self.line, self.col


class PositionedDict(dict[str, object]):
    lc: _Lines


class PositionedList(list[object]):
    lc: _Lines


def positioned(value: object, lines: dict[tuple[str, ...], tuple[int, int]], path: tuple[str, ...]) -> object:
    """`value` with `.lc` on every table and array, for the validator."""
    if isinstance(value, dict):
        table = PositionedDict({k: positioned(v, lines, (*path, k)) for k, v in value.items()})
        table.lc = _Lines(lines, path)
        return table
    if isinstance(value, list):
        array = PositionedList(positioned(v, lines, path) for v in value)
        array.lc = _Lines(lines, path)
        return array
    return value
