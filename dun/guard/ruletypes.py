"""The shape of a rule: an id, a description and one or more `Match` descriptions over a simple command's `Facts`.

A rule fires on a simple command when any of its matches holds, and a match holds when every condition it sets holds.
Only the data lives in the rules modules (rules_local.py, rules_shared.py, rules_data.py, rules_cloud.py); rules.py
interprets it.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Match:
    programs: tuple[str, ...] = ()  # globs over the program's base name
    programs_none: tuple[str, ...] = ()  # globs: the program is none of these
    subcommands: tuple[str, ...] = ()  # globs over the first operand (git's subcommand)
    subcommands_none: tuple[str, ...] = ()  # globs: the first operand is none of these
    actions: tuple[str, ...] = ()  # globs over the operand after the subcommand (aws ec2 terminate-instances)
    flags_any: tuple[str, ...] = ()  # globs: one of the flags (-f, --force, --prune=now) is given
    flags_none: tuple[str, ...] = ()  # globs: none of these flags is given
    values_any: tuple[str, ...] = ()  # globs over `option=value` (-X=DELETE, --expire=now, -c=alias.x=!sh)
    values_none: tuple[str, ...] = ()  # globs: none of the `option=value` strings matches
    args_any: tuple[str, ...] = ()  # globs: one of the operands after the subcommand matches
    args_none: tuple[str, ...] = ()  # globs: none of the operands after the subcommand matches
    verbs: tuple[str, ...] = ()  # globs: one of the leading words (Facts.verbs: `X compute instance delete`) matches
    verbs_none: tuple[str, ...] = ()  # globs: none of the leading words matches
    effects: tuple[str, ...] = ()  # delete, write, chmod, mount, use: the command has such an effect ...
    where: tuple[str, ...] = ()  # ... on a path in one of these categories
    recursive: bool | None = None  # ... which is (or is not) recursive
    paths: tuple[str, ...] = ()  # ... whose path matches one of these globs
    queries: tuple[str, ...] = ()  # regexes (case-insensitive) over the SQL/queries it sends
    signals: tuple[str, ...] = ()  # one of these signals is raised (see effects.Facts.signals)
    signals_none: tuple[str, ...] = ()  # none of these signals is raised
    exec_download: bool = False  # it runs code fetched from the network
    download_exec: bool = False  # it runs a file downloaded earlier in the same command line


@dataclass(frozen=True)
class Rule:
    id: str
    description: str
    matches: tuple[Match, ...]
