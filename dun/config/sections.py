"""The config's sections, typed: one frozen dataclass per section, built once per command from the validated values
(`Config.iterate`). The schema (`CONFIG_FIELDS` in loader.py) stays the one source of keys, defaults and
documentation: a class here only gives each key its type, and tests/config/test_sections.py fails when the two
differ. A flag overrides a key with `dataclasses.replace`, so every reader sees one object."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Automation = Literal["manual", "plan", "auto", "yolo"]


@dataclass(frozen=True)
class Iterate:
    """`iterate:`, how `dun iterate` (and each iteration of `dun loop`) renders the prompt."""

    mission_file: str
    max_prompt_chars: int
    automation: Automation
    items_per_check: int
