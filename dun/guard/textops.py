"""Text that programs print or read as code, computed without running them: printf and echo -e output (their
escapes decoded, so `printf '\\x72\\x6d -rf ~' | sh` is read as `rm -rf ~`), a makefile's recipe lines, and the
commands in a sed script (`e command`, `s///e`)."""

from __future__ import annotations

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
