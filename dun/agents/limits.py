"""Classify a failed agent call (rate or usage limit, auth, network, budget, turns) and read when a limit resets, from
the facts dun.answer.transcript extracts and the tail of the raw output."""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta, tzinfo
from datetime import time as clock
from email.utils import parsedate_to_datetime
from zoneinfo import ZoneInfo

from dun.core.kinds import ErrorKind

ERROR_KINDS = tuple(str(kind) for kind in ErrorKind)
# Limits are 5-hour and 7-day windows: a reset outside [now - 1 day, now + 8 days] is a misreading or stale.
BEHIND, AHEAD = 86400.0, 8 * 86400.0
_I = re.IGNORECASE


@dataclass(frozen=True)
class AgentError:
    kind: str  # one of ERROR_KINDS
    message: str  # one line, <= 300 chars
    reset_at: float | None  # epoch seconds when the agent said the limit resets, else None


# Wordings, first match wins. Usage limits come first because their texts often carry 429 too; "quota" is settled
# later (usage_limit when a reset time is given, else rate_limit). Bare status numbers only count beside a word
# like "status" so that a line number in a stack trace is not read as one.
_PATTERNS = [(kind, re.compile(p, _I)) for kind, p in (
    ("usage_limit", r"usage[ _]limit|hit your (?:usage )?limit|out of extra usage|limit reached\|\d"
                    r"|\b(?:5-hour|five-hour|weekly|daily|session|opus|sonnet) limit reached"),
    ("quota", r"\b(?:usage|quota)\s+(?:\w+\s+)?(?:is\s+|has been\s+|was\s+)?(?:exhausted|exceeded|reached)"
              r"|\b(?:exhausted|exceeded|reached)\s+(?:your\s+|the\s+)?(?:\w+\s+)?(?:usage|quota)\b"),
    ("max_turns", r"max(?:imum)?[ _-]?(?:session[ _-]?)?turns|turn limit"),
    ("budget", r"max(?:imum)?[ _-]?budget|budget (?:exceeded|limit|reached)"),
    ("auth", r"invalid (?:x-)?api[ _-]?key|fix external api key|authenticat|unauthori[sz]ed|\bforbidden\b"
             r"|permission_error|not logged in|/login\b|oauth token|(?:status|error|code|http)\W{0,3}40[13]\b"
             r"|\(40[13]\)"),
    ("rate_limit", r"\b429\b|rate[ _-]?limit|too many requests|quota|resource[ _]exhausted"),
    ("network", r"overloaded|connection|timed? ?out|network|stream disconnected|econnre(?:set|fused)|enotfound"
                r"|eai_again|socket hang up|service unavailable|bad gateway|internal server error|fetch failed"
                r"|(?:status|error|code|http)\W{0,3}5\d\d\b|\(5\d\d\)|\b529\b"),
)]
_STATUS = ((429, 429, "rate_limit"), (401, 401, "auth"), (403, 403, "auth"), (408, 408, "network"),
           (500, 599, "network"))
# Claude's own verdict beats any wording in the result text.
_SUBTYPES = {"error_max_budget_usd": ("budget", "reached --max-budget-usd"),
             "error_max_turns": ("max_turns", "reached --max-turns")}
_GEMINI_TURN_LIMIT = 53  # the Gemini CLI's documented exit code for its turn limit

_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_MON = "(?:" + "|".join(_MONTHS) + r")[a-z]*\.?"
_TRIGGER = r"(?:\breset(?:s|ting)?|\btry again|\buntil)\s+(?:on\s+|at\s+)?"
_UNIT = r"(?:milliseconds?|ms|seconds?|secs?|s|minutes?|mins?|m|hours?|hrs?|h|days?|d)\b"
_PART = r"(\d{1,12}(?:\.\d{1,6})?)\s*(" + _UNIT + ")"
_RE_EPOCH = re.compile(r"limit reached\|(\d{9,13})\b|\breset_?s?_?at\W{0,4}(\d{10,13})\b", _I)
_RE_ISO = re.compile(_TRIGGER + r"(\d{4}-\d{2}-\d{2}(?:[t ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,6})?)?)?"
                     r"(?:z|[+-]\d{2}:?\d{2})?)(?![\w:])", _I)
_RE_CLOCK = re.compile(
    _TRIGGER + r"(?:(?P<mon>" + _MON + r")\s+(?P<day>\d{1,2})(?:st|nd|rd|th)?,?\s+(?:(?P<year>\d{4}),?\s+)?"
    r"(?:at\s+)?)?(?P<h>\d{1,2})(?::(?P<min>\d{2}))?\s*(?P<ampm>[ap]\.?m\b\.?)?(?![\w:])"
    r"(?:\s*\((?P<zone>[a-z][\w/+-]{0,63})\)|\s+(?P<bare>utc|gmt)\b)?", _I)
_RE_HTTP_DATE = re.compile(r"retry-after:\s*(\w{3}, \d{1,2} \w{3} \d{4} \d{2}:\d{2}:\d{2} GMT)", _I)
_RE_AFTER = re.compile(r"(?:retry[-_ ]?(?:after|delay)|resets?_in_seconds)\W{0,4}(\d{1,12}(?:\.\d{1,6})?)(?:\s*("
                       + _UNIT + "))?", _I)  # a bare number is seconds, as in the HTTP header
_RE_DELAY = re.compile(r"\b(?:in|wait)\s+(" + _PART + r"(?:\s*,?\s*(?:and\s+)?" + _PART + ")*)", _I)
_RE_PART = re.compile(_PART, _I)
_ALIASES = {"pt": "America/Los_Angeles", "pst": "America/Los_Angeles", "pdt": "America/Los_Angeles",
            "et": "America/New_York", "edt": "America/New_York", "bst": "Europe/London"}


def classify(agent: Mapping[str, object], exit_code: int | None, output_tail: str, now: float | None = None,
             tz_default: str | None = None) -> AgentError | None:
    """None when the call did not fail. `agent` is ParseResult.agent; `output_tail` is the last ~4 KB of the raw
    output (stderr+stdout), used for CLIs that only print text."""
    now = time.time() if now is None else now
    agent = agent if isinstance(agent, dict) else {}
    subtype = agent.get("subtype")
    is_error = agent.get("is_error") is True
    error_subtype = isinstance(subtype, str) and subtype.startswith("error")
    if not (is_error or error_subtype or exit_code not in (0, None)):
        return None  # prose about rate limits in a successful answer is not an error
    excerpt = agent.get("result_excerpt") if is_error or error_subtype else None
    fact = next((t for t in (agent.get("error"), excerpt) if isinstance(t, str) and t.strip()), None)
    # The tail is read only without facts: its JSON event lines (keys like "rate_limit_event") would mislead.
    text = fact if fact is not None else "\n".join(
        line for line in str(output_tail or "").splitlines() if not line.lstrip().startswith(("{", "}", '"')))
    kind, line = _match(text)
    message = fact if fact is not None else line
    status = _status_kind(agent.get("api_error_status"))
    if isinstance(subtype, str) and subtype in _SUBTYPES:
        kind = _SUBTYPES[subtype][0]
        message = message or f"{_SUBTYPES[subtype][1]} ({subtype})"
    elif status and not (status == "rate_limit" and kind in ("usage_limit", "quota")):
        kind = status
    elif kind is None and exit_code == _GEMINI_TURN_LIMIT:
        kind = "max_turns"
    limit = agent.get("rate_limit")
    limit = limit if isinstance(limit, dict) else {}
    rejected = limit.get("status") == "rejected"
    kind = "usage_limit" if rejected and kind in (None, "rate_limit", "quota", "other") else kind or "other"
    reset = None
    if kind in ("rate_limit", "usage_limit", "quota"):
        exact = _window(_epoch(limit.get("resetsAt")), now) if rejected or kind == "usage_limit" else None
        reset = exact if rejected and exact is not None else parse_reset_time(text, now, tz_default) or exact
    if kind == "quota":
        kind = "usage_limit" if reset is not None else "rate_limit"
    if not message:
        lines = [x for x in text.splitlines() if x.strip()]
        message = (f"usage limit reached ({limit.get('rateLimitType') or 'rejected'})" if rejected
                   else lines[-1] if lines else f"exited with code {exit_code}" if exit_code not in (0, None)
                   else "the agent reported an error")
    return AgentError(kind, " ".join(message.split())[:300] or kind, reset)


def _match(text: str) -> tuple[str | None, str]:
    """The first pattern's kind and the line it matched in."""
    for kind, pattern in _PATTERNS:
        found = pattern.search(text)
        if found:
            start = text.rfind("\n", 0, found.start()) + 1
            end = text.find("\n", found.end())
            return kind, text[start: end if end >= 0 else len(text)]
    return None, ""


def _status_kind(value: object) -> str | None:
    code = value if isinstance(value, int) and not isinstance(value, bool) else None
    if isinstance(value, str) and re.fullmatch(r"[0-9]{3}", value.strip()):
        code = int(value)
    return next((kind for low, high, kind in _STATUS if code is not None and low <= code <= high), None)


def parse_reset_time(text: str, now: float, tz_default: str | None = None) -> float | None:
    """When the text says the limit resets, as an absolute epoch; None when no (believable) time is given.
    Wall-clock times without a known zone are read in `tz_default`, else in local time."""
    if not isinstance(text, str):
        return None
    readers: list[tuple[re.Pattern[str], Callable[[re.Match[str], float, str | None], float | None]]] = [
        (_RE_EPOCH, lambda m, n, z: _epoch(m[1] or m[2])), (_RE_ISO, _iso), (_RE_CLOCK, _clock),
        (_RE_HTTP_DATE, lambda m, n, z: parsedate_to_datetime(m[1]).timestamp()),
        (_RE_AFTER, lambda m, n, z: n + float(m[1]) * _unit(m[2] or "s")),
        (_RE_DELAY, lambda m, n, z: n + sum(float(p[1]) * _unit(p[2]) for p in _RE_PART.finditer(m[1]))),
    ]
    for pattern, read in readers:  # absolute times first: they are exact, delays drift
        for found in pattern.finditer(text):
            try:
                value = _window(read(found, now, tz_default), now)
            except (ValueError, OverflowError, OSError, TypeError):
                continue  # a date that does not exist, like Feb 30
            if value is not None:
                return value
    return None


def _window(value: float | None, now: float) -> float | None:
    return value if value is not None and now - BEHIND <= value <= now + AHEAD else None


def _epoch(value: object) -> float | None:
    if isinstance(value, str) and re.fullmatch(r"[0-9]{1,15}", value.strip()):
        value = int(value)
    if not isinstance(value, int | float) or isinstance(value, bool):
        return None
    return value / 1000.0 if value > 1e11 else float(value)  # milliseconds, as JavaScript writes them


def _unit(name: str) -> float:
    name = name.lower()
    if name.startswith(("ms", "milli")):
        return 0.001
    return {"s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}[name[0]]


def _zone(name: str | None, default: str | None) -> tzinfo | None:
    """The named zone, else the default, else None (local time)."""
    for key in (name, default):
        if key:
            try:
                return ZoneInfo(_ALIASES.get(key.lower(), key))
            except (ValueError, OSError, KeyError):  # ZoneInfoNotFoundError is a KeyError
                continue
    return None


def _iso(found: re.Match[str], now: float, tz_default: str | None) -> float:
    when = datetime.fromisoformat(found[1].upper())
    return (when if when.tzinfo else when.replace(tzinfo=_zone(None, tz_default))).timestamp()


def _clock(found: re.Match[str], now: float, tz_default: str | None) -> float | None:
    hour, minute = int(found["h"]), int(found["min"] or 0)
    ampm = (found["ampm"] or "").replace(".", "").lower()
    if not ampm and found["min"] is None:
        return None  # "resets 5" is not a time of day
    if ampm:
        if not 1 <= hour <= 12:
            return None
        hour = hour % 12 + (12 if ampm == "pm" else 0)
    if hour > 23 or minute > 59:
        return None
    zone = _zone(found["zone"] or found["bare"], tz_default)
    today = datetime.fromtimestamp(now, zone).date()
    if found["mon"]:
        year = int(found["year"] or today.year)
        when = datetime(year, _MONTHS.index(found["mon"][:3].lower()) + 1, int(found["day"]), hour, minute,
                        tzinfo=zone)
        if not found["year"] and when.timestamp() < now - BEHIND:
            when = when.replace(year=year + 1)  # "resets Jan 2" said on Dec 31
        return when.timestamp()
    when = datetime.combine(today, clock(hour, minute), tzinfo=zone)
    if when.timestamp() < now:  # that time today has passed: the next one is tomorrow
        when = datetime.combine(today + timedelta(days=1), clock(hour, minute), tzinfo=zone)
    return when.timestamp()


# Masks for the breaker's same-error rule, in order: specific shapes before the bare numbers inside them.
_MASKS = [(re.compile(p, _I), r) for p, r in (
    (r"\b[a-z][\w+.-]*://\S+", "<url>"),
    (r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b", "<uuid>"),
    (r"\b\d{4}-\d{2}-\d{2}(?:[t ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:z|[+-]\d{2}:?\d{2})?)?", "<time>"),
    (r"\b" + _MON + r" \d{1,2}(?:st|nd|rd|th)?\b(?:,? \d{4})?", "<date>"),
    (r"\b\d{1,2}(?::\d{2}){1,2}(?:\.\d+)?(?:\s*[ap]\.?m\b\.?)?|\b\d{1,2}\s*[ap]\.?m\b\.?", "<time>"),
    (r"(?:\b[a-z]:|~|\.{1,2}|\b[\w.-]+)?(?:[/\\][\w.@+-]+)+[/\\]?", "<path>"),
    (r"\b0x[0-9a-f]+\b|\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{6,}\b", "<hex>"),
    (r"\b[a-z]+_(?=\w*\d)\w{8,}", "<id>"),  # request and message ids: req_011CV..., msg_01...
    (r"\d+(?:\.\d+)?", "<n>"),
)]


def normalize_error(text: str) -> str:
    """For the circuit breaker's same-error rule: mask numbers, hex ids, UUIDs, file paths, timestamps and times of
    day, collapse whitespace, lowercase, cap at 200 chars, so the same failure compares equal across iterations."""
    out = " ".join(str(text)[:2000].split()).lower()  # bounded: the masks' lookaheads are not linear
    for pattern, mask in _MASKS:
        out = pattern.sub(mask, out)
    return " ".join(out.split())[:200]
