"""The hints as the prompt shows them (a short section, bounded in characters) and as `dun hints` prints them."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Sequence
from pathlib import Path

from dun.config.sections import Hints
from dun.core.errors import DunError
from dun.hints.graph import CHECK_PREFIX, Hint
from dun.hints.index import Index, update
from dun.store.store import Store

MAX_SEEDS = 8  # work-list files asked about; the size bound usually stops earlier
MAX_LINE = 400
HEADER = ("Files that usually change together with the ones the work list names, learned from git history and "
          "earlier iterations; strength 1.0: every change of the file changed that one too and nothing else; recent "
          "changes count more. Advice only: read them before you change a file, ignore what does not apply.")


_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")  # C0, DEL, C1 and the Unicode line breaks


def unicode(path: str) -> str:
    """A path git keeps as bytes that are not UTF-8, with U+FFFD for them (JSON and a terminal hold no lone
    surrogate)."""
    return path.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


_C_ESCAPES = {"\\": "\\\\", '"': '\\"', "\a": "\\a", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\v": "\\v",
              "\f": "\\f", "\r": "\\r"}


def json_name(path: str) -> str:
    """A path as `--json` names it: itself when it is UTF-8, else git's quoted form (`"caf\\351.py"`, as `git
    ls-files` prints it), so two names differing only in bytes that are not UTF-8 stay two keys, not one U+FFFD."""
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        out = []
        for ch in path:
            if ch in _C_ESCAPES:
                out.append(_C_ESCAPES[ch])
            elif ch < " " or ch == "\x7f" or not ch.isascii():
                out.extend(f"\\{b:03o}" for b in ch.encode("utf-8", "surrogateescape"))
            else:
                out.append(ch)
        return '"' + "".join(out) + '"'
    return path


def shown(path: str) -> str:
    """A path as text one line can hold: `unicode`, and `?` for a newline or another control character (a file named
    `x\n## Instructions` cannot add a heading to the prompt)."""
    return _CONTROL.sub("?", unicode(path))


def describe(hint: Hint, digits: int = 2) -> str:
    via = f", via {shown(hint.via)}" if hint.via else ""
    return f"{shown(hint.path)} ({hint.score:.{digits}f}{via})"


def seed_name(seed: str) -> str:
    return shown(f"check {seed[len(CHECK_PREFIX):]}" if seed.startswith(CHECK_PREFIX) else seed)


_SPLIT = re.compile(r"[\s`'\"()\[\]{}<>,;]+")
_NAME = re.compile(r"[\w.@+/-]+")
_EXTENSION = re.compile(r"\.[A-Za-z0-9]{1,8}")


def mentioned(text: str, limit: int = 20) -> list[str]:
    """The path-like words of an item's text (`fix src/a.py:12`, `see utils.py`): candidates the index may know.
    Linear in the text (words split once, each tested whole)."""
    found: list[str] = []
    for word in _SPLIT.split(text[:10_000]):
        word = word.split(":", 1)[0].rstrip(".").removeprefix("./")
        if _NAME.fullmatch(word) and ("/" in word or _EXTENSION.search(word[-9:])) and not word.startswith("/"):
            found.append(word)
            if len(found) >= limit:
                break
    return found


def section_lines(index: Index, seeds: Sequence[str], per_file: int, max_chars: int) -> list[str]:
    """One line per seed that has hints, in the seeds' order, while the whole fits in `max_chars`."""
    lines: list[str] = []
    size = len(HEADER) + 2
    for seed in dict.fromkeys(seeds):
        if len(lines) >= MAX_SEEDS:
            break
        found = index.graph.hints([seed], per_file)
        if not found:
            continue
        line = f"- {seed_name(seed)}: " + ", ".join(describe(h) for h in found)
        if len(line) > MAX_LINE:
            line = line[:MAX_LINE - 3].rstrip() + "..."
        if size + len(line) + 1 > max_chars:
            break
        lines.append(line)
        size += len(line) + 1
    return lines


def prompt_section(store: Store, settings: Hints, seeds: Sequence[str]) -> str:
    """The prompt's hints for `seeds` (work-list files, `check:ID` for checks naming none): "" when there are none,
    `hints.in_prompt` is off, or the index cannot be had (the prompt never fails because of advice)."""
    if not settings.in_prompt or not seeds:
        return ""
    root = store.root
    try:
        index = update(store, settings)
    except (OSError, DunError, ValueError, subprocess.SubprocessError):
        return ""
    lines = section_lines(index, [_relative(root, seed) for seed in seeds], settings.per_file, settings.max_chars)
    return "\n".join([HEADER, "", *lines]) if lines else ""


def _relative(root: Path, seed: str) -> str:
    """An item's absolute path (some runners report them) as the index names it: relative to the root."""
    if seed.startswith("/"):
        try:
            return Path(seed).relative_to(root).as_posix()
        except ValueError:
            return seed
    return seed.removeprefix("./")


def as_dict(index: Index, found: dict[str, list[Hint]]) -> dict[str, object]:
    return {"schema_version": 1, "kind": "hints", "head": index.head, "changes": index.graph.seq,
            "files": {json_name(seed): [{"path": json_name(h.path), "score": round(h.score, 4),
                                         "direct": round(h.direct, 4), "via": json_name(h.via) if h.via else None}
                                      for h in hints] for seed, hints in found.items()}}


def as_text(found: dict[str, list[Hint]]) -> str:
    out: list[str] = []
    for seed, hints in found.items():
        out.append(seed_name(seed))
        if not hints:
            out.append("  (no file changes with it in the indexed history)")
        for h in hints:
            out.append(f"  {h.score:.3f}  {shown(h.path)}" + (f"  (via {shown(h.via)})" if h.via else ""))
    return "\n".join(out) + "\n"
