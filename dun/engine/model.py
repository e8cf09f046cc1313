"""The data every part of dun shares: check results, items and levels."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from pathlib import Path


class Status(enum.StrEnum):
    PASS = "pass"
    FAIL = "fail"
    WARN = "warn"
    SKIP = "skip"
    ERROR = "error"


class Level(enum.StrEnum):
    HIGH = "HIGH"
    MEDIUM = "MEDIUM"
    LOW = "LOW"


# Priorities are integers, lower is more urgent; these bounds split them into levels.
HIGH_BELOW = 30
MEDIUM_BELOW = 70
DEFAULT_PRIORITY = 50


def level_for(priority: int, status: Status) -> Level | None:
    """The level of a result: fail and error rank one level above warn at the same priority.

    fail/error: priority < 30 is HIGH, < 70 MEDIUM, else LOW.
    warn:       priority < 30 is MEDIUM, else LOW.
    pass/skip:  no level.
    """
    if status in (Status.FAIL, Status.ERROR):
        if priority < HIGH_BELOW:
            return Level.HIGH
        return Level.MEDIUM if priority < MEDIUM_BELOW else Level.LOW
    if status is Status.WARN:
        return Level.MEDIUM if priority < HIGH_BELOW else Level.LOW
    return None


@dataclass(frozen=True)
class Item:
    """One concrete piece of outstanding work: a file and line when known, and a line of text."""

    text: str
    file: str | None = None
    line: int | None = None

    def to_dict(self) -> dict[str, object]:
        return {"file": self.file, "line": self.line, "text": self.text}

    def location(self) -> str:
        if self.file and self.line:
            return f"{self.file}:{self.line}"
        return self.file or ""


MORE_PREFIX = "... and "


def more_item(count: int, noun: str = "") -> Item:
    """The item standing for `count` items a check left out (the prompt reads the count back: `folded_count`)."""
    return Item(text=f"{MORE_PREFIX}{count} more" + (f" {noun}" if noun else ""))


def cap_items(items: list[Item], limit: int, noun: str = "") -> list[Item]:
    """At most `limit` items, the rest counted in one `more_item`."""
    if len(items) <= limit:
        return items
    return [*items[:limit], more_item(len(items) - limit, noun)]


def folded_count(item: Item) -> int | None:
    """The count of a `more_item`, or None for a real item."""
    if not item.text.startswith(MORE_PREFIX):  # asked of every item of a prompt (10,000 boxes): split no real one
        return None
    words = item.text.split()
    if len(words) > 2 and words[2].isdigit():
        return int(words[2])
    return None


@dataclass
class Outcome:
    """What a check type's run function returns; the engine turns it into a CheckResult."""

    status: Status
    signal: str
    detail: str = ""
    items: list[Item] = field(default_factory=list)
    next: str | None = None
    # an error that repeats while the check's inputs are unchanged (a file it refuses to read): kept and reused like
    # any result; any other error (a crash, a timeout, a tool that failed) is run again next time
    lasting: bool = False


@dataclass
class CheckResult:
    """What one check found, as every output format and the loop read it."""

    id: str
    plugin: str
    type: str
    status: Status
    priority: int
    signal: str
    detail: str = ""
    next: str | None = None
    items: list[Item] = field(default_factory=list)
    duration_s: float = 0.0
    description: str = ""
    cached: bool = False  # reused from an earlier run with the same inputs (`dun check` without --no-cache)
    since: float | None = None  # when a reused result was made (seconds since the epoch)
    lasting: bool = False  # `Outcome.lasting`: an error the result cache may keep

    @property
    def level(self) -> Level | None:
        return level_for(self.priority, self.status)

    def to_dict(self) -> dict[str, object]:
        level = self.level
        return {
            "id": self.id,
            "plugin": self.plugin,
            "type": self.type,
            "status": self.status.value,
            "priority": self.priority,
            "level": level.value if level else None,
            "signal": self.signal,
            "detail": self.detail,
            "next": self.next,
            "items": [i.to_dict() for i in self.items],
            "duration_s": round(self.duration_s, 3),
        }


ACTIONABLE_STATUSES = (Status.FAIL, Status.ERROR, Status.WARN)


@dataclass
class Report:
    """The results of one run, ordered by plugin priority, check priority, then id."""

    root: Path
    results: list[CheckResult]
    duration_s: float = 0.0
    warn_is_actionable: bool = False
    notes: list[str] = field(default_factory=list)

    def actionable(self) -> list[CheckResult]:
        statuses = {Status.FAIL, Status.ERROR} | ({Status.WARN} if self.warn_is_actionable else set())
        return [r for r in self.results if r.status in statuses]

    def cached(self) -> int:
        return sum(1 for r in self.results if r.cached)

    def counts(self) -> dict[str, int]:
        out = {s.value: 0 for s in Status}
        for r in self.results:
            out[r.status.value] += 1
        return out
