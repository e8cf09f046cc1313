"""How loosely typed dun is: `Any` and `dict[str, Any]` per 1,000 lines of its Python sources.

Target: at most 8 `Any` per 1,000 lines in dun/ (pre-commit has 7.7, pytest 8.2). Only code counts: the word in a
comment or a string is not a use. Lines are physical lines (`wc -l`) of the `.py` files under the directory.
Run: .venv/bin/python bench/any_count.py [DIR] [--target N]
"""

from __future__ import annotations

import argparse
import io
import sys
import tokenize
from dataclasses import dataclass
from pathlib import Path

TARGET = 8.0
EXIT_PASS, EXIT_FAIL = 0, 1
_DICT_STR_ANY = ("dict", "[", "str", ",", "Any", "]")


@dataclass
class Counts:
    files: int = 0
    lines: int = 0
    any: int = 0
    dict_str_any: int = 0

    def per_k(self, n: int) -> float:
        return 1000 * n / self.lines if self.lines else 0.0


def count_source(text: str) -> tuple[int, int]:
    """(`Any` names, `dict[str, Any]` annotations) in one module's code; comments and strings are not code."""
    words = [tok.string for tok in tokenize.generate_tokens(io.StringIO(text).readline)
             if tok.type in (tokenize.NAME, tokenize.OP)]
    dicts = sum(1 for i in range(len(words)) if tuple(words[i:i + len(_DICT_STR_ANY)]) == _DICT_STR_ANY)
    return words.count("Any"), dicts


def count_tree(top: Path) -> Counts:
    counts = Counts()
    for path in sorted(top.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        anys, dicts = count_source(text)
        counts.files += 1
        counts.lines += len(text.splitlines())
        counts.any += anys
        counts.dict_str_any += dicts
    return counts


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dir", nargs="?", type=Path, default=Path(__file__).resolve().parent.parent / "dun")
    ap.add_argument("--target", type=float, default=TARGET, help=f"most `Any` per 1,000 lines (default {TARGET:g})")
    args = ap.parse_args(argv)
    if not args.dir.is_dir():
        print(f"any_count: {args.dir} is not a directory", file=sys.stderr)
        return 2
    counts = count_tree(args.dir)
    ok = counts.per_k(counts.any) <= args.target
    print(f"== Any in {args.dir}")
    print(f"  files           {counts.files:,}")
    print(f"  lines           {counts.lines:,}")
    print(f"  dict[str, Any]  {counts.dict_str_any:,}   ({counts.per_k(counts.dict_str_any):.1f} per 1,000 lines)")
    print(f"  Any             {counts.any:,}   ({counts.per_k(counts.any):.1f} per 1,000 lines)   "
          f"target <= {args.target:g}   {'PASS' if ok else 'FAIL'}")
    return EXIT_PASS if ok else EXIT_FAIL


if __name__ == "__main__":
    sys.exit(main())
