"""What every command of the click layer shares: `-C PATH` (and the positional PATH some commands took before it),
`dun --help` in sections, and the agents' names read from the registry when a help text is drawn.
tests/cli/test_conventions.py holds every command to them."""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from typing import Any, TypeVar

import click

from dun.core.errors import UsageError

_F = TypeVar("_F", bound=Callable[..., Any])

# `dun --help`: the commands by what they are for (built-in plugins' commands too). A command of a third-party plugin
# goes under "Other"; one of dun's own in no section is an error of the conventions test.
SECTIONS: dict[str, tuple[str, ...]] = {
    "Checks": ("check", "iterate", "list", "task", "explain", "hints", "plugins"),
    "Loop": ("loop", "respond", "stop", "guard", "sandbox"),
    "Operator": ("status", "watch", "logs", "summary", "ack", "report", "review", "history", "fleet", "papers"),
    "Setup": ("init", "config", "doctor", "service"),
}
REPO_HELP = "The repository (default: the one holding the current directory)."


class SectionedGroup(click.Group):
    """`dun --help` lists the commands under their section's heading instead of in one alphabetical block."""

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        shown = {name: cmd for name in self.list_commands(ctx)
                 if (cmd := self.get_command(ctx, name)) is not None and not cmd.hidden}
        limit = formatter.width - 6 - max((len(name) for name in shown), default=0)
        placed: set[str] = set()
        for title, names in SECTIONS.items():
            rows = [(name, shown[name].get_short_help_str(limit)) for name in names if name in shown]
            placed.update(name for name, _ in rows)
            if rows:
                with formatter.section(title):
                    formatter.write_dl(rows)
        rest = [(name, cmd.get_short_help_str(limit)) for name, cmd in shown.items() if name not in placed]
        if rest:
            with formatter.section("Other"):
                formatter.write_dl(rest)


class _HiddenArgument(click.Argument):
    """A positional argument left out of the usage line: the PATH of the commands that took one before `-C`."""

    def get_usage_pieces(self, ctx: click.Context) -> list[str]:
        return []


def repo_option(positional: bool = False) -> Callable[[_F], _F]:
    """`-C/--path PATH` on a command; with `positional`, its old spelling `dun CMD PATH` still works (hidden from
    the help: scripts and installed service units use it). Both at once must name the same directory."""

    def add(function: _F) -> _F:
        @functools.wraps(function)
        def call(*args: object, path: str | None = None, legacy_path: str | None = None, **kwargs: object) -> Any:
            if legacy_path is not None:
                if path is not None and os.path.realpath(path) != os.path.realpath(legacy_path):
                    raise UsageError(f"two repositories given ({legacy_path} and -C {path}): give one, as -C PATH")
                path = path or legacy_path
            return function(*args, path=path, **kwargs)

        command: Any = click.option("-C", "--path", "path", type=click.Path(file_okay=False), metavar="PATH",
                                    help=REPO_HELP)(call)
        if positional:
            command = click.argument("legacy_path", required=False, cls=_HiddenArgument,
                                     type=click.Path(file_okay=False))(command)
        return command  # type: ignore[no-any-return]

    return add


def agent_names() -> list[str]:
    """Every agent adapter the plugins declare (built-in and third-party), from the one registry."""
    from dun.agents.registry import agent_adapters
    from dun.engine.manager import make_manager

    try:
        names = list(agent_adapters(make_manager()))
    except Exception:  # a broken third-party plugin: the built-in ones are still worth naming
        names = list(agent_adapters(make_manager(entry_points=False)))
    return names[::-1]  # the registry's first (built-in, claude first) leads


class AgentOption(click.Option):
    """An option whose help names every agent, read from the registry only when a help text is drawn (loading
    the adapters costs more than `dun loop`'s start can spare otherwise). `{agents}` in the help is replaced."""

    def get_help_record(self, ctx: click.Context) -> tuple[str, str] | None:
        template = self.help or ""
        self.help = template.replace("{agents}", ", ".join(agent_names()))
        try:
            return super().get_help_record(ctx)
        finally:
            self.help = template

