"""What an edit of a file a tool runs can put into it, when the guard cannot compute the new file but can bound it:
the texts a `sed` substitution or append inserts, the strings a `jq`/`yq` filter assigns, the literals interpreter
code writes (after folding `'rm -rf ' + x`). A package.json script edited this way and then run (`sed -i ... &&
npm test`) is judged by every text the edit could have put there, plus the file on disk; an edit whose new text the
guard cannot bound (a back-reference, a value built at run time, a decoder) stays code it cannot see.
"""

from __future__ import annotations

import re

from dun.guard import code
from dun.guard.effects import interpreter
from dun.guard.expand import Ctx, Val
from dun.guard.options import SPECS, Spec, parse
from dun.guard.paths import normalize

_SED = SPECS["sed"]
_JQ = Spec("f", frozenset({"--arg", "--argjson", "--slurpfile", "--rawfile", "--from-file", "--indent", "--tab"}))
_SED_S = re.compile(r"(?:^|[;\n{}])\s*(?:\d+|\$|/[^/\n]*/)?\s*s(.)(?:\\.|(?!\1).)*\1((?:\\.|(?!\1).)*)\1[gpiImMe0-9w]*",
                    re.S)
_SED_TEXT = re.compile(r"(?:^|[;\n{}])\s*(?:\d+|\$|/[^/\n]*/)?\s*[aic]\\?\s*(.*)")
_UNBOUNDED_JQ = re.compile(r"\+|\\\(|@base64d|@sh|implode|\benv\b|\$ENV|\binput|ascii|ltrimstr|rtrimstr|sub\(|\bjoin\(")
_SED_READS = re.compile(r"(?:^|[;\n{}])\s*(?:\d+|\$|/[^/\n]*/)?\s*[rReW]\b")
# What brings text in from elsewhere than the literals: other files, the network, the environment, parameters
_READS = re.compile(r"readFile|readFileSync|\bopen\s*\(|require\s*\(|import\s*\(|\bload\s*\(|read_text|fetch|urlopen"
                    r"|requests|https?\b|\bsocket|process\.env|os\.environ|getenv|ENV\[|argv|ARGV|stdin|STDIN|\binput\b"
                    r"|File\.read|IO\.read|file_get_contents|\$_|<>|\bexec|\beval|spawn|system|popen|subprocess")
_OWN_READS = re.compile(r"""require\s*\(\s*['"](?:node:)?(?:fs|path|\./package\.json)['"]\s*\)"""
                        r"""|(?:json\.load\s*\(\s*)?open\s*\(\s*['"](?:\./)?package\.json['"](?:\s*,\s*['"][rw]['"])?\s*\)\)?""")
_STRING = re.compile(r'"((?:[^"\\]|\\.)*)"|\'([^\'\\]*)\'')


def inserted(prog: str, args: list[Val]) -> list[str] | None:
    """The texts this command can put into the file it edits or prints; None when the guard cannot bound them."""
    if prog in ("sed", "gsed"):
        o = parse(args, _SED)
        scripts = [v.text for v in o.value("-e", "--expression")] or [v.text for v in o.operands[:1]]
        if o.value("-f", "--file") or not scripts:
            return None
        out: list[str] = []
        for script in scripts:
            texts = [m.group(2) for m in _SED_S.finditer(script)] + [m.group(1) for m in _SED_TEXT.finditer(script)]
            if any(re.search(r"\\[0-9]|(?<!\\)&", t) for t in texts) or _SED_READS.search(script):
                return None  # text taken from the file itself or another one (r FILE), or run by sed (e)
            out += texts
        return out
    if prog in ("jq", "yq", "gojq"):
        o = parse(args, _JQ)
        filters = o.operands[:1]
        if not filters or len(o.operands) > 2 or o.value("-f", "--from-file", "--rawfile", "--slurpfile") or \
                _UNBOUNDED_JQ.search(filters[0].text):  # jq -s '.[0] * .[1]' a.json b.json: the other file's text
            return None
        return [a or b for a, b in _STRING.findall(filters[0].text)] + [v.text for v in o.value("--arg")]
    found = interpreter(prog, args)
    if found is None or found.kind == "shell" or not found.code or not all(v.known for v in found.code):
        return None
    text = _OWN_READS.sub("", found.code[0].text)  # require('./package.json'), require('fs'): the file it edits
    return None if _READS.search(text) else code.literals(text, found.kind)


def commands(texts: list[str]) -> list[str]:
    """Each text as a command line, and every quoted string inside it (`"test": "rm -rf ~"` holds `rm -rf ~`)."""
    out = list(texts)
    for text in texts:
        out += [a or b for a, b in _STRING.findall(text)]
    return [t for t in dict.fromkeys(out) if t.strip()]


def remember(ctx: Ctx, prog: str, args: list[Val] | None, paths: list[str]) -> None:
    """After a command wrote `paths`: what each may now hold (mv/cp carry it from their source)."""
    if prog in ("mv", "cp") and args is not None:
        ops = [normalize(v.text, ctx.cwd) for v in parse(args, SPECS.get(prog, Spec())).operands]
        if len(ops) == 2 and ops[0] is not None and ops[1] is not None:
            if ops[0] in ctx.edits:
                ctx.edits[ops[1]] = ctx.edits[ops[0]]
            else:
                ctx.edits.pop(ops[1], None)
            return
    texts = inserted(prog, args) if args is not None else None
    for path in paths:
        if texts is None:
            ctx.edits.pop(path, None)
        else:
            ctx.edits[path] = texts
