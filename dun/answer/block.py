"""The status block an agent ends its answer with, and a tolerant, line-by-line parser for it.

    ---DUN_STATUS---
    TASK_COMPLETED: <check id or item reference>
    STATUS: COMPLETE | IN_PROGRESS | BLOCKED
    FILES_MODIFIED: <count>
    EXIT_SIGNAL: true | false
    NEXT_RECOMMENDATION: <one line>
    ---END_DUN_STATUS---

Only a block counts: words in prose ("done", "complete") never do. The last complete block wins; STATUS never
overrides EXIT_SIGNAL; unknown fields are kept; an invalid value is a parse error with its reason.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

START = "---DUN_STATUS---"
END = "---END_DUN_STATUS---"
STATUSES = ("COMPLETE", "IN_PROGRESS", "BLOCKED")
MAX_BLOCK_LINES = 60  # a "block" longer than this is prose that happens to contain a marker
MAX_VALUE_CHARS = 500

# Decorations tolerated around markers and keys: quotes, bold, list bullets, backticks, headings.
_DECOR = r"[\s>*_`#|-]*"
_START_RE = re.compile(rf"^{_DECOR}---\s*DUN_STATUS\s*---{_DECOR}$", re.I)
_END_RE = re.compile(rf"^{_DECOR}---\s*END_DUN_STATUS\s*---{_DECOR}$", re.I)
_FIELD_RE = re.compile(r"^[\s>*_`-]*([A-Za-z][A-Za-z _]*?)[\s*_`]*:[\s*`]*(.*?)[\s*`]*$")
_QUOTED_RE = re.compile(r"^\s*>")
_TRUE = {"true", "yes", "y", "1", "on"}
_FALSE = {"false", "no", "n", "0", "off"}


@dataclass
class StatusBlock:
    status: str
    exit_signal: bool
    task_completed: str | None = None
    files_modified: int | None = None
    next_recommendation: str | None = None
    extra: dict[str, str] = field(default_factory=dict)  # unknown fields, kept

    def to_dict(self) -> dict[str, Any]:
        return {"task_completed": self.task_completed, "status": self.status,
                "files_modified": self.files_modified, "exit_signal": self.exit_signal,
                "next_recommendation": self.next_recommendation, "extra": self.extra}


@dataclass
class RawBlock:
    fields: dict[str, str]
    line: int  # 1-based line of the start marker within the scanned text
    quoted: bool


class BlockScanner:
    """Feed lines in order; keeps only the blocks found, so memory stays bounded on any transcript."""

    def __init__(self) -> None:
        self.blocks: list[RawBlock] = []
        self.notes: list[str] = []
        self.incomplete = False
        self._current: RawBlock | None = None
        self._lines_in_block = 0
        self._lineno = 0

    def feed(self, line: str) -> None:
        self._lineno += 1
        text = line.rstrip("\r\n")
        if "dun_status" in text.lower():  # cheap gate before the regexes
            if _START_RE.match(text):
                if self._current is not None:
                    self.notes.append(f"line {self._lineno}: a new block started before the previous one ended; "
                                      "the earlier one is discarded")
                self._current = RawBlock({}, self._lineno, bool(_QUOTED_RE.match(text)))
                self._lines_in_block = 0
                return
            if _END_RE.match(text):
                if self._current is not None:
                    if _is_template(self._current.fields):
                        self.notes.append(f"line {self._current.line}: the prompt's template, not an answer; ignored")
                    else:
                        self.blocks.append(self._current)
                    self._current = None
                return
        if self._current is None:
            return
        self._lines_in_block += 1
        if self._lines_in_block > MAX_BLOCK_LINES:
            self.notes.append(f"line {self._current.line}: status block without the end marker {END} within "
                              f"{MAX_BLOCK_LINES} lines")
            self.incomplete = True
            self._current = None
            return
        match = _FIELD_RE.match(text)
        if match and text.strip():
            key = match.group(1).strip().upper().replace(" ", "_")
            self._current.fields[key] = match.group(2).strip()[:MAX_VALUE_CHARS]

    @property
    def inside(self) -> bool:
        return self._current is not None

    def skip(self, lines: int) -> None:
        """Lines known to hold no marker, outside any block: only the line count moves."""
        self._lineno += lines

    def finish(self) -> None:
        if self._current is not None:
            self.incomplete = True
            self.notes.append(f"line {self._current.line}: status block without the end marker {END}")
            self._current = None


_TEMPLATE_STATUS = re.compile(r"^\s*(<|COMPLETE\s*\|\s*IN_PROGRESS)", re.I)
_TEMPLATE_EXIT = re.compile(r"^\s*(<|true\s*\|\s*false)", re.I)


def _is_template(fields: dict[str, str]) -> bool:
    """The prompt's own template (`COMPLETE | IN_PROGRESS | BLOCKED`, `<count>`), echoed back, is no answer."""
    status, exit_signal = fields.get("STATUS", ""), fields.get("EXIT_SIGNAL", "")
    return bool(_TEMPLATE_STATUS.match(status) or _TEMPLATE_EXIT.match(exit_signal))


def _first_word(value: str) -> str:
    # tolerate trailing comments: "false  # more to do", "3 (a.py, b.py)", "true."
    word = re.split(r"[\s#(,;]", value.strip(), maxsplit=1)[0]
    return word.strip(".`*\"'").lower()


def _text(value: str | None) -> str | None:
    if value is None:
        return None
    value = value.strip().strip("`\"'").strip()
    return value or None


def interpret(raw: RawBlock) -> tuple[StatusBlock | None, str | None]:
    """Typed fields of a raw block, or (None, reason) for an invalid value or a missing required field."""
    f = dict(raw.fields)
    if "STATUS" not in f:
        return None, "STATUS is missing"
    if "EXIT_SIGNAL" not in f:
        return None, "EXIT_SIGNAL is missing"
    status = _first_word(f.pop("STATUS")).upper().replace("-", "_")
    if status == "IN":  # "IN PROGRESS"
        status = "IN_PROGRESS"
    if status not in STATUSES:
        return None, f"STATUS: invalid value {raw.fields['STATUS']!r} (expected COMPLETE, IN_PROGRESS or BLOCKED)"
    exit_word = _first_word(f.pop("EXIT_SIGNAL"))
    if exit_word not in _TRUE | _FALSE:
        return None, f"EXIT_SIGNAL: invalid value {raw.fields['EXIT_SIGNAL']!r} (expected true or false)"
    files: int | None = None
    if "FILES_MODIFIED" in f:
        word = _first_word(f.pop("FILES_MODIFIED"))
        if not (word.isascii() and word.isdigit()):
            return None, f"FILES_MODIFIED: invalid value {raw.fields['FILES_MODIFIED']!r} (expected a count)"
        files = int(word)
    task = _text(f.pop("TASK_COMPLETED", None))
    if task and task.lower() in ("none", "n/a", "-", "null"):
        task = None
    return StatusBlock(status=status, exit_signal=exit_word in _TRUE, task_completed=task, files_modified=files,
                       next_recommendation=_text(f.pop("NEXT_RECOMMENDATION", None)), extra=f), None


def choose(blocks: list[RawBlock]) -> RawBlock | None:
    """The last complete block wins; a quoted (`>`) example loses to any unquoted block."""
    unquoted = [b for b in blocks if not b.quoted]
    candidates = unquoted or blocks
    return candidates[-1] if candidates else None
