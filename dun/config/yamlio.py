"""Safe YAML loading that keeps line and column positions for error messages."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

from dun.core.errors import ConfigError
from dun.core.textfiles import read_bytes

# Upper bound on nodes after alias expansion; a billion-laughs document expands far beyond it.
MAX_EXPANDED_NODES = 200_000
MAX_DEPTH = 64  # mappings and lists inside each other; dun's deepest schema needs 4
MAX_YAML_BYTES = 512 * 1024  # a config or manifest this large is a mistake (1,000 checks take ~60 KB)
_CORE = "tag:yaml.org,2002:"
# Explicit tags a value may carry, and the implicit types its text may then have (`!!float 1` is fine).
_SCALAR_TAGS = {"str": None, "int": ("int",), "float": ("float", "int"), "bool": ("bool",), "null": ("null",)}
_COLLECTION_TAGS = ("seq", "map")


def printable(line: str) -> str:
    """One line on any terminal: control characters from a hostile key or value escaped, never acted on."""
    if line.isprintable():
        return line
    return "".join(ch if ch.isprintable() else ascii(ch)[1:-1] for ch in line)


def _expanded_size(node: object, memo: dict[int, int], depth: int = 0) -> int:
    """Count nodes as if every alias were expanded, memoised by identity so the walk stays linear."""
    key = id(node)
    if key in memo:
        return memo[key]
    if depth > MAX_DEPTH:
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


def _untag(node: Any) -> None:
    """`!!str 1` loads as a TaggedScalar: the plain string it stands for replaces it (positions stay on the
    containers)."""
    items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
    for key, value in list(items):
        if type(value).__name__ == "TaggedScalar":
            node[key] = str(value.value)
        else:
            _untag(value)


def _tag_problem(yaml: Any, event: Any) -> str | None:
    """Why an explicit tag is refused: dun's files hold strings, numbers, booleans, lists and mappings only."""
    from ruamel.yaml.events import ScalarEvent
    from ruamel.yaml.nodes import ScalarNode

    tag = str(event.tag)
    short = tag[len(_CORE):] if tag.startswith(_CORE) else None
    shown = f"!!{short}" if short is not None else tag
    if not isinstance(event, ScalarEvent):
        return None if short in _COLLECTION_TAGS else f"the tag {shown} is not supported on a list or mapping"
    if short not in _SCALAR_TAGS:
        return f"the tag {shown} is not supported"
    allowed = _SCALAR_TAGS[short]
    implicit = str(yaml.resolver.resolve(ScalarNode, event.value, (True, False)))
    if allowed is not None and implicit[len(_CORE):] not in allowed:
        return f"{shown} {event.value[:40]!r}: not a valid {short}"
    return None


@functools.cache
def _checking_parser() -> type:
    """ruamel's round-trip parser that refuses, as the composer takes them and before anything recursive sees the
    document, the events dun does not read: nesting deeper than MAX_DEPTH, an alias inside the collection it names,
    an unsupported tag; each with its line. One parse: a scan of the events before loading parsed every file twice
    (a third of reading dun's built-in manifests)."""
    from ruamel.yaml.events import AliasEvent, CollectionEndEvent, CollectionStartEvent, NodeEvent
    from ruamel.yaml.parser import RoundTripParser

    class CheckingParser(RoundTripParser):
        def get_event(self) -> Any:
            event = super().get_event()
            open_anchors: list[str | None] = self.__dict__.setdefault("dun_open", [])
            source: str = self.loader.dun_source
            if isinstance(event, CollectionStartEvent):
                open_anchors.append(event.anchor)
                if len(open_anchors) > MAX_DEPTH:
                    raise ConfigError(f"{_where(source, event)}: nested more than {MAX_DEPTH} levels deep")
            elif isinstance(event, CollectionEndEvent):
                open_anchors.pop()
            elif isinstance(event, AliasEvent) and event.anchor in open_anchors:
                raise ConfigError(printable(f"{_where(source, event)}: *{event.anchor} refers to a collection it is "
                                            "in"))
            if isinstance(event, NodeEvent) and getattr(event, "tag", None) is not None:
                problem = _tag_problem(self.loader, event)
                if problem:
                    raise ConfigError(printable(f"{_where(source, event)}: {problem}"))
            return event

    return CheckingParser


def _where(source: str, event: Any) -> str:
    mark = event.start_mark
    return f"{source}:{mark.line + 1}:{mark.column + 1}"


def load_yaml_text(text: str, source: str) -> object:
    """Parse YAML text into ruamel's commented structures (which carry `.lc` positions)."""
    from ruamel.yaml import YAML
    from ruamel.yaml.error import MarkedYAMLError, YAMLError
    from ruamel.yaml.reader import ReaderError

    yaml = YAML(typ="rt")
    yaml.Parser = _checking_parser()
    setattr(yaml, "dun_source", source)  # noqa: B010 - read by CheckingParser through its loader
    try:
        data = yaml.load(text)
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"{source}:{mark.line + 1}:{mark.column + 1}" if mark else source
        problem = (exc.problem or exc.context or "invalid YAML").strip()
        raise ConfigError(printable(f"{where}: YAML syntax error: {problem}")) from None
    except ReaderError as exc:  # a character YAML does not allow: its offset gives the line
        line = text.count("\n", 0, exc.position) + 1
        column = exc.position - (text.rfind("\n", 0, exc.position) + 1) + 1
        where = f"{source}:{line}:{column}"
        char = exc.character if isinstance(exc.character, int) else ord(str(exc.character)[:1] or "\0")
        raise ConfigError(printable(f"{where}: YAML error: {exc.reason} (U+{char:04X})")) from None
    except (YAMLError, ValueError, LookupError, TypeError, RecursionError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ConfigError(printable(f"{source}: YAML error: {first}")) from None
    try:
        size = _expanded_size(data, {})
        _untag(data)
    except RecursionError:
        raise ConfigError(f"{source}: YAML nests more than {MAX_DEPTH} levels through aliases") from None
    if size > MAX_EXPANDED_NODES:
        raise ConfigError(
            f"{source}: YAML expands to over {MAX_EXPANDED_NODES} nodes through aliases (alias bomb?)"
        )
    return data


def load_yaml_file(path: Path, root: Path | None = None) -> object:
    """A YAML file (regular, at most MAX_YAML_BYTES, inside `root` when given) with positions."""
    try:
        raw = read_bytes(path, MAX_YAML_BYTES, root)
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror or exc}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 (byte {exc.start})") from None
    return load_yaml_text(text, str(path))


def position(node: object, key: str | int | None = None, value: bool = False) -> tuple[int, int] | None:
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
