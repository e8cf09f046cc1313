"""The options of `dun check` and `dun iterate` as data: dun/cli/main.py builds their click commands from these
tables, and `parse` reads an ordinary command line with them without importing click (25 ms of CPU, a fifth of a
fresh check of a large repository). These two commands run at every iteration of a loop; the others use click only.

`parse` takes only what it is sure of; anything else (`--help`, `--opt=value`, joined short flags, a value out of
range, an unknown option) returns None and click reads the command line instead, with its own messages.
"""

import os

TYPE_CHECKING = False  # not typing's: dun/entry.py reads these tables before it starts git, before all else loads

if TYPE_CHECKING:
    from typing import Any


class Flag:
    """One option of `dun check` or `dun iterate`: its names, the options field it sets and how it takes a value.
    The one declaration of the option: click's command, `parse` and dun/entry.py's look at the command line read it,
    and CheckOptions / IterateOptions hold its value (tests/test_entry.py keeps them alike). A plain class, not a
    dataclass: the dataclasses module alone would delay git's start by milliseconds."""

    __slots__ = ("choices", "default", "dest", "file", "help", "integer", "metavar", "minimum", "names", "takes")

    def __init__(self, names: tuple[str, ...], dest: str, help: str, takes: str = "flag",
                 choices: tuple[str, ...] = (), minimum: int | None = None, integer: bool = False,
                 file: bool = False, metavar: str | None = None, default: object = None) -> None:
        self.names = names
        self.dest = dest
        self.help = help
        self.takes = takes  # flag | value | many (repeatable)
        self.choices = choices
        self.minimum = minimum  # an integer at least this
        self.integer = integer  # any integer
        self.file = file  # a file's path: not an existing directory
        self.metavar = metavar
        self.default = default


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
ITERATE_FLAGS = (
    Flag(("-a", "--automation"), "automation", "Instruction style (default: iterate.automation, auto).", "value",
         choices=("manual", "plan", "auto", "yolo")),
    Flag(("--max-prompt-chars",), "max_prompt_chars", "Prompt size bound (default: iterate.max_prompt_chars).",
         "value", integer=True, metavar="N"),
    Flag(("-f", "--format"), "format", "", "value", choices=("text", "json"), default="text"),
    Flag(("--only",), "only", "Only checks whose id or plugin matches.", "many", metavar="GLOB"),
    Flag(("--skip",), "skip", "Leave out matching checks.", "many", metavar="GLOB"),
    Flag(("--iteration",), "iteration", "Number the prompt (the shell driver passes it).", "value", minimum=1),
    Flag(("--confirm",), "confirm", "The confirmation prompt (every check passes; anything left?)."),
)
TABLES = {"check": CHECK_FLAGS, "iterate": ITERATE_FLAGS}


REPO_FLAGS = frozenset({"-C", "--path"})  # every command's (dun/cli/conventions.py): click reads them


def valued(command: str) -> frozenset[str]:
    """The options of `dun COMMAND` that take a value: what follows them is not the PATH argument."""
    return REPO_FLAGS | {name for flag in TABLES[command] if flag.takes != "flag" for name in flag.names}

_BY_NAME = {command: {name: flag for flag in table for name in flag.names} for command, table in TABLES.items()}


def parse(command: str, args: list[str]) -> "dict[str, Any] | None":
    """The options given to `dun COMMAND ARGS` (ARGS after the command, no PATH) by the field they set, or None
    when click must read them."""
    by_name = _BY_NAME[command]
    values: dict[str, Any] = {}
    rest = iter(args)
    for arg in rest:
        flag = by_name.get(arg)
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
    return values


def _convert(flag: Flag, value: str) -> object:
    """The value as click would give it, or None when click would refuse it (then click says why)."""
    if flag.minimum is not None or flag.integer:
        if not value.isascii() or not value.isdigit() or int(value) < (flag.minimum or 0):
            return None
        return int(value)
    if flag.choices and value not in flag.choices:
        return None
    if flag.file and (not value or os.path.isdir(value)):
        return None
    return value
