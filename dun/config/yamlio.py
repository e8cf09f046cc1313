"""Safe YAML loading that keeps line and column positions for error messages."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from dun.core.errors import ConfigError

# Upper bound on nodes after alias expansion; a billion-laughs document expands far beyond it.
MAX_EXPANDED_NODES = 200_000


def _expanded_size(node: Any, memo: dict[int, int], depth: int = 0) -> int:
    """Count nodes as if every alias were expanded, memoised by identity so the walk stays linear."""
    key = id(node)
    if key in memo:
        return memo[key]
    if depth > 200:
        raise RecursionError
    memo[key] = 1  # breaks self-referencing cycles
    size = 1
    if isinstance(node, dict):
        for k, v in node.items():
            size += _expanded_size(k, memo, depth + 1) + _expanded_size(v, memo, depth + 1)
    elif isinstance(node, list):
        for v in node:
            size += _expanded_size(v, memo, depth + 1)
    memo[key] = size
    return size


def load_yaml_text(text: str, source: str) -> Any:
    """Parse YAML text into ruamel's commented structures (which carry `.lc` positions)."""
    from ruamel.yaml import YAML
    from ruamel.yaml.error import MarkedYAMLError, YAMLError

    yaml = YAML(typ="rt")
    try:
        data = yaml.load(text)
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"{source}:{mark.line + 1}:{mark.column + 1}" if mark else source
        problem = (exc.problem or exc.context or "invalid YAML").strip()
        raise ConfigError(f"{where}: YAML syntax error: {problem}") from None
    except (YAMLError, ValueError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ConfigError(f"{source}: YAML error: {first}") from None
    try:
        size = _expanded_size(data, {})
    except RecursionError:
        raise ConfigError(f"{source}: YAML nests too deeply or refers to itself") from None
    if size > MAX_EXPANDED_NODES:
        raise ConfigError(
            f"{source}: YAML expands to over {MAX_EXPANDED_NODES} nodes through aliases (alias bomb?)"
        )
    return data


def load_yaml_file(path: Path) -> Any:
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror or exc}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 (byte {exc.start})") from None
    return load_yaml_text(text, str(path))


def position(node: Any, key: str | int | None = None, value: bool = False) -> tuple[int, int] | None:
    """1-based (line, col) of a mapping key (or its value), a sequence item, or the node itself."""
    lc = getattr(node, "lc", None)
    if lc is None:
        return None
    try:
        if key is None:
            return lc.line + 1, lc.col + 1
        if isinstance(key, int):
            line, col = lc.item(key)
        elif value:
            line, col = lc.value(key)
        else:
            line, col = lc.key(key)
        return line + 1, col + 1
    except (KeyError, IndexError, TypeError, AttributeError):
        return lc.line + 1, lc.col + 1
