"""A paper as the watch keeps it: one JSON object a line in `.dun/papers.jsonl`, its id stable across feeds."""

from __future__ import annotations

import hashlib
import html
import re
from dataclasses import asdict, dataclass, field
from typing import Any

from dun.core.kinds import PaperStatus

MAX_TITLE = 300
MAX_SUMMARY = 2000
MAX_AUTHORS = 20
_ARXIV = re.compile(r"(?<![\d.])(\d{4}\.\d{4,5})(?:v\d+)?(?![\d])")
_OLD_ARXIV = re.compile(r"arxiv\.org/abs/([a-z-]+(?:\.[A-Z]{2})?/\d{7})")
_TAG = re.compile(r"<[^>]*>")
_SPACE = re.compile(r"\s+")
# control characters (a terminal's escapes too) and the separators some readers break lines at: a space instead
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")
MAX_LINK = 2000
_ID_CHARS = re.compile(r"[^A-Za-z0-9._:/-]+")


@dataclass
class Paper:
    id: str
    title: str
    link: str = ""
    authors: list[str] = field(default_factory=list)
    summary: str = ""
    published: str = ""
    feeds: list[str] = field(default_factory=list)
    first_seen: str = ""
    status: str = PaperStatus.NEW

    def to_dict(self) -> dict[str, object]:
        return asdict(self)

    @classmethod
    def from_dict(cls, record: dict[str, Any]) -> Paper:
        """A paper from a stored record; a field of the wrong type is left at its default (a hand-edited line
        loses that field, not the paper)."""
        values: dict[str, Any] = {"id": str(record["id"]), "title": text(record.get("title"), MAX_TITLE)}
        for key in ("link", "summary", "published", "first_seen"):
            if isinstance(record.get(key), str):
                values[key] = record[key]
        for key in ("authors", "feeds"):
            if isinstance(record.get(key), list):
                values[key] = [str(v) for v in record[key] if isinstance(v, str)]
        status = record.get("status")
        values["status"] = status if status in set(PaperStatus) else PaperStatus.NEW
        return cls(**values)

    @property
    def slug(self) -> str:
        """A file-name-safe form of the id: `arxiv:2401.01234` -> `arxiv-2401-01234`."""
        from dun.missions import slugify

        return slugify(self.id)


def text(value: object, limit: int) -> str:
    """Feed text made one plain line: tags dropped, entities decoded, whitespace collapsed, at most `limit` chars.
    What a feed says reaches the agent's prompt and MISSION.md: as one line it cannot add a box or a heading."""
    if not isinstance(value, str):
        return ""
    plain = _SPACE.sub(" ", _CONTROL.sub(" ", html.unescape(_TAG.sub(" ", value)))).strip()
    return plain if len(plain) <= limit else plain[:limit - 1].rstrip() + "…"


def line(value: object, limit: int) -> str:
    """A feed's link or date as one line, kept as given otherwise (no tags to drop, no entities to decode): it reaches
    MISSION.md and the prompt as `text` does."""
    if not isinstance(value, str):
        return ""
    return _SPACE.sub(" ", _CONTROL.sub(" ", value)).strip()[:limit]


def paper_id(*, arxiv: str = "", doi: str = "", native: str = "", link: str = "", title: str = "") -> str:
    """One id for a paper whichever feed names it: `arxiv:NNNN.NNNNN` (any version) when any of the given values
    holds an arXiv id, else `doi:...`, else the feed's own id or link (a short hash when it is long or odd)."""
    candidates = [arxiv] + [v for v in (native, link) if "arxiv" in v.lower()]
    for value in candidates:
        match = _ARXIV.search(value) or _OLD_ARXIV.search(value)
        if match:
            return f"arxiv:{match[1]}"
    if doi and line(doi, len(doi)) == doi.strip() and " " not in doi.strip():  # a DOI is one word
        return "doi:" + doi.strip().lower().removeprefix("https://doi.org/").removeprefix("doi:")
    key = native or link or title
    if key and len(key) <= 64 and "://" not in key and not _ID_CHARS.search(key):
        return key
    return "h:" + hashlib.sha256(key.encode("utf-8", "replace")).hexdigest()[:12]
