"""The agent CLI versions dun is tested against: the one place they are pinned. `dun doctor` compares the installed
CLIs with them; the end-to-end tests install exactly these (tests/e2e/install_agents.sh runs this file as a script,
with any python, to read them as JSON).

Stdlib only, and importable without the rest of dun."""

from __future__ import annotations

import json
import sys
from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class Pin:
    package: str  # on its registry
    version: str
    installer: str  # npm | pip
    bin: str  # the binary, relative to the install prefix the tests use
    binary: str  # the command's name on PATH


TESTED: dict[str, Pin] = {
    "claude": Pin("@anthropic-ai/claude-code", "2.1.197", "npm", "node_modules/.bin/claude", "claude"),
    "codex": Pin("@openai/codex", "0.169.0", "npm", "node_modules/.bin/codex", "codex"),
    "gemini": Pin("@google/gemini-cli", "0.61.0", "npm", "node_modules/.bin/gemini", "gemini"),
    "opencode": Pin("opencode-ai", "1.18.33", "npm", "node_modules/.bin/opencode", "opencode"),
    "pi": Pin("@mariozechner/pi-coding-agent", "0.73.1", "npm", "node_modules/.bin/pi", "pi"),
    "aider": Pin("aider-chat", "0.86.2", "pip", "bin/aider", "aider"),
}


def as_json() -> str:
    return json.dumps({name: asdict(pin) for name, pin in TESTED.items()}, indent=2)


if __name__ == "__main__":
    sys.stdout.write(as_json() + "\n")
