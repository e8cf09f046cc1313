"""docs/history.md is the operator's manual: it names every command, flag, config key and event, and its YAML
example is a valid config."""

from __future__ import annotations

import re
from pathlib import Path

from dun.config.loader import CONFIG_FIELDS
from dun.config.schema import Validator
from dun.config.yamlio import load_yaml_text
from dun.notify import EVENTS

DOC = Path(__file__).resolve().parents[2] / "docs" / "history.md"


def test_every_command_flag_key_event_and_pattern_is_documented() -> None:
    text = DOC.read_text(encoding="utf-8")
    for command in ("dun history", "dun history rebuild", "dun report", "dun summary", "dun ack", "dun ack ID",
                    "dun review", "dun review dismiss ID"):
        assert command in text, command
    for flag in ("--json", "--all", "-o FILE", "--runs N", "-C/--path"):
        assert flag in text, flag
    for section in ("review", "notify"):
        for key in CONFIG_FIELDS[section].fields or {}:
            assert f"| `{section}.{key}` |" in text, f"{section}.{key}"
    for event in EVENTS:
        assert f"| `{event}` |" in text, event
    for pattern in ("claim_streak", "repeated_error", "box_attempts", "repeated_repair", "repeated_denial",
                    "cost_outlier"):
        assert f"| `{pattern}` |" in text, pattern
    assert (DOC.parent / "history-report.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_yaml_example_is_a_valid_config() -> None:
    [block] = re.findall(r"^```yaml\n(.*?)^```", DOC.read_text(encoding="utf-8"), re.S | re.M)
    validator = Validator("docs/history.md")
    validator.check_map(load_yaml_text(block, "docs/history.md"), CONFIG_FIELDS)
    assert validator.errors == []
