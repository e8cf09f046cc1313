"""Text from tools is untrusted: terminal escape codes are stripped and control characters made visible-safe
before any format shows it (a forced-colour pytest writes escapes even into its JUnit report)."""

from __future__ import annotations

import dataclasses
import functools
import re

from dun.engine.model import CheckResult, Item

# C0 controls but tab and newline, DEL, C1 controls; for XML also lone surrogates and the two non-characters.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_NEEDS_WORK = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]|#x1B")  # one search decides for most strings
REPLACEMENT = "\ufffd"


# The two costly patterns are compiled when first needed (0.55 ms at import, on every `dun check`, for text that
# rarely holds an escape; XML only for JUnit).
@functools.cache
def _ansi() -> re.Pattern[str]:
    # CSI sequences (colours, cursor moves), OSC sequences (titles, hyperlinks) and two-byte escapes; pytest's JUnit
    # writer turns ESC into the literal text "#x1B", so that spelling of a CSI sequence goes too.
    return re.compile(
        r"(?:\x1b|#x1B)\[[0-?]*[ -/]*[@-~]"
        r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"
        r"|\x1b[@-Z\\-_]"
    )


@functools.cache
def _xml_bad() -> re.Pattern[str]:
    return re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff]")


def strip_ansi(text: str) -> str:
    if "\x1b" not in text and "#x1B" not in text:
        return text
    return _ansi().sub("", text)


def safe_text(text: str) -> str:
    """Escape codes removed, CR line ends normalised, other control characters replaced by U+FFFD."""
    if not _NEEDS_WORK.search(text):
        return text
    text = strip_ansi(text)
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return _CONTROL.sub(REPLACEMENT, text)


def xml_text(text: str) -> str:
    """`safe_text`, and nothing XML 1.0 forbids (surrogates from undecodable file names, U+FFFE, U+FFFF)."""
    return _xml_bad().sub(REPLACEMENT, safe_text(text))


def safe_item(item: Item) -> Item:
    text, file = safe_text(item.text), safe_text(item.file) if item.file else item.file
    return item if text is item.text and file is item.file else Item(text=text, file=file, line=item.line)


def safe_result(r: CheckResult) -> CheckResult:
    """The result with every text field safe to print, in any format; the same object when it already is."""
    items = [safe_item(i) for i in r.items]
    signal = safe_text(r.signal)
    if "\n" in signal:
        signal = " ".join(signal.split("\n"))  # the signal is one line
    detail, description = safe_text(r.detail), safe_text(r.description)
    next_ = safe_text(r.next) if r.next else r.next
    if (signal is r.signal and detail is r.detail and next_ is r.next and description is r.description
            and all(new is old for new, old in zip(items, r.items, strict=True))):
        return r
    return dataclasses.replace(r, signal=signal, detail=detail, next=next_, description=description, items=items)
