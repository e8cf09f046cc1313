"""`sarif`: SARIF 2.1.0, the static-analysis format of ruff, eslint, semgrep, CodeQL, bandit, gosec and most
linters. One item per result that is not suppressed, with its rule, level, file and start line."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any
from urllib.parse import unquote, urlparse

from dun.checks.parsers.base import DocumentParser, Parsed, as_int, bounded, plural, repo_path
from dun.engine.model import Item

_NOT_FINDINGS = ("pass", "notApplicable", "informational")


class SarifParser(DocumentParser):
    def parse(self, data: bytes) -> Parsed:
        try:
            log = json.loads(data.decode("utf-8-sig", "replace"))
        except ValueError as exc:
            return Parsed(problem=f"invalid SARIF (not JSON): {exc}")
        runs = log.get("runs") if isinstance(log, dict) else None
        if not isinstance(runs, list):
            return Parsed(problem="invalid SARIF: no 'runs' list")
        items: list[Item] = []
        tools: list[str] = []
        for run in runs:
            if not isinstance(run, dict):
                continue
            driver = _dict(_dict(run.get("tool")).get("driver"))
            tools.append(str(driver.get("name") or "tool"))
            bases = _bases(run)
            levels = _rule_levels(driver)
            for result in run.get("results") or []:
                if isinstance(result, dict) and _is_finding(result):
                    items.append(self._item(result, bases, levels))
        summary = f"{plural(len(items), 'result')} from {', '.join(dict.fromkeys(tools)) or 'no tool'}"
        return Parsed(items, summary=summary)

    def _item(self, result: dict[str, Any], bases: dict[str, str], levels: dict[str, str]) -> Item:
        rule = str(result.get("ruleId") or _dict(result.get("rule")).get("id") or "")
        level = str(result.get("level") or levels.get(rule) or "warning")
        message = _dict(result.get("message"))
        text = str(message.get("text") or message.get("markdown") or message.get("id") or "")
        locations = result.get("locations") or []
        physical = _dict(_dict(locations[0] if locations else {}).get("physicalLocation"))
        artifact = _dict(physical.get("artifactLocation"))
        uri = _uri_path(str(artifact.get("uri") or ""), bases.get(str(artifact.get("uriBaseId") or ""), ""))
        line = as_int(_dict(physical.get("region")).get("startLine"))
        label = f"{rule}: " if rule else ""
        prefix = "" if level == "error" else f"[{level}] "
        return Item(text=bounded(f"{prefix}{label}{text}"), file=repo_path(uri, self.ctx), line=line)


def _dict(value: object) -> dict[str, object]:
    return value if isinstance(value, dict) else {}


def _is_finding(result: Mapping[str, object]) -> bool:
    if result.get("suppressions") or result.get("baselineState") == "absent":
        return False
    return result.get("kind", "fail") not in _NOT_FINDINGS


def _rule_levels(driver: dict[str, Any]) -> dict[str, str]:
    out = {}
    for rule in driver.get("rules") or []:
        level = _dict(_dict(rule).get("defaultConfiguration")).get("level")
        if isinstance(rule, dict) and rule.get("id") and level:
            out[str(rule["id"])] = str(level)
    return out


def _bases(run: Mapping[str, object]) -> dict[str, str]:
    """`originalUriBaseIds`: named roots (`%SRCROOT%`) that relative artifact URIs hang off."""
    out = {}
    for name, base in _dict(run.get("originalUriBaseIds")).items():
        uri = _dict(base).get("uri")
        if isinstance(uri, str):
            out[str(name)] = _uri_path(uri, "")
    return out


def _uri_path(uri: str, base: str) -> str:
    if not uri:
        return ""
    parsed = urlparse(uri)
    path = unquote(parsed.path) if parsed.scheme in ("file", "") else uri
    if base and not path.startswith("/"):
        path = base.rstrip("/") + "/" + path
    return path
