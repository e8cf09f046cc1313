"""What decides whether a check's result may be reused (`inputs:`, `ttl:`, `flaky:`): the same schema in a plugin
manifest's check (dun/engine/manifest.py) and in the config's `check.overrides`, which adds them to any check,
built-in ones included (a built-in pytest whose tests read a file under $HOME)."""

from __future__ import annotations

from dataclasses import replace

from dun.config.schema import Field

INPUT_FIELDS: dict[str, Field] = {
    "files": Field("list", "Globs of files read, walked on disk from their literal directory (ignored paths "
                   "included; `~` and `$VAR` expanded); a literal directory names its listing.", default=[],
                   item=Field("str", "glob"), scalar_ok=True),
    "trees": Field("list", "Directories read whole, such as installed dependencies (`node_modules`): any file beneath "
                   "written, even in place, is a change (tool caches `__pycache__`, `.cache`, `.vite` left out; links "
                   "not followed). `~` and `$VAR` expanded.", default=[], item=Field("str", "directory"),
                   scalar_ok=True),
    "env": Field("list", "Environment variables read (even ones dun otherwise leaves out of its keys, e.g. DISPLAY).",
                 default=[], item=Field("str", "name"), scalar_ok=True),
    "programs": Field("list", "Programs run, found on PATH: installing or upgrading one is a change.", default=[],
                      item=Field("str", "program"), scalar_ok=True),
    "git-refs": Field("list", "Git ref patterns read, as `git for-each-ref` takes them (e.g. refs/tags).",
                      default=[], item=Field("str", "pattern"), scalar_ok=True),
    "git-config": Field("list", "Git config keys read.", default=[], item=Field("str", "key"), scalar_ok=True),
}
REUSE_FIELDS: dict[str, Field] = {
    "inputs": Field("map", "What the check reads beyond the work tree; a `command` check's result is reused only when "
                    "it declares them.", default=None, fields=INPUT_FIELDS),
    "ttl": Field("float", "Seconds a result may be reused at most, even with its inputs unchanged.", default=None,
                 minimum=0),
    "flaky": Field("bool", "A failure is run again rather than reused.", default=False),
}
# `check.overrides.ID`: only the keys given change the check (a left-out `flaky` keeps the manifest's)
OVERRIDE_FIELDS: dict[str, Field] = {name: replace(spec, default=None) for name, spec in REUSE_FIELDS.items()}
