"""`dun check`'s options as data: dun/cli/main.py builds the click command from this table, and `parse` reads an
ordinary command line with it without importing click (25 ms of CPU, a fifth of a fresh check of a large repository).

`parse` takes only what it is sure of; anything else (`--help`, `--opt=value`, joined short flags, a value out of
range, an unknown option) returns None and click reads the command line instead, with its own messages.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dun.cli.commands.check import CheckOptions


@dataclass(frozen=True)
class Flag:
    """One option of `dun check`: its names, the CheckOptions field it sets and how it takes a value."""

    names: tuple[str, ...]
    dest: str
    help: str
    takes: str = "flag"  # flag | value | many (repeatable)
    choices: tuple[str, ...] = ()
    minimum: int | None = None  # an integer at least this
    file: bool = False  # a file's path: not an existing directory
    metavar: str | None = None
    default: Any = None


CHECK_FLAGS = (
    Flag(("-f", "--format"), "format", "text, json, llm, junit or github (default: check.format).", "value"),
    Flag(("-j", "--jobs"), "jobs", "Checks run at once (default: check.jobs).", "value", minimum=1),
    Flag(("--only",), "only", "Run only checks whose id or plugin matches.", "many", metavar="GLOB"),
    Flag(("--skip",), "skip", "Leave out checks whose id or plugin matches.", "many", metavar="GLOB"),
    Flag(("--strict",), "strict", "Warnings are actionable too (exit 1)."),
    Flag(("-v", "--verbose"), "verbose", "Show passing and skipped checks, all items and details."),
    Flag(("--color",), "color", "", "value", choices=("auto", "always", "never"), default="auto"),
    Flag(("-o", "--output"), "output", "Write the report to a file.", "value", file=True),
    Flag(("--no-cache",), "no_cache", "Run every check, even one whose inputs are unchanged since its last result "
         "(also DUN_NO_CACHE=1)."),
)
_BY_NAME = {name: flag for flag in CHECK_FLAGS for name in flag.names}


def parse(args: list[str]) -> CheckOptions | None:
    """The options of `dun check ARGS` (ARGS after `check`, no PATH), or None when click must read them."""
    from dun.cli.commands.check import CheckOptions
    values: dict[str, Any] = {}
    rest = iter(args)
    for arg in rest:
        flag = _BY_NAME.get(arg)
        if flag is None:
            return None  # a PATH, --help, --opt=value, -vf, an unknown option: click decides
        if flag.takes == "flag":
            values[flag.dest] = True
            continue
        value = next(rest, None)
        if value is None or value.startswith("-") or (converted := _convert(flag, value)) is None:
            return None
        if flag.takes == "many":
            values.setdefault(flag.dest, []).append(converted)
        else:
            values[flag.dest] = converted
    return CheckOptions(**values)


def _convert(flag: Flag, value: str) -> Any:
    """The value as click would give it, or None when click would refuse it (then click says why)."""
    if flag.minimum is not None:
        if not value.isascii() or not value.isdigit() or int(value) < flag.minimum:
            return None
        return int(value)
    if flag.choices and value not in flag.choices:
        return None
    if flag.file and (not value or os.path.isdir(value)):
        return None
    return value
