"""The paper watch's hooks. Imported by every command that builds the plugin manager (`dun check` too), so it
imports only what those already have; the check's code, the commands, the feeds and feedparser load when used."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from dun.config.schema import Field
from dun.engine.checkapi import CheckContext, CheckSpec, CheckType
from dun.engine.hookspecs import hookimpl

if TYPE_CHECKING:
    import click

    from dun.engine.model import Outcome

FIELDS = {
    "max_items": Field("int", "Unread papers listed; the rest are counted.", default=20, minimum=1),
}


def _run(spec: CheckSpec, ctx: CheckContext) -> Outcome:
    from dun.papers.check import run

    return run(spec, ctx)


def _inputs(spec: CheckSpec, ctx: CheckContext) -> list[str]:
    from dun.papers.check import inputs

    return inputs(spec, ctx)


@hookimpl
def dun_check_types() -> list[CheckType]:
    return [CheckType("papers", "Papers `dun papers poll` found that nobody has looked at yet.", FIELDS, _run,
                      inputs=_inputs)]


@hookimpl
def dun_manifest_dirs(root: Path) -> list[Path]:
    return [Path(__file__).resolve().parent / "manifests"]


@hookimpl
def dun_commands() -> list[click.Command]:
    from dun.papers.commands import papers_group

    return [papers_group]
