"""Classifying failed agent calls and reading reset times (dun.agents.limits): every usage-limit wording users reported,
Claude's result shapes, Codex and Gemini error texts, prose that only talks about limits, and the breaker's
error normalization."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dun.agents.limits import AHEAD, BEHIND, ERROR_KINDS, AgentError, classify, normalize_error, parse_reset_time

NOW = datetime(2026, 11, 21, 18, 0, tzinfo=UTC).timestamp()  # 18:00 in London too (GMT in November)
MIN, HOUR, DAY = 60.0, 3600.0, 86400.0


def at(year: int, month: int, day: int, hour: int = 0, minute: int = 0, zone: str = "UTC") -> float:
    return datetime(year, month, day, hour, minute, tzinfo=ZoneInfo(zone)).timestamp()


def kind(agent: dict[str, Any], exit_code: int | None, tail: str = "") -> str | None:
    error = classify(agent, exit_code, tail, now=NOW)
    return error.kind if error else None


def claude(result: str, status: int | None = None, subtype: str = "success", **extra: Any) -> dict[str, Any]:
    """ParseResult.agent for a failed Claude Code json result."""
    return {"is_error": True, "subtype": subtype, "api_error_status": status, "result_excerpt": result, **extra}


# --- parse_reset_time --------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "now", "expected"), [
    ("You've hit your limit · resets 9pm (Europe/London)", NOW, at(2026, 11, 21, 21, zone="Europe/London")),
    # at 22:00 London today's 9pm has passed: tomorrow's
    ("You've hit your limit · resets 9pm (Europe/London)", at(2026, 11, 21, 22), at(2026, 11, 22, 21)),
    ("resets 9:30pm (Asia/Tokyo)", NOW, at(2026, 11, 22, 21, 30, zone="Asia/Tokyo")),  # already Nov 22 in Tokyo
    ("resets 21:00 (Europe/Paris)", NOW, at(2026, 11, 21, 21, zone="Europe/Paris")),
    ("resets 9am (UTC)", NOW, at(2026, 11, 22, 9)),
    ("resets 9 AM UTC", NOW, at(2026, 11, 22, 9)),
    ("resets 12am (UTC)", NOW, at(2026, 11, 22, 0)),
    ("resets 12pm (UTC)", NOW, at(2026, 11, 22, 12)),
    ("resets Nov 22, 9pm (America/New_York)", NOW, at(2026, 11, 22, 21, zone="America/New_York")),
    ("Opus weekly limit reached ∙ resets Nov 26, 10am (America/Los_Angeles)", NOW,
     at(2026, 11, 26, 10, zone="America/Los_Angeles")),
    ("Your limit will reset at 3pm (Europe/Berlin).", NOW, at(2026, 11, 22, 15, zone="Europe/Berlin")),
    # the next 9am in New York is after the clocks went back (EDT -> EST on Nov 1)
    ("resets 9am (America/New_York)", at(2026, 10, 31, 23), at(2026, 11, 1, 9, zone="America/New_York")),
    ("resets 9pm (America/New_York)", at(2026, 10, 31, 23), at(2026, 10, 31, 21, zone="America/New_York")),
    (f"Claude AI usage limit reached|{int(NOW + 3 * HOUR)}", NOW, NOW + 3 * HOUR),
    (f"Claude AI usage limit reached|{int(NOW + 3 * HOUR) * 1000}", NOW, NOW + 3 * HOUR),  # milliseconds
    ("retry-after: 120", NOW, NOW + 120),
    ("Retry-After: 120", NOW, NOW + 120),
    ("retry after 120 seconds", NOW, NOW + 120),
    ("try again in 5 minutes", NOW, NOW + 5 * MIN),
    ("in 2 hours", NOW, NOW + 2 * HOUR),
    ("Please retry in 23.5s.", NOW, NOW + 23.5),
    ("try again in 1h 30m", NOW, NOW + 90 * MIN),
    ("or try again in 5 days 22 hours 11 minutes.", NOW, NOW + 5 * DAY + 22 * HOUR + 11 * MIN),
    ("try again in 2 hours and 5 minutes", NOW, NOW + 2 * HOUR + 5 * MIN),
    ('"retryDelay": "23s"', NOW, NOW + 23),
    ('{"type":"usage_limit_reached","resets_in_seconds":602705}', NOW, NOW + 602705),
    (f'{{"type":"usage_limit_reached","resets_at":{int(NOW + DAY)}}}', NOW, NOW + DAY),
    ("Retry-After: Sat, 21 Nov 2026 19:00:00 GMT", NOW, NOW + HOUR),
    ("limit resets at 2026-11-22T03:00:00Z", NOW, at(2026, 11, 22, 3)),
    ("blocked until 2026-11-21T20:00:00+01:00", NOW, at(2026, 11, 21, 19)),
    ("resets 2026-11-22 08:15:00.250+00:00", NOW, at(2026, 11, 22, 8, 15) + 0.25),
])
def test_reset_wordings(text: str, now: float, expected: float) -> None:
    assert parse_reset_time(text, now) == pytest.approx(expected)


@pytest.mark.parametrize(("text", "tz_default", "expected"), [
    ("resets 21:00", "Europe/London", at(2026, 11, 21, 21)),
    ("resets 9pm (Mars/Olympus)", "America/Chicago", at(2026, 11, 21, 21, zone="America/Chicago")),  # unknown zone
    ("try again at Nov 23rd, 2026 8:19 PM.", "UTC", at(2026, 11, 23, 20, 19)),
    ("resets at 2026-11-22T03:00", "Asia/Kolkata", at(2026, 11, 22, 3, zone="Asia/Kolkata")),  # naive ISO
    ("resets 9pm (PT)", "UTC", at(2026, 11, 21, 21, zone="America/Los_Angeles")),  # a common abbreviation
])
def test_zone_default(text: str, tz_default: str, expected: float) -> None:
    assert parse_reset_time(text, NOW, tz_default) == pytest.approx(expected)


@pytest.fixture
def local_zone() -> Iterator[str]:
    """Run with the process's local time set to a zone no test uses explicitly."""
    before = os.environ.get("TZ")
    os.environ["TZ"] = "Asia/Kathmandu"
    time.tzset()
    yield "Asia/Kathmandu"
    if before is None:
        del os.environ["TZ"]
    else:
        os.environ["TZ"] = before
    time.tzset()


def test_no_zone_means_local_time(local_zone: str) -> None:
    tomorrow_9pm = at(2026, 11, 22, 21, zone=local_zone)  # 23:45 in Kathmandu: 9pm has passed
    assert parse_reset_time("resets 9pm", NOW) == pytest.approx(tomorrow_9pm)
    assert parse_reset_time("resets 9pm (Nowhere/Special)", NOW) == pytest.approx(tomorrow_9pm)


@pytest.mark.parametrize("text", [
    "", "You've hit your limit", "resets soon", "resets 5 times a day", "try again later", "in 3 files",
    "resets 25:00 (UTC)", "resets 13pm (UTC)", "resets Feb 30, 9pm (UTC)",
    "Claude AI usage limit reached|1000000000",  # 2001: stale
    "resets Jan 2, 9am (UTC)",  # six weeks away: not a limit window
    "try again in 30 days",
])
def test_no_reset_given(text: str) -> None:
    assert parse_reset_time(text, NOW) is None


# --- classify: Claude --------------------------------------------------------------------------------------------

def test_success_is_none_even_when_prose_mentions_limits() -> None:
    prose = "I added handling for 429 Too Many Requests: on a rate limit we back off; usage limit reached is fatal."
    answer = {"is_error": False, "subtype": "success", "api_error_status": None, "result_excerpt": prose}
    assert classify(answer, 0, prose, now=NOW) is None
    assert classify({}, 0, "rate limit exceeded, try again in 5 minutes", now=NOW) is None
    assert classify({}, None, "Invalid API key", now=NOW) is None  # unknown exit and no facts: nothing failed


def test_claude_429() -> None:
    text = "API Error: Request rejected (429) · This request would exceed your account's rate limit."
    error = classify(claude(text, 429), 1, "", now=NOW)
    assert error == AgentError("rate_limit", text, None)


def test_claude_429_with_retry_after() -> None:
    error = classify(claude("API Error: Request rejected (429) · retry-after: 90", 429), 1, "", now=NOW)
    assert error is not None and (error.kind, error.reset_at) == ("rate_limit", NOW + 90)


@pytest.mark.parametrize("text", [
    "You've hit your limit · resets 9pm (Europe/London)",
    "Claude usage limit reached. Your limit will reset at 9pm (Europe/London).",
    "5-hour limit reached ∙ resets 9pm (Europe/London)",
])
def test_claude_usage_limit_beats_429(text: str) -> None:
    assert classify(claude(text, 429), 1, "", now=NOW) == AgentError("usage_limit", text, at(2026, 11, 21, 21))


def test_claude_usage_limit_epoch() -> None:
    text = f"Claude AI usage limit reached|{int(NOW + 2 * HOUR)}"
    assert classify(claude(text), 1, "", now=NOW) == AgentError("usage_limit", text, NOW + 2 * HOUR)


def test_out_of_extra_usage() -> None:
    error = classify(claude("You're out of extra usage · resets 9pm (Europe/London)"), 1, "", now=NOW)
    assert error is not None and (error.kind, error.reset_at) == ("usage_limit", at(2026, 11, 21, 21))


def test_claude_401() -> None:
    assert classify(claude("Invalid API key · Fix external API key", 401), 1, "", now=NOW) == \
        AgentError("auth", "Invalid API key · Fix external API key", None)
    assert kind(claude("Invalid API key · Fix external API key"), 1) == "auth"


@pytest.mark.parametrize(("status", "text"), [
    (529, 'API Error: 529 {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}'),
    (500, "API Error: 500 Internal server error"),
    (None, "API Error: Connection error."),
    (None, "API Error: Request timed out."),
])
def test_claude_network(status: int | None, text: str) -> None:
    assert classify(claude(text, status), 1, "", now=NOW) == AgentError("network", text, None)


@pytest.mark.parametrize(("subtype", "expected", "message"), [
    ("error_max_budget_usd", "budget", "reached --max-budget-usd (error_max_budget_usd)"),
    ("error_max_turns", "max_turns", "reached --max-turns (error_max_turns)"),
])
def test_claude_subtypes(subtype: str, expected: str, message: str) -> None:
    agent = {"is_error": False, "subtype": subtype, "num_turns": 31, "cost_usd": 0.52}
    assert classify(agent, 0, "", now=NOW) == AgentError(expected, message, None)
    # the subtype beats prose in the tail and a non-zero exit
    assert kind({**agent, "is_error": True}, 1, "rate limit") == expected


def test_error_during_execution_is_other() -> None:
    agent = {"is_error": True, "subtype": "error_during_execution"}
    assert classify(agent, 1, "", now=NOW) == AgentError("other", "exited with code 1", None)


def test_rate_limit_event_rejected() -> None:
    info = {"status": "rejected", "resetsAt": int(NOW + 4 * HOUR), "rateLimitType": "five_hour"}
    agent = claude("API Error: Request rejected (429) · resets 9pm (Europe/London)", 429, rate_limit=info)
    # the event's exact epoch beats the wording
    assert classify(agent, 1, "", now=NOW) == AgentError("usage_limit", agent["result_excerpt"], NOW + 4 * HOUR)
    bare = {"is_error": True, "session_id": "s", "rate_limit": info}
    expected = AgentError("usage_limit", "usage limit reached (five_hour)", NOW + 4 * HOUR)
    assert classify(bare, 1, "", now=NOW) == expected


def test_rate_limit_event_not_rejected_or_call_succeeded() -> None:
    warning = {"status": "allowed_warning", "resetsAt": int(NOW + HOUR), "rateLimitType": "seven_day"}
    assert kind(claude("API Error: 500 Internal server error", 500, rate_limit=warning), 1) == "network"
    rejected = {"status": "rejected", "resetsAt": int(NOW + HOUR)}
    assert classify({"is_error": False, "subtype": "success", "rate_limit": rejected}, 0, "", now=NOW) is None


def test_usage_limit_reset_from_event_when_text_has_none() -> None:
    info = {"status": "allowed_warning", "resetsAt": (NOW + HOUR) * 1000}
    error = classify(claude("Claude usage limit reached.", rate_limit=info), 1, "", now=NOW)
    assert error == AgentError("usage_limit", "Claude usage limit reached.", NOW + HOUR)


# --- classify: Codex, Gemini, text-only CLIs ---------------------------------------------------------------------

@pytest.mark.parametrize(("error", "expected", "reset"), [
    ("You've hit your usage limit. Upgrade to Pro (https://openai.com/chatgpt/pricing) or try again in 4 days "
     "6 hours 37 minutes.", "usage_limit", NOW + 4 * DAY + 6 * HOUR + 37 * MIN),
    ("You've hit your usage limit. Upgrade to Plus to continue using Codex (https://chatgpt.com/explore/plus), or "
     "try again at Nov 23rd, 2026 8:19 PM.", "usage_limit", at(2026, 11, 23, 20, 19)),
    ("exceeded retry limit, last status: 429 Too Many Requests", "rate_limit", None),
    ("unexpected status 401 Unauthorized: Missing bearer or basic authentication in header", "auth", None),
    ("stream disconnected before completion: error sending request for url "
     "(https://chatgpt.com/backend-api/codex/responses)", "network", None),
    ("Reconnecting... 5/5 (stream disconnected before completion: Transport error: timeout)", "network", None),
    ("model produced an invalid patch", "other", None),
])
def test_codex(error: str, expected: str, reset: float | None) -> None:
    agent = {"is_error": True, "error": error, "session_id": "0199a213-81c0-7800-8aa1-bbab2a035a53"}
    assert classify(agent, 1, "", now=NOW, tz_default="UTC") == AgentError(expected, error, reset)


GEMINI_429 = ('[API Error: {"error":{"message":"{\\n  \\"error\\": {\\n    \\"code\\": 429,\\n    \\"message\\": '
              '\\"Resource has been exhausted (e.g. check quota).\\",\\n    \\"status\\": \\"RESOURCE_EXHAUSTED\\"\\n'
              '  }\\n}\\n","code":429,"status":"Too Many Requests"}}]')


@pytest.mark.parametrize(("error", "expected", "reset"), [
    (GEMINI_429, "rate_limit", None),
    ("Quota exceeded for quota metric 'Gemini 2.5 Pro Requests' and limit 'Gemini 2.5 Pro Requests per day per "
     "user per tier'", "rate_limit", None),  # a quota with no reset time: back off like a rate limit
    ("You have exhausted your daily quota on this model. Your quota resets at 2026-11-22T08:00:00Z",
     "usage_limit", at(2026, 11, 22, 8)),
    ("You exceeded your current quota, please check your plan and billing details. Please retry in 41.2s.",
     "usage_limit", NOW + 41.2),
    ("Gemini API key not valid. Please pass a valid API key. (status 403)", "auth", None),
    ("request to https://generativelanguage.googleapis.com/ failed, reason: connect ETIMEDOUT", "network", None),
    ("Reached max session turns for this session.", "max_turns", None),
])
def test_gemini(error: str, expected: str, reset: float | None) -> None:
    agent = {"is_error": True, "error": error, "stats": {}}
    assert classify(agent, 1, "", now=NOW) == AgentError(expected, " ".join(error.split()), reset)


def test_gemini_turn_limit_exit_code() -> None:
    assert classify({}, 53, "", now=NOW) == AgentError("max_turns", "exited with code 53", None)


@pytest.mark.parametrize(("tail", "expected", "message"), [
    ("Tokens: 12k sent\nlitellm.RateLimitError: rate limit exceeded, retry after 30 seconds\n\nbye\n", "rate_limit",
     "litellm.RateLimitError: rate limit exceeded, retry after 30 seconds"),
    ("Error: 401 Unauthorized\n", "auth", "Error: 401 Unauthorized"),
    ("fetching...\nError: getaddrinfo ENOTFOUND api.example.com\n", "network",
     "Error: getaddrinfo ENOTFOUND api.example.com"),
    ("step 1\n\nTraceback (most recent call last):\n  File \"x.py\", line 401\nKeyError: 'x'\n\n", "other",
     "KeyError: 'x'"),
    ("", "other", "exited with code 2"),
])
def test_text_only_cli(tail: str, expected: str, message: str) -> None:
    error = classify({}, 2, tail, now=NOW)
    assert error is not None and (error.kind, error.message) == (expected, message)


def test_tail_json_events_are_not_read_as_text() -> None:
    tail = '{"type":"rate_limit_event","rate_limit_info":{"status":"allowed"}}\n{"type":"system"}\nSegfault\n'
    assert classify({"session_id": "s"}, 139, tail, now=NOW) == AgentError("other", "Segfault", None)


def test_message_is_one_bounded_line() -> None:
    error = classify({"is_error": True, "error": "boom\n" * 200}, 1, "", now=NOW)
    assert error is not None and "\n" not in error.message and len(error.message) == 300


# --- normalize_error ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("a", "b"), [
    ("API Error: 500 request_id req_011CVbT3xYz9 at 2026-11-21T18:00:00Z",
     "API Error: 502 request_id req_011CWq81aBcD at 2026-11-22T09:13:27.5+01:00"),
    ("FileNotFoundError: /tmp/dun-abc/work/x.py line 12", "FileNotFoundError: /home/u/proj/y.py line 9"),
    ("session 9f1c2b7e-4d3a-4c51-9a0e-2f6b8d4e1a73 failed", "session 01a06564-8a30-7b21-aa1e-4346aa5f23a2 failed"),
    ("You've hit your limit · resets 9pm (Europe/London)", "You've hit your limit · resets 10:30pm (Europe/London)"),
    ("object at 0x7f3a2b1c not found (sha 3f2a9c1d)", "object at 0x7f00aa00 not found (sha 9e8d7c6b)"),
    ("  Connection   reset\n by peer ", "connection reset by peer"),
    ("see C:\\Users\\me\\proj\\a.txt", "see C:\\Users\\you\\other\\b.txt"),
    ("GET https://api.example.com/v1/x?id=5 failed", "GET https://api.example.com/v1/y?id=6 failed"),
])
def test_normalize_same(a: str, b: str) -> None:
    assert normalize_error(a) == normalize_error(b)


@pytest.mark.parametrize(("a", "b"), [
    ("Invalid API key · Fix external API key", "API Error: Request rejected (429) · rate limit"),
    ("FileNotFoundError: /tmp/x.py", "PermissionError: /tmp/x.py"),
    ("connection reset by peer", "connection refused"),
])
def test_normalize_different(a: str, b: str) -> None:
    assert normalize_error(a) != normalize_error(b)


def test_normalize_shape() -> None:
    out = normalize_error("Error " * 100 + "42")
    assert len(out) == 200 and out == out.lower() and "  " not in out
    assert normalize_error("Took 12.5s") == "took <n>s"


# --- properties --------------------------------------------------------------------------------------------------

FRAGMENTS = st.sampled_from([
    "resets ", "reset at ", "until ", "try again ", "in ", "retry-after: ", "retry after ", "wait ", "9pm", "21:00",
    "9:30am", "12 AM", " (Europe/London)", " (Bad/Zone)", " UTC", "Nov 22, ", "Feb 29, ", "Dec 31st, 2026 ",
    "2026-11-22T03:00:00Z", "2026-13-45", "usage limit reached|", "1795287600", "99999999999999", "5 days ",
    "3 hours", "10m", "1.5s", "Sat, 21 Nov 2026 19:00:00 GMT", "Mon, 99 Foo 2026 99:99:99 GMT", "429", "401",
    "rate limit", "quota exceeded", "overloaded", " · ", "\n", "resetsAt\":", "٣", "²",
])
TEXTS = st.one_of(st.text(), st.lists(st.one_of(FRAGMENTS, st.text(max_size=5)), max_size=12).map("".join))
JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
                    lambda kids: st.lists(kids, max_size=3) | st.dictionaries(st.text(max_size=8), kids, max_size=3),
                    max_leaves=8)
KEYS = st.sampled_from(["is_error", "subtype", "api_error_status", "result_excerpt", "error", "rate_limit",
                        "session_id", "status", "resetsAt"]) | st.text(max_size=8)
AGENTS = st.dictionaries(KEYS, JSON | TEXTS | st.sampled_from(
    [True, 429, 401, 529, "429", "error_max_turns", "error_max_budget_usd", {"status": "rejected", "resetsAt": NOW}]))


def within(value: float | None, now: float) -> bool:
    return value is None or now - BEHIND <= value <= now + AHEAD


@settings(max_examples=400, deadline=None)
@given(TEXTS, st.sampled_from([None, "UTC", "Europe/London", "Not/AZone", "../etc", ""]))
def test_parse_reset_never_raises(text: str, tz_default: str | None) -> None:
    assert within(parse_reset_time(text, NOW, tz_default), NOW)


@settings(max_examples=400, deadline=None)
@given(AGENTS, st.none() | st.integers(min_value=-255, max_value=255), TEXTS)
def test_classify_never_raises(agent: dict[str, Any], exit_code: int | None, tail: str) -> None:
    error = classify(agent, exit_code, tail, now=NOW)
    if error is not None:
        assert error.kind in ERROR_KINDS
        assert 0 < len(error.message) <= 300 and "\n" not in error.message
        assert within(error.reset_at, NOW)


@given(TEXTS)
def test_normalize_never_raises(text: str) -> None:
    out = normalize_error(text)
    assert len(out) <= 200 and not any(c in "0123456789" for c in out)
