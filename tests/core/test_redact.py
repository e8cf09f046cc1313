"""dun.core.redact: the well-known key and token formats, configured patterns, secret-named arguments."""

from __future__ import annotations

import time

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dun.core.redact import Redactor, redact_argv

r = Redactor()  # the well-known formats only: no config

CASES = {
    "anthropic-key": "sk-ant-api03-abcdefghijklmnopqrstuvwxyz012345",
    "openai-key": "sk-proj-abcdefghijklmnopqrstuvwxyz",
    "github-token": "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
    "aws-access-key": "AKIAIOSFODNN7EXAMPLE",
    "google-key": "AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q",
    "slack-token": "xoxp-1234567890-abcdefghij",
}


@pytest.mark.parametrize(("kind", "secret"), CASES.items())
def test_each_known_format_is_replaced_by_its_kind(kind: str, secret: str) -> None:
    assert r.redact(f"key={secret}; more") == f"key=<redacted:{kind}>; more"


def test_only_the_secret_part_of_a_named_value_goes() -> None:
    text = ("aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY and Authorization: Bearer "
            "abc.def-ghi_jkl012")
    assert r.redact(text) == ("aws_secret_access_key = <redacted:aws-secret-key> and Authorization: Bearer "
                              "<redacted:bearer-token>")


def test_a_private_key_block_goes_whole_even_without_its_end() -> None:
    block = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\nAAAA==\n"
    assert r.redact(f"x\n{block}-----END OPENSSH PRIVATE KEY-----\ny") == "x\n<redacted:private-key>\ny"
    assert r.redact(block) == "<redacted:private-key>"


def test_words_that_look_alike_stay() -> None:
    text = "sk-short, task-ant, AKIA lower, ghp_short, a bearer of news, git sha 9f1c2b7e4d3a4c519a0e2f6b8d4e1a73"
    assert r.redact(text) == text


def test_configured_patterns_and_learned_secrets_are_their_redactors_own() -> None:
    configured = Redactor([r"CORP-[0-9]{4}"])
    assert configured.redact("ticket CORP-1234, sk-ant-api03-abcdefghijklmnopqrstuvwxyz012345") == \
        "ticket <redacted:secret>, <redacted:anthropic-key>"
    configured.add_secret("hunter22")
    assert configured.redact("pw hunter22") == "pw <redacted:secret>"
    # another command's redactor (another repository's config) knows neither
    assert r.redact("ticket CORP-1234, pw hunter22") == "ticket CORP-1234, pw hunter22"


def test_data_is_redacted_everywhere_in_it() -> None:
    data = {"a": [CASES["slack-token"], {"b": CASES["github-token"]}], CASES["aws-access-key"]: 1, "n": 2.5}
    assert r.redact_data(data) == {"a": ["<redacted:slack-token>", {"b": "<redacted:github-token>"}],
                                   "<redacted:aws-access-key>": 1, "n": 2.5}


def test_secret_named_arguments_lose_their_values() -> None:
    argv = ["agent", "--api-key", "k1", "--token=k2", "API_TOKEN=k3", "--max-tokens", "100", "--author", "me",
            "--password", "-v"]
    assert redact_argv(argv, r) == ["agent", "--api-key", "<redacted:argument>", "--token=<redacted:argument>",
                                   "API_TOKEN=<redacted:argument>", "--max-tokens", "100", "--author", "me",
                                   "--password", "-v"]


@given(st.text(alphabet="skantAIzaghpxob_-=/+ KEY:BEGINPRVT\n0123456789", max_size=300))
def test_redacting_twice_changes_nothing_more(text: str) -> None:
    once = r.redact(text)
    assert r.redact(once) == once


@pytest.mark.parametrize("unit", ["sk-", "-----BEGIN RSA PRIVATE KEY-----", "Bearer ", "aws_secret=", "xoxb-", "A"])
def test_hostile_text_is_redacted_in_linear_time(unit: str) -> None:
    text = unit * (2_000_000 // len(unit))
    start = time.perf_counter()
    r.redact(text)
    assert time.perf_counter() - start < 5.0
