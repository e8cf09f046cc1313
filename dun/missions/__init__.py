"""Mission templates: a MISSION.md and the manifest of checks that hold it to its success criteria.

A template is a directory `NAME/` holding `MISSION.md` and, optionally, `checks.yaml` (a manifest written to
`.dun/plugins/mission-NAME.yaml`). dun ships six (templates/missions/); a user's own directories come first, so a
template of the same name replaces the built-in one.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from dun.core.atomic import inside, write_text_atomic
from dun.core.errors import UsageError
from dun.core.resources import data_dir, user_config_dir
from dun.core.textfiles import read_text

BUILTIN = ("implementation", "research", "survey", "deepdive", "tests", "docs")
MISSION_FILE = "MISSION.md"
CHECKS_FILE = "checks.yaml"
MAX_TEMPLATE_BYTES = 256 * 1024
_PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_-]*)\s*\}\}")  # a hyphen: a typo of one (paper-id), an error
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
# What a placeholder of a MISSION.md may name. A manifest may name only `slug`: the others hold free text (a paper's
# title from a feed) that could break the YAML or add a check.
DEFAULTS = {
    "topic": "TOPIC (replace it)",
    "slug": "paper",
    "paper_id": "(the paper's id)",
    "paper_title": "the paper (replace with its title)",
    "paper_authors": "(its authors)",
    "paper_link": "(a link to it)",
    "paper_published": "(when it appeared)",
    "paper_summary": "(its abstract)",
}
MANIFEST_VARIABLES = ("slug",)
_SLUG = re.compile(r"[^a-z0-9]+")


@dataclass(frozen=True)
class Rendered:
    """A rendered template: the mission's text and, when the template has checks, the manifest's."""

    name: str
    source: Path
    mission: str
    manifest: str | None

    @property
    def manifest_rel(self) -> str:
        """Where the manifest goes, relative to the repository root."""
        from dun.store.layout import PLUGINS

        return f"{PLUGINS}/mission-{self.name}.yaml"

    def files(self) -> dict[str, str]:
        """What the mission writes: path relative to the root -> text."""
        return {MISSION_FILE: self.mission, **({self.manifest_rel: self.manifest} if self.manifest else {})}


def place(root: Path, rel: str, text: str, force: bool) -> str:
    """Write `text` to `root/rel` unless a file is there (then return "kept"); with `force` move the file aside
    first (FILE.bak, FILE.bak.1, ...: a backup is never overwritten). Returns what was done, for the user."""
    dest = root / rel
    if Path(rel).parent != Path():  # a directory on the way that is a link (.dun/plugins -> elsewhere): refused
        inside(root, Path(rel).parent.as_posix())
    if dest.exists() or dest.is_symlink():
        if not force:
            return "kept"
        aside = backup(dest).relative_to(root)
        done = f"replaced {rel} (the previous one is {aside})"
    else:
        done = f"wrote {rel}"
    write_text_atomic(dest, text)  # a link is replaced (renamed over), never written through
    os.chmod(dest, 0o644)
    return done


def backup(path: Path) -> Path:
    """`FILE.bak` (or `.bak.N`, the first that is free): the file moved aside, never overwritten."""
    target, n = path.with_name(path.name + ".bak"), 1
    while target.exists() or target.is_symlink():
        target, n = path.with_name(f"{path.name}.bak.{n}"), n + 1
    os.replace(path, target)
    return target


def user_dir() -> Path:
    """`$XDG_CONFIG_HOME/dun/missions/` (default ~/.config/dun/missions/): the user's own templates."""
    return user_config_dir() / "missions"


def named_dir(base: Path, value: str, what: str) -> Path:
    """The templates directory `value` (a flag's or a config key's: `~` expanded, relative to `base`); UsageError
    naming `what` when it is not a directory."""
    chosen = base / Path(value).expanduser()
    if not chosen.is_dir():
        raise UsageError(f"{what} {value}: not a directory")
    return chosen


def search_path(extra: list[Path] | None = None) -> list[Path]:
    """Where templates are looked up, first match wins: `extra` (--mission-dir, missions.dir), the user's, dun's."""
    return [*(extra or []), user_dir(), data_dir("templates") / "missions"]


def available(extra: list[Path] | None = None) -> list[str]:
    """Every template name on the search path, sorted."""
    names: set[str] = set()
    for base in search_path(extra):
        if base.is_dir():
            names.update(p.name for p in base.iterdir() if (p / MISSION_FILE).is_file() and _NAME.match(p.name))
    return sorted(names)


def find(name: str, extra: list[Path] | None = None) -> Path:
    """The template directory called `name`; UsageError naming the choices when there is none."""
    if not _NAME.match(name):
        raise UsageError(f"mission template name {name!r}: letters, digits, '_', '.', '-' only")
    for base in search_path(extra):
        if (base / name / MISSION_FILE).is_file():
            return base / name
    choices = ", ".join(available(extra))
    raise UsageError(f"unknown mission template '{name}'; choose from {choices}")


def slugify(text: str, limit: int = 60) -> str:
    """A file-name-safe form of `text`: lowercase letters, digits and '-'."""
    slug = _SLUG.sub("-", text.lower()).strip("-")[:limit].strip("-")
    return slug or "mission"


def render(name: str, variables: dict[str, str] | None = None, extra: list[Path] | None = None) -> Rendered:
    """Fill the template's placeholders (`{{name}}`) with `variables` over DEFAULTS; an unknown placeholder is a
    UsageError naming the file and line, never left for the agent to puzzle over."""
    directory = find(name, extra)
    values = {**DEFAULTS, **(variables or {})}
    values["slug"] = slugify(values["slug"])
    mission = _fill(directory / MISSION_FILE, values, tuple(DEFAULTS))
    checks = directory / CHECKS_FILE
    # a checks.yaml that is there but no readable file (a directory, a FIFO) is an error, never silently no checks
    manifest = _fill(checks, values, MANIFEST_VARIABLES) if os.path.lexists(checks) else None
    return Rendered(name=name, source=directory, mission=mission, manifest=manifest)


def _fill(path: Path, values: dict[str, str], allowed: tuple[str, ...]) -> str:
    text, problem = read_text(path, limit=MAX_TEMPLATE_BYTES)
    if text is None:
        raise UsageError(f"{path}: cannot read the template: {problem}")
    for number, line in enumerate(text.splitlines(), start=1):
        for match in _PLACEHOLDER.finditer(line):
            if match[1] not in allowed:
                raise UsageError(f"{path}:{number}: unknown placeholder {match[0]} (known here: "
                                 f"{', '.join('{{' + a + '}}' for a in allowed)})")
    return _PLACEHOLDER.sub(lambda m: values[m[1]], text)
