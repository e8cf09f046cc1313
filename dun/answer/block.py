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
MAX_FIELD_LINE = 4096  # a field line is read up to here: the value is cut at MAX_VALUE_CHARS anyway
MAX_BLOCKS = 50  # blocks kept (the last ones, and the last unquoted one): the last wins, earlier ones are context
MAX_NOTES = 20

# Decorations tolerated around markers and keys: quotes, bold, list bullets, backticks, headings.
_DECOR = r"[\s>*_`#|-]*"
_START_RE = re.compile(rf"^{_DECOR}---\s*DUN_STATUS\s*---{_DECOR}$", re.I)
_END_RE = re.compile(rf"^{_DECOR}---\s*END_DUN_STATUS\s*---{_DECOR}$", re.I)
_KEY_RE = re.compile(r"[A-Za-z][A-Za-z _]*")  # one character class: matched in linear time
_LEAD = ">*_`-"  # before a key, besides whitespace: quotes, bold, bullets, backticks
_KEY_TAIL = "*_`"  # between a key and its colon
_VALUE_EDGE = "*`"  # around a value
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


def parse_field(text: str) -> tuple[str, str] | None:
    """`KEY: value` of a block line, decorations tolerated (`**STATUS:** done`, `- EXIT_SIGNAL: true`), or None.

    Plain string operations instead of one regex with lazy and overlapping quantifiers, whose backtracking made a
    long line cost its length squared.
    """
    text = text[:MAX_FIELD_LINE]
    colon = text.find(":")
    if colon < 0:
        return None
    start, end = _trim(text, 0, colon, _LEAD, ""), _trim(text, 0, colon, "", _KEY_TAIL)
    key = text[start:end] if start < end else ""
    if not key or _KEY_RE.fullmatch(key) is None:
        return None
    value = text[_trim(text, colon + 1, len(text), _VALUE_EDGE, ""):_trim(text, colon + 1, len(text), "", _VALUE_EDGE)]
    return key.strip().upper().replace(" ", "_"), value.strip()


def _trim(text: str, start: int, end: int, lead: str, tail: str) -> int:
    """With `lead`: the first index from `start` that is neither whitespace nor in `lead`; with `tail`: one past the
    last such index before `end`."""
    if lead:
        while start < end and (text[start].isspace() or text[start] in lead):
            start += 1
        return start
    while end > start and (text[end - 1].isspace() or text[end - 1] in tail):
        end -= 1
    return end


class BlockScanner:
    """Feed lines in order; keeps only the last blocks and a few notes, so memory stays bounded on any transcript."""

    def __init__(self) -> None:
        self.blocks: list[RawBlock] = []
        self.notes: list[str] = []
        self.incomplete = False
        self._current: RawBlock | None = None
        self._lines_in_block = 0
        self._lineno = 0
        self._last_unquoted: RawBlock | None = None
        self._dropped_blocks = 0
        self._dropped_notes = 0

    def _note(self, text: str) -> None:
        if len(self.notes) < MAX_NOTES:
            self.notes.append(text)
        else:
            self._dropped_notes += 1

    def _keep(self, block: RawBlock) -> None:
        self.blocks.append(block)
        if not block.quoted:
            self._last_unquoted = block
        if len(self.blocks) > 2 * MAX_BLOCKS:  # trimmed in batches: linear overall
            dropped = self.blocks[:-MAX_BLOCKS]
            self.blocks = self.blocks[-MAX_BLOCKS:]
            self._dropped_blocks += len(dropped)
            last = self._last_unquoted
            if last is not None and all(b.quoted for b in self.blocks):
                self.blocks.insert(0, last)  # choose() still finds the last unquoted block
                self._dropped_blocks -= 1

    def feed(self, line: str) -> None:
        self._lineno += 1
        text = line.rstrip("\r\n")
        if "dun_status" in text.lower():  # cheap gate before the regexes
            if _START_RE.match(text):
                if self._current is not None:
                    self._note(f"line {self._lineno}: a new block started before the previous one ended; "
                               "the earlier one is discarded")
                self._current = RawBlock({}, self._lineno, bool(_QUOTED_RE.match(text)))
                self._lines_in_block = 0
                return
            if _END_RE.match(text):
                if self._current is not None:
                    if _is_template(self._current.fields):
                        self._note(f"line {self._current.line}: the prompt's template, not an answer; ignored")
                    else:
                        self._keep(self._current)
                    self._current = None
                return
        if self._current is None:
            return
        self._lines_in_block += 1
        if self._lines_in_block > MAX_BLOCK_LINES:
            self._note(f"line {self._current.line}: status block without the end marker {END} within "
                       f"{MAX_BLOCK_LINES} lines")
            self.incomplete = True
            self._current = None
            return
        found = parse_field(text)
        if found is not None:
            key, value = found
            self._current.fields[key] = value[:MAX_VALUE_CHARS]

    @property
    def inside(self) -> bool:
        return self._current is not None

    def skip(self, lines: int) -> None:
        """Lines known to hold no marker, outside any block: only the line count moves."""
        self._lineno += lines

    def finish(self) -> None:
        if self._current is not None:
            self.incomplete = True
            self._note(f"line {self._current.line}: status block without the end marker {END}")
            self._current = None
        if self._dropped_blocks:
            self.notes.append(f"{self._dropped_blocks} earlier blocks not kept (only the last {MAX_BLOCKS} are)")
            self._dropped_blocks = 0
        if self._dropped_notes:
            self.notes.append(f"{self._dropped_notes} more notes like these not shown")
            self._dropped_notes = 0


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
