"""Brace expansion, which bash does before any other expansion: `rm -rf {~,/tmp}` is `rm -rf ~ /tmp`, and
`~/{.ssh,.gnupg}` is two paths in the home directory. Only unquoted braces expand; `{}` and `{x}` stay as they are.
"""

from __future__ import annotations

import itertools
import re

from dun.guard.lexer import LIT, Part, Word
from dun.guard.scan import ShellError

MAX_WORDS = 1024  # more than this from one word fails closed: the guard will not analyse a million paths
_SEQUENCE = re.compile(r"(-?\d+)\.\.(-?\d+)(?:\.\.(-?\d+))?|([A-Za-z])\.\.([A-Za-z])(?:\.\.(-?\d+))?")

Atom = str | Part  # an unquoted character, or a part that brace expansion does not look into


def brace_expand(word: Word) -> list[Word]:
    """The words `word` expands to (itself alone when it has no brace expression)."""
    if not any(p.kind == LIT and "{" in p.text for p in word.parts):
        return [word]
    atoms: list[Atom] = []
    for part in word.parts:
        atoms.extend(part.text if part.kind == LIT else [part])
    expanded = _expand(atoms)
    if len(expanded) == 1:
        return [word]
    return [_word(atoms, word.raw) for atoms in expanded]


def _expand(atoms: list[Atom]) -> list[list[Atom]]:
    for i, atom in enumerate(atoms):
        if atom != "{":
            continue
        found = _group(atoms, i)
        if found is None:
            continue
        end, alternatives = found
        out = [atoms[:i] + alt + rest for alt_atoms in alternatives for alt in _expand(alt_atoms)
               for rest in _expand(atoms[end + 1:])]
        if len(out) > MAX_WORDS:
            raise ShellError(f"brace expansion gives more than {MAX_WORDS} words")
        return out
    return [atoms]


def _group(atoms: list[Atom], start: int) -> tuple[int, list[list[Atom]]] | None:
    """(index of the closing brace, the alternatives) for a brace expression opening at `start`, else None."""
    depth, commas = 0, list[int]()
    for j in range(start, len(atoms)):
        atom = atoms[j]
        if atom == "{":
            depth += 1
        elif atom == "}":
            depth -= 1
            if depth == 0:
                inner = atoms[start + 1:j]
                if commas:
                    cuts = [start, *commas, j]
                    return j, [atoms[a + 1:b] for a, b in itertools.pairwise(cuts)]
                sequence = _sequence(inner)
                return None if sequence is None else (j, [list(s) for s in sequence])
        elif atom == "," and depth == 1:
            commas.append(j)
    return None


def _sequence(inner: list[Atom]) -> list[str] | None:
    if not all(isinstance(a, str) for a in inner):
        return None
    m = _SEQUENCE.fullmatch("".join(a for a in inner if isinstance(a, str)))
    if m is None:
        return None
    if m.group(1) is not None:
        first, last, step = int(m.group(1)), int(m.group(2)), abs(int(m.group(3) or 1)) or 1
    else:
        first, last, step = ord(m.group(4)), ord(m.group(5)), abs(int(m.group(6) or 1)) or 1
    if abs(last - first) // step >= MAX_WORDS:
        raise ShellError(f"brace expansion gives more than {MAX_WORDS} words")
    values = range(first, last + 1, step) if first <= last else range(first, last - 1, -step)
    return [str(v) if m.group(1) is not None else chr(v) for v in values]


def _word(atoms: list[Atom], raw: str) -> Word:
    parts: list[Part] = []
    buf: list[str] = []
    for atom in atoms:
        if isinstance(atom, str):
            buf.append(atom)
            continue
        if buf:
            parts.append(Part(LIT, "".join(buf)))
            buf.clear()
        parts.append(atom)
    if buf:
        parts.append(Part(LIT, "".join(buf)))
    return Word(parts, raw)
