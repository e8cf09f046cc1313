"""Secrets redacted from everything dun writes and from the prompt: well-known key and token formats, plus the
patterns of `secrets.patterns`.

The patterns are single character classes with fixed prefixes (no nested quantifiers), so redacting is linear in
the text's length whatever it holds.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from typing import Any

# (kind, regex); a group named `secret` is the part replaced, otherwise the whole match.
KNOWN: tuple[tuple[str, str], ...] = (
    ("anthropic-key", r"\bsk-ant-[A-Za-z0-9_-]{20,}"),
    ("openai-key", r"\bsk-(?!ant-)[A-Za-z0-9_-]{20,}"),
    ("github-token", r"\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{30,}"),
    ("github-token", r"\bgithub_pat_[A-Za-z0-9_]{22,}"),
    ("aws-access-key", r"\b(?:AKIA|ASIA)[A-Z0-9]{16}\b"),
    ("aws-secret-key", r"(?i:aws_?secret_?access_?key|aws_?secret)[\"']?\s{0,5}[:=]\s{0,5}[\"']?"
                       r"(?P<secret>[A-Za-z0-9/+=]{40})\b"),
    ("google-key", r"\bAIza[0-9A-Za-z_-]{35}"),
    ("slack-token", r"\bxox[abposr]-[A-Za-z0-9-]{10,}"),
    ("private-key", r"-----BEGIN [A-Z ]{0,40}PRIVATE KEY-----[A-Za-z0-9+/=\r\n]*(?:-----END [A-Z ]{0,40}PRIVATE "
                    r"KEY-----)?"),
    ("bearer-token", r"\b[Bb]earer\s{1,5}(?P<secret>[A-Za-z0-9._~+/=-]{16,})"),
)
# Variables dun reads for itself that no agent may see: the fleet store's address with its credentials. Removed from
# the agent's environment (dun/agents/runner.py) and unset inside the sandbox (dun/sandbox/spec.py).
WITHHELD_ENV: tuple[str, ...] = ("DUN_FLEET_STORE", "DUN_FLEET_PASSWORD")


@functools.cache
def _known() -> tuple[tuple[str, re.Pattern[str]], ...]:
    """KNOWN compiled on first use (`dun check` mostly never redacts): a memo of a constant."""
    return tuple((kind, re.compile(pattern)) for kind, pattern in KNOWN)


class Redactor:
    """What one command redacts: the well-known formats, the repository's `secrets.patterns` (its config owns the
    redactor: `Config.redactor`, handed to the store and to whatever else writes or prints) and the secrets it
    learns at run time (`add_secret`: the fleet store's password)."""

    def __init__(self, patterns: Iterable[str] = ()) -> None:
        self._extra = tuple(("secret", re.compile(p)) for p in patterns if p)
        self._literals: list[tuple[str, re.Pattern[str]]] = []

    def add_secret(self, value: str) -> None:
        """A secret known only at run time, redacted wherever it appears from now on."""
        if len(value) >= 4 and all(p.pattern != re.escape(value) for _, p in self._literals):
            self._literals.append(("secret", re.compile(re.escape(value))))

    def redact(self, text: str) -> str:
        """`text` with every secret replaced by `<redacted:KIND>`."""
        for kind, pattern in (*_known(), *self._extra, *self._literals):
            if kind == "private-key" and "PRIVATE KEY" not in text:
                continue  # the cheap test first: most texts hold no key block
            text = pattern.sub(_replace(kind), text)
        return text

    def redact_data(self, value: object) -> object:
        """A JSON-like value with every string in it redacted (keys included)."""
        if isinstance(value, str):
            return self.redact(value)
        if isinstance(value, dict):
            return {self.redact(k) if isinstance(k, str) else k: self.redact_data(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self.redact_data(v) for v in value]
        return value


def _replace(kind: str) -> Any:
    def sub(match: re.Match[str]) -> str:
        if "secret" in match.re.groupindex and match.group("secret") is not None:
            start, end = match.span("secret")
            whole = match.group(0)
            offset = match.start()
            return whole[: start - offset] + f"<redacted:{kind}>" + whole[end - offset:]
        return f"<redacted:{kind}>"

    return sub


_SECRET_NAME = re.compile(r"(?i)(?:api[_-]?key|access[_-]?key|token(?!s)|secret|password|passwd|credential"
                          r"|authorization|\bauth\b)")
_OPTION = re.compile(r"^(-{1,2}[A-Za-z0-9_.-]+|[A-Za-z_][A-Za-z0-9_]*)=(.+)$")


def redact_argv(argv: list[str], redactor: Redactor) -> list[str]:
    """A command line for a log: secrets `redactor` knows, the value of an option or variable whose name says
    key, token, secret or password (`--api-key X`, `--token=X`, `OPENAI_API_KEY=X`) redacted."""
    out: list[str] = []
    hide_next = False
    for arg in argv:
        if hide_next and not arg.startswith("-"):
            out.append("<redacted:argument>")
            hide_next = False
            continue
        hide_next = False
        option = _OPTION.match(arg)
        if option and _SECRET_NAME.search(option.group(1)):
            out.append(f"{option.group(1)}=<redacted:argument>")
            continue
        if arg.startswith("-") and _SECRET_NAME.search(arg):
            hide_next = True
        out.append(redactor.redact(arg))
    return out
