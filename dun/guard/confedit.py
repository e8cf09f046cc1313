"""What an edit of a config file adds and removes, for the judges of files that decide what runs or passes later:
the gates that judge the agent (gates.py) and the sources packages come from (supply.py).

An edit is reduced to the text it can add and the text it takes out: `sed`/`perl -i` substitutions (pattern out,
replacement in, `&` standing for the match), `d` commands (the lines they name), `a`/`i`/`c` text; `jq`/`yq` filters
(`del(...)` takes out what it names); text written by a redirection (appended, or the whole file against the one on
disk); and the Write, Edit and MultiEdit tools (their lines against the file on disk or `old_string`). The judges
decide by effect on that text, whichever way it was written.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping

from dun.guard import agents, gates, supply
from dun.guard.effects import Facts, interpreter
from dun.guard.expand import Val
from dun.guard.options import SPECS, parse

JUDGES: tuple[tuple[str, Callable[[str, str, str], str | None]], ...] = (
    ("gate-weaken", gates.judge), ("supply-source", supply.judge), ("agent-settings", agents.judge))
_WATCHED = re.compile("|".join(f"(?:{rx.pattern})" for rx in (
    gates.GATE_FILES, supply.SOURCE_FILES, supply.MANIFESTS, supply.LOCKFILES, agents.CONFIG_FILES, gates.TEST_FILES)))
_SUBST = re.compile(r"(?:^|[;\n{}])\s*(?:\d+(?:,\d+)?|\$|/[^/\n]*/)?\s*s(?P<d>[^\w\s\\])((?:\\.|(?!(?P=d)).)*)(?P=d)"
                    r"((?:\\.|(?!(?P=d)).)*)(?P=d)", re.S)
_DELETE = re.compile(r"(?:^|[;\n{}])\s*(?:(\d+)(?:,(\d+|\$))?|\$|/((?:\\.|[^/\n])*)/(?:,/[^/\n]*/)?)\s*!?\s*d\b")
_TEXT = re.compile(r"(?:^|[;\n{}])\s*(?:\d+|\$|/[^/\n]*/)?\s*[aic]\\?\s*(.*)")
_JQ_STRING = re.compile(r'"((?:[^"\\]|\\.)*)"')
_REPLACE = re.compile(r"""(?:replace|sub|replaceAll|gsub)\s*\(\s*r?(['"])(.*?)\1\s*,\s*r?(['"])(.*?)\3""", re.S)
_STRINGS = re.compile(r"""(?<![\w'"])(?:'([^'\n]*)'|"([^"\n]*)")""")


def watched(path: str) -> bool:
    return bool(_WATCHED.search(path))


def judge(path: str, added: str, removed: str) -> tuple[str, str] | None:
    """The signal and why, when an edit of `path` adding `added` and taking out `removed` weakens a gate or points
    packages at unverified code."""
    for signal, fn in JUDGES:
        if why := fn(path, added, removed):
            return signal, why
    return None


def mark(facts: Facts, path: str, added: str, removed: str) -> None:
    if hit := judge(path, added, removed):
        facts.signals.add(hit[0])
        facts.notes[hit[0]] = f"why: {hit[1]}"


read = gates.read_text


def _plain(pattern: str) -> str:
    """A sed pattern as the text it matches, roughly: anchors and escapes dropped (`^ *- id: x` -> ` - id: x`)."""
    pattern = re.sub(r"^\^|\$$|\\\(|\\\)", "", pattern).replace("\\t", "\t").replace("\\s", " ")
    pattern = pattern.replace("\\d", "").replace("\\w", "a")
    return re.sub(r"\[0-9\][*+]?|\{\d*,?\d*\}|(?<!\\)[*+?]", "", re.sub(r"\\(.)", r"\1", pattern))


def diff(old: str, new: str) -> tuple[str, str]:
    """(added, removed): the lines of `new` not in `old`, and the other way round."""
    old_lines, new_lines = old.splitlines(), new.splitlines()
    olds, news = set(old_lines), set(new_lines)
    return "\n".join(x for x in new_lines if x not in olds), "\n".join(x for x in old_lines if x not in news)


def shell_edit(facts: Facts, prog: str, args: list[Val], stdin: str | None = None) -> None:
    """The edits a command makes in place: sed/perl substitutions and deletions, jq/yq filters of a watched file."""
    if prog in ("jq", "yq", "gojq"):
        ops = [a.text for a in args if not a.text.startswith("-")]
        files = [p for p in [e.path for e in facts.effects if e.op == "write"] + ops[1:] if watched(p)]
        if ops and files:
            filt = ops[0]
            strings = " ".join(_JQ_STRING.findall(filt))
            mark(facts, files[0], "" if "del(" in filt else f"{filt}\n{strings}", filt if "del(" in filt else "")
        return
    paths = [e.path for e in facts.effects if e.op == "write" and watched(e.path)]
    if not paths:
        return
    if prog not in ("sed", "gsed", "perl"):
        code = interpreter(prog, args)
        text = "\n".join(v.text for v in code.code) if code is not None and code.kind != "shell" else ""
        text = text or (stdin or "" if code is not None and code.stdin and code.kind != "shell" else "")
        pairs = [(m.group(2).replace("\\n", "\n"), m.group(4).replace("\\n", "\n"))
                 for m in _REPLACE.finditer(text)]  # .replace('fail_under = 90', 'fail_under = 0')
        literals = [a or b for a, b in _STRINGS.findall(text)]
        for path in paths if text else []:
            mark(facts, path, "\n".join(b for _, b in pairs) if pairs else "\n".join(literals),
                 "\n".join(a for a, _ in pairs))
        return
    o = parse(args, SPECS.get(prog, SPECS["sed"]))
    scripts = [v.text for v in o.value("-e", "--expression")] or [v.text for v in o.operands[:1]]
    added, removed = [], []
    for script in scripts:
        for m in _SUBST.finditer(script):
            if m.group(2) in ("^", "^.", "^.*", ".*") and re.match(r"\s*(?:#|//|;|rem\b)", m.group(3)) and any(
                    gates.GATE_FILES.search(p) for p in paths):  # sed 's/^/#/' Makefile: every line commented out
                facts.signals.add("gate-weaken")
                facts.notes["gate-weaken"] = "why: comments out every line of a file that runs or configures checks"
                return
            pat, rep = _plain(m.group(2)), m.group(3)
            removed.append(pat)
            added.append(rep.replace("\\&", "\0").replace("&", pat).replace("\0", "&").replace("\\n", "\n")
                         .replace("\\t", "\t"))
        for m in _DELETE.finditer(script):
            first, last, pattern = m.groups()
            if pattern is not None:
                removed.append(_plain(pattern))
            elif first:
                lines = read(paths[0]).splitlines()
                end = len(lines) if last == "$" else int(last) if last else int(first)
                removed += lines[int(first) - 1:end]
        added += [m.group(1).replace("\\n", "\n") for m in _TEXT.finditer(script) if not _SUBST.match(m.group(0))]
    for path in paths:
        mark(facts, path, "\n".join(added), "\n".join(removed))


def rewritten(path: str, text: str | None, append: bool) -> tuple[str, str] | None:
    """A watched file written by a redirection (`printf ... >> pyproject.toml`): appended text, or the whole file
    against the one on disk."""
    if text is None or not watched(path):
        return None
    if append:
        return judge(path, text, "")
    added, removed = diff(read(path) if os.path.isfile(path) else "", text)
    return judge(path, added, removed)


def tool_edit(tool: str, path: str, tool_input: Mapping[str, object]) -> tuple[str, str] | None:
    """A Write/Edit/MultiEdit of a watched file, against the file on disk or the text it replaces."""
    if not watched(path):
        return None
    if tool == "Write":
        content = tool_input.get("content")
        return judge(path, *diff(read(path), content)) if isinstance(content, str) else None
    edits = tool_input.get("edits") if tool == "MultiEdit" else [tool_input]
    for edit in edits if isinstance(edits, list) else []:
        if isinstance(edit, dict) and isinstance(edit.get("new_string"), str):
            old = edit.get("old_string")
            if hit := judge(path, *diff(old if isinstance(old, str) else "", str(edit["new_string"]))):
                return hit
    return None
