"""Text that programs print or read as code, computed without running them: printf and echo -e output (their
escapes decoded, so `printf '\\x72\\x6d -rf ~' | sh` is read as `rm -rf ~`), a makefile's recipe lines, and the
commands in a sed script (`e command`, `s///e`)."""

from __future__ import annotations

import binascii
import re

_SIMPLE = {"n": "\n", "t": "\t", "r": "\r", "a": "\a", "b": "\b", "f": "\f", "v": "\v", "e": "\x1b", "\\": "\\",
           '"': '"', "'": "'"}
_ESCAPE = re.compile(r"\\(x[0-9a-fA-F]{1,2}|u[0-9a-fA-F]{4}|0[0-7]{0,3}|[0-7]{1,3}|.)", re.S)
_DIRECTIVE = re.compile(r"%(%|[-+ #0]*\d*(?:\.\d+)?[sbdiouxXcqfeEgG])")


def unescape(text: str) -> str:
    """printf's and echo -e's backslash escapes."""

    def one(m: re.Match[str]) -> str:
        esc = m.group(1)
        if esc[0] in "xu":
            return chr(int(esc[1:], 16))
        if esc[0].isdigit():
            return chr(int(esc, 8) & 0xFF)
        return _SIMPLE.get(esc, "\\" + esc)

    return _ESCAPE.sub(one, text)


def printf(fmt: str, args: list[str]) -> str:
    """What `printf FMT ARGS...` prints: the format reused until the arguments run out, as the shell does."""
    pending = list(args)
    out: list[str] = []
    for _ in range(max(1, len(args))):
        used = False

        def directive(m: re.Match[str]) -> str:
            nonlocal used
            if m.group(1) == "%":
                return "%"
            used = True
            value = pending.pop(0) if pending else ""
            return unescape(value) if m.group(1).endswith("b") else value

        out.append(_DIRECTIVE.sub(directive, unescape(fmt)))
        if not used or not pending:
            break
    return "".join(out)


def echo(args: list[str]) -> str:
    """What echo prints: -n, -e and -E as bash reads them (escapes only with -e)."""
    escapes, newline = False, True
    while args and re.fullmatch(r"-[neE]+", args[0]):
        escapes = ("e" in args[0] and "E" not in args[0]) or (escapes and "E" not in args[0])
        newline = newline and "n" not in args[0]
        args = args[1:]
    text = " ".join(args)
    return (unescape(text) if escapes else text) + ("\n" if newline else "")


def make_recipes(makefile: str) -> str:
    """The shell commands of a makefile's recipes, with make's $(VAR) written as the shell's ${VAR}."""
    lines = []
    for line in makefile.splitlines():
        if line.startswith("\t"):
            command = line[1:].lstrip("@-+ ")
            command = re.sub(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)", r"${\1}", command).replace("$$", "$")
            lines.append(command)
    return "\n".join(lines)


def sed_commands(script: str) -> tuple[list[str], bool]:
    """(commands a GNU sed script runs with `e command`, whether it runs the pattern space with `e` or `s///e`)."""
    commands = [m.group(1) for m in re.finditer(r"(?:^|[;\n{])\s*(?:\d+|\$|/[^/]*/)?\s*e\s+([^;\n}]+)", script)]
    runs_text = bool(re.search(r"(?:^|[;\n{])\s*(?:\d+|\$|/[^/]*/)?\s*e\s*(?:$|[;\n}])", script)) or bool(
        re.search(r"(?:^|[;\n{])\s*(?:\d+|\$|/[^/]*/)?\s*s(.).*?\1.*?\1[gpiImM0-9]*e", script))
    return commands, runs_text


_CLASSES = {"[:upper:]": "ABCDEFGHIJKLMNOPQRSTUVWXYZ", "[:lower:]": "abcdefghijklmnopqrstuvwxyz",
            "[:digit:]": "0123456789", "[:space:]": " \t\n\r\f\v", "[:blank:]": " \t"}


def _tr_set(spec: str) -> str | None:
    """A tr set written out: ranges (a-z), escapes (\\n, \\041) and the plain classes; None for what it does not
    model ([=c=], [c*n])."""
    for name, chars in _CLASSES.items():
        spec = spec.replace(name, chars)
    if "[=" in spec or re.search(r"\[.\*\d*\]", spec) or "[:" in spec:
        return None
    chars = unescape(spec)
    out: list[str] = []
    i = 0
    while i < len(chars):
        if i + 2 < len(chars) and chars[i + 1] == "-" and ord(chars[i]) <= ord(chars[i + 2]):
            out += [chr(c) for c in range(ord(chars[i]), ord(chars[i + 2]) + 1)]
            i += 3
        else:
            out.append(chars[i])
            i += 1
    return "".join(out)


def tr(text: str, args: list[str]) -> str | None:
    """What `tr SET1 SET2` or `tr -d SET` prints for known input (ROT13 is `tr 'A-Za-z' 'N-ZA-Mn-za-m'`); None for
    the forms it does not model."""
    flags = [a for a in args if a.startswith("-") and len(a) > 1]
    sets = [_tr_set(a) for a in args if a not in flags]
    if None in sets:
        return None
    if flags == ["-d"] and len(sets) == 1:
        return text.translate({ord(c): None for c in sets[0] or ""})
    if flags or len(sets) != 2 or not sets[0] or not sets[1]:
        return None
    one, two = sets[0] or "", sets[1] or ""
    two += two[-1] * (len(one) - len(two))
    return text.translate({ord(a): b for a, b in zip(one, two, strict=False)})


def rev(text: str) -> str:
    return "\n".join(line[::-1] for line in text.split("\n"))


def b64decode(text: str) -> str | None:
    try:
        return binascii.a2b_base64(text.strip()).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return None


def tcl_commands(text: str) -> list[str]:
    """The commands a Tcl or expect program runs (exec ..., spawn ..., open "|..."), as shell: Tcl's braces quote
    like single quotes."""
    found = re.findall(r"(?:^|[\[;{\n])\s*(?:exec|spawn)\s+(?:-\S+\s+)*([^\]\n;]+)", text)
    found += re.findall(r"\bopen\s+[\"{]\|([^\"}]+)", text)
    return [re.sub(r"\{([^{}]*)\}", r"'\1'", c.replace("&", "").strip()) for c in found]


def _pattern(glob: str, longest: bool) -> str:
    star = ".*" if longest else ".*?"
    return "".join(star if c == "*" else "." if c == "?" else re.escape(c) for c in glob)


def edited(value: str, op: str, arg: str) -> str:
    """${x OP arg}: a pattern replaced (/ and //), a prefix or suffix removed (#, ##, %, %%), the case changed."""
    if op in ("^^", ",,"):
        return value.upper() if op == "^^" else value.lower()
    if op in ("/", "//"):
        pattern, _, replacement = arg.partition("/")
        return re.sub(_pattern(pattern, True), lambda _: replacement, value, count=0 if op == "//" else 1) \
            if pattern else value
    rx = re.compile(_pattern(arg, len(op) == 2))
    if op.startswith("#"):
        return value[m.end():] if (m := rx.match(value)) else value
    ends = [i for i in range(len(value), -1, -1) if rx.fullmatch(value, i)]
    return value[:(ends[-1] if len(op) == 2 else ends[0])] if ends else value
