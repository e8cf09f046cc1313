"""The paper watch's hooks. Imported by every command that builds the plugin manager (`dun check` too), so it
imports only what those already have; the commands, the feeds and feedparser load when a `dun papers` command runs."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from dun.engine.checkapi import CheckType
from dun.engine.hookspecs import hookimpl

if TYPE_CHECKING:
    import click


@hookimpl
def dun_check_types() -> list[CheckType]:
    from dun.papers import check

    return [CheckType("papers", "Papers `dun papers poll` found that nobody has looked at yet.", check.FIELDS,
                      check.run, inputs=check.inputs)]


@hookimpl
def dun_manifest_dirs(root: Path) -> list[Path]:
    return [Path(__file__).resolve().parent / "manifests"]


@hookimpl
def dun_commands() -> list[click.Command]:
    from dun.papers.commands import papers_group

    return [papers_group]
