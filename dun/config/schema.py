"""Schemas as data, and one validator that reports `file:line:col: path.to.key: message`."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, cast

from dun.config.yamlio import position, printable

_PY_TYPES: dict[str, tuple[type, ...]] = {
    "str": (str,),
    "int": (int,),
    "float": (int, float),
    "bool": (bool,),
    "list": (list,),
    "map": (dict,),
}
MAX_ERRORS = 50
LARGEST = 1e9  # no count, duration or amount dun reads is larger; beyond it timers overflow
_TYPE_NAMES = {"str": "a string", "int": "an integer", "float": "a number", "bool": "true or false",
               "list": "a list", "map": "a mapping"}


@dataclass(frozen=True)
class Field:
    """One key of a schema: its type, default and description (shown in docs and `dun config show`)."""

    type: str
    description: str
    required: bool = False
    default: object = None
    choices: tuple[object, ...] | None = None
    item: Field | None = None  # element schema of a list
    fields: Mapping[str, Field] | None = None  # known keys of a map
    scalar_ok: bool = False  # a list that also accepts one scalar
    minimum: float | None = None


def number_problem(value: float) -> str | None:
    """Why a number is unusable anywhere in dun: NaN and the infinities compare false with every limit, so they would
    silently disable it."""
    if isinstance(value, float) and not math.isfinite(value):
        return f"must be a finite number, got {value}"
    if abs(value) > LARGEST:
        return f"must be at most {LARGEST:g}, got {value:g}"
    return None


def did_you_mean(word: str, options: list[str] | tuple[str, ...] | Any) -> str:
    import difflib  # only for a typo's message

    close = difflib.get_close_matches(str(word), [str(o) for o in options], n=1, cutoff=0.6)
    return f" (did you mean '{close[0]}'?)" if close else ""


def type_name(value: object) -> str:
    if value is None:
        return "null"
    for name, types in _PY_TYPES.items():
        if isinstance(value, bool) and name != "bool":
            continue
        if isinstance(value, types):
            return name
    return type(value).__name__


class Validator:
    """Collects every error in a document rather than stopping at the first one."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.errors: list[str] = []

    def error(self, parent: object, key: str | int | None, path: str, message: str, value: bool = False) -> None:
        if len(self.errors) >= MAX_ERRORS:  # 20,000 broken checks must not print 40,000 lines
            if len(self.errors) == MAX_ERRORS:
                self.errors.append(f"{self.source}: more errors not shown; fix these first")
            return
        pos = position(parent, key, value)
        line, column = pos or (1, 1)  # no position: the document itself (empty, or not a mapping)
        where = f"{self.source}:{line}:{column}"
        self.errors.append(printable(f"{where}: {path or '<top>'}: {message}"))

    def check_value(self, parent: object, key: str | int | None, raw: object, spec: Field, path: str) -> object:
        """Validate one value; returns it converted to plain Python (or None when invalid)."""
        value: Any = raw
        if spec.type == "any":
            return plain(value)
        if spec.scalar_ok and spec.type == "list" and not isinstance(value, list) and spec.item:
            value = [value]
        expected = _PY_TYPES[spec.type]
        if not isinstance(value, expected) or (isinstance(value, bool) and spec.type in ("int", "float")):
            self.error(parent, key, path, f"expected {_TYPE_NAMES[spec.type]}, got {type_name(value)}", value=True)
            return None
        value = cast(Any, value)  # isinstance on a tuple of types narrows to object
        if spec.choices is not None and value not in spec.choices:
            options = ", ".join(repr(c) for c in spec.choices)
            hint = did_you_mean(str(value), spec.choices)
            self.error(parent, key, path, f"must be one of {options}, got {value!r}{hint}", value=True)
            return None
        if spec.type in ("int", "float") and (problem := number_problem(value)):
            self.error(parent, key, path, problem, value=True)
            return None
        if spec.minimum is not None and value < spec.minimum:
            self.error(parent, key, path, f"must be at least {spec.minimum:g}, got {value}", value=True)
            return None
        if spec.type == "list" and spec.item is not None:
            return [self.check_value(value, i, v, spec.item, f"{path}[{i}]") for i, v in enumerate(value)]
        if spec.type == "map" and spec.fields is not None:
            return self.check_map(value, spec.fields, path)
        return plain(value)

    def check_map(self, data: Any, fields: Mapping[str, Field], path: str = "") -> dict[str, Any]:
        """Validate a mapping against known fields: unknown keys, missing required keys, types."""
        out: dict[str, object] = {}
        for key, value in data.items():
            sub = f"{path}.{key}" if path else str(key)
            spec = fields.get(str(key))
            if spec is None:
                self.error(data, key, sub, f"unknown key '{key}'{did_you_mean(key, list(fields))}")
                continue
            out[str(key)] = self.check_value(data, key, value, spec, sub)
        for name, spec in fields.items():
            if name in out:
                continue
            if spec.required:
                self.error(data, None, f"{path}.{name}" if path else name, "required key is missing")
            else:
                out[name] = spec.default
        return out


def plain(value: object) -> Any:
    """ruamel's commented containers to plain dicts and lists."""
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    # ruamel wraps some scalars (ScalarInt, ScalarFloat, ...); hand out builtin types only
    if type(value) in (bool, int, float, str) or value is None:
        return value
    for kind in (bool, int, float, str):
        if isinstance(value, kind):
            return kind(value)
    return value
