"""More of what interpreter code does, for code.py: format strings (`'rm -rf %s' % p`, `'{}'.format(p)`), literals in
parentheses, awk's concatenation by juxtaposition, variables assigned a literal and used later
(`p = Path('~/.bashrc'); p.write_text(...)`), strings evaluated as code (`exec('...')`, `eval "..."`,
`new Function('...')`), and commands fed through pipes (awk `print "..." | "sh"`, perl `open($f, "|-", "sh")`)."""

from __future__ import annotations

import re
from collections.abc import Callable

from dun.guard.codestrings import UNKNOWN, balanced
from dun.guard.textops import tr

_L = r"\x00(\d+)\x00"
_LIT = re.compile(_L)
_IDENT = r"\$?[A-Za-z_][\w.]*(?:\[[^\]\x00]*\])?(?:\(\))?"
_JOIN = "join"
_SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "ash", "fish", "/bin/sh", "/bin/bash"})
FOLDS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(rf"(?<![\w\x00)\]])\(\s*{_L}\s*\)"), "paren"),
    (re.compile(rf"{_L}\s*%\s*\(\s*{_L}(?:\s*,\s*{_L})*\s*,?\s*\)"), "percent"),
    (re.compile(rf"{_L}\s*%\s*{_L}"), "percent"),
    (re.compile(rf"{_L}\s*%\s*(?:{_IDENT}|\([^()\x00]*\))"), "percent-unknown"),
    (re.compile(rf"{_L}\s*\.\s*format\s*\(\s*{_L}(?:\s*,\s*{_L})*\s*\)"), "format"),
    (re.compile(rf"{_L}\s*\.\s*format\s*\([^()\x00]*\)"), "format-unknown"),
    # Text reversed or rotated where it is used: perl's reverse "...", s[::-1], s.split('').reverse().join(''),
    # Ruby's .reverse, PHP's strrev(), codecs.decode(s, 'rot13'), Ruby's s.tr('A-Za-z', 'N-ZA-Mn-za-m')
    (re.compile(rf"(?<![\w.$])(?:scalar\s+)?reverse\s*\(?\s*{_L}\s*\)?|\breversed\s*\(\s*{_L}\s*\)|{_L}\s*\[\s*::\s*-1\s*\]"
                rf"|{_L}\s*\.\s*split\s*\(\s*{_L}\s*\)\s*\.\s*reverse\s*\(\s*\)\s*\.\s*join\s*\(\s*{_L}\s*\)"
                rf"|{_L}\s*\.\s*reverse\b(?:\s*\(\s*\))?|\bstrrev\s*\(\s*{_L}\s*\)"), "reversed"),
    (re.compile(rf"\bcodecs\.(?:decode|encode)\s*\(\s*{_L}\s*,\s*{_L}\s*\)|{_L}\s*\.\s*tr\s*\(\s*{_L}\s*,\s*{_L}\s*\)"),
     "rotated"),
)
_AWK_WORDS = "print|printf|getline|return|in|delete|exit|if|while|for|do|else|function|system|close|BEGIN|END|next"
AWK_FOLDS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(rf"{_L}[ \t]+{_L}"), "juxtaposed"),
    (re.compile(rf"{_L}[ \t]+(?:\$\w+|[A-Za-z_]\w*)(?![\w(])"), "juxtaposed-unknown"),
    (re.compile(rf"(?<![\w\x00$])(?!(?:{_AWK_WORDS})\b)(?:\$\w+|[A-Za-z_]\w*)[ \t]+{_L}"), "unknown-juxtaposed"),
)
FOLD_KINDS = frozenset({"paren", "percent", "percent-unknown", "format", "format-unknown", "juxtaposed", "reversed",
                        "rotated", "charjoin",
                        "juxtaposed-unknown", "unknown-juxtaposed", "listjoin", "arrayjoin", "arrayjoin-bare"})
# Lists joined into one string: perl's join(SEP, LIST) and join SEP, LIST; ['a', 'b'].join(SEP) (Ruby, JS)
JOIN_FOLDS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(rf"(?<![\w.$]){_JOIN}\s*\(\s*{_L}(?:\s*,\s*{_L})+\s*\)"), "listjoin"),
    (re.compile(rf"(?<![\w.$]){_JOIN}\s+{_L}(?:\s*,\s*{_L})+(?=\s*(?:;|$|\n|\)|}}))"), "listjoin"),
    (re.compile(rf"\[\s*{_L}(?:\s*,\s*{_L})*\s*,?\s*\]\s*\.\s*join\s*\(\s*{_L}\s*\)"), "arrayjoin"),
    (re.compile(rf"(?<![\w.$])(?:implode|join)\s*\(\s*{_L}\s*,\s*\[\s*{_L}(?:\s*,\s*{_L})*\s*,?\s*\]\s*\)"),
     "listjoin"),  # PHP's implode(' ', ['git', 'push'])
    (re.compile(rf"{_L}\s*\.\s*join\s*\(\s*{_L}\s*\)"), "charjoin"),  # ''.join('abc'): its characters
    (re.compile(rf"{_L}\s*\.\s*join\s*\(\s*\(\s*{_L}(?:\s*,\s*{_L})*\s*,?\s*\)\s*\)"), "listjoin"),  # ' '.join((..))
    (re.compile(rf"\[\s*{_L}(?:\s*,\s*{_L})*\s*,?\s*\]\s*\.\s*join\s*(?:\(\s*\))?(?![\w(])"), "arrayjoin-bare"),
)
_NAME = re.compile(r"[A-Za-z_$][\w$]*")
# A variable assigned a literal or a list of literals ('x', ['a', 'b']) at the end of a statement.
_ASSIGNED = re.compile(r"(?<![\w.$])((?:my\s+|local\s+|var\s+|let\s+|const\s+)?)(\$?[A-Za-z_]\w*)\s*=(?!=)\s*"
                       r"(\x00\d+\x00|\[\s*\x00\d+\x00(?:\s*,\s*\x00\d+\x00)*\s*,?\s*\])\s*(?=;|\n|$)")
_PLACEHOLDER = re.compile(r"%[-#0 +]*\d*(?:\.\d+)?[sdrifx]|\{[^{}]*\}")


def folded(kind: str, values: list[str]) -> str:
    if kind == "paren":
        return values[0]
    if kind == "charjoin":  # ''.join(reversed('...')) in Python; a list already folded to text (%w[...]).join(' ')
        return values[1] if values[0] == "" else values[0]
    if kind == "reversed":
        return values[0][::-1]
    if kind == "rotated":  # codecs' rot13 (rot_13), or a tr of two sets
        rot = len(values) == 2 and values[1].lower().replace("_", "") == "rot13"
        return tr(values[0], ["A-Za-z", "N-ZA-Mn-za-m"] if rot else values[1:]) or UNKNOWN
    if kind in ("percent", "format"):
        fields = iter(values[1:])
        return _PLACEHOLDER.sub(lambda m: next(fields, UNKNOWN), values[0])
    if kind in ("percent-unknown", "format-unknown"):
        return _PLACEHOLDER.sub(UNKNOWN, values[0])
    if kind == "listjoin":
        return values[0].join(values[1:])
    if kind == "arrayjoin":
        return values[-1].join(values[:-1])
    if kind == "arrayjoin-bare":
        return "".join(values)
    if kind == "juxtaposed":
        return values[0] + values[1]
    return values[0] + UNKNOWN if kind == "juxtaposed-unknown" else UNKNOWN + values[0]


def substitute_variables(skeleton: str) -> str:
    """Each later use of a variable assigned a literal becomes that literal (until it is assigned again); a literal
    appended to it (cmd = 'git push'; cmd += ' -f', PHP's .=) is part of it."""
    skeleton = re.sub(rf"(?<![\w.$])(\$?[A-Za-z_]\w*)(\s*=\s*){_L}(\s*;\s*)\1\s*([+.])=\s*{_L}",
                      lambda m: f"{m.group(1)}{m.group(2)}\x00{m.group(3)}\x00 {m.group(5)} \x00{m.group(6)}\x00",
                      skeleton)
    for m in reversed(list(_ASSIGNED.finditer(skeleton))):
        name, lit = m.group(2), m.group(3)
        use = re.compile(rf"(?<![\w.$]){re.escape(name)}(?![\w(])(?!\s*=[^=])")
        rest = skeleton[m.end():]
        again = re.search(rf"(?<![\w.$]){re.escape(name)}\s*=(?!=)", rest)
        cut = again.start() if again else len(rest)
        skeleton = skeleton[:m.end()] + use.sub(lit, rest[:cut]) + rest[cut:]
    return skeleton


def callable_names(skeleton: str, values: list[str]) -> str:
    """Functions named by strings are those functions: obj['exec' + 'Sync'](...) is obj.execSync(...),
    getattr(os, 'sys' + 'tem') is os.system, $f = 'system'; $f(...) and call_user_func('system', ...) are
    system(...), send(:system, ...) and method(:system).call(...) are system(...)."""
    def named(pattern: str, build: Callable[[str, re.Match[str]], str], text: str) -> str:
        def one(m: re.Match[str]) -> str:
            value = m.group("sym") if "sym" in m.groupdict() and m.group("sym") else values[int(m.group("lit"))]
            return build(value, m) if _NAME.fullmatch(value) else m.group(0)

        return re.sub(pattern, one, text)

    lit = r"\x00(?P<lit>\d+)\x00"
    skeleton = re.sub(rf"{_L}\s*\.\s*execute\s*\(\s*\)", lambda m: f"system({m.group(0).split('.')[0]})",
                      skeleton)  # Groovy's "git push -f".execute()
    skeleton = named(rf"\brequire\s*\(\s*{lit}\s*\)", lambda v, m: v, skeleton)  # require('rimraf').sync(...)
    for m in reversed(list(re.finditer(rf"(\$\w+)\s*=\s*{_L}\s*;", skeleton))):  # PHP: $f = 'system'; $f(...)
        rest = skeleton[m.end():]
        skeleton = skeleton[:m.end()] + re.sub(rf"{re.escape(m.group(1))}(?=\s*\()", f"\x00{m.group(2)}\x00", rest)
    skeleton = named(rf"(?<=[\w)\]])\[\s*{lit}\s*\](?=\s*[.(\[])", lambda v, m: "." + v, skeleton)
    skeleton = named(rf"\bgetattr\s*\(\s*(?P<obj>[\w.]+)\s*,\s*{lit}\s*\)", lambda v, m: f"{m.group('obj')}.{v}",
                     skeleton)
    skeleton = named(rf"\b(?:__import__|importlib\.import_module|import_module)\s*\(\s*{lit}\s*\)", lambda v, m: v,
                     skeleton)
    skeleton = named(rf"\bcall_user_func(?:_array)?\s*\(\s*{lit}\s*,\s*", lambda v, m: v + "(", skeleton)
    skeleton = named(rf"\b(?:send|public_send|__send__)\s*\(\s*(?::(?P<sym>\w+)|{lit})\s*,\s*", lambda v, m: v + "(",
                     skeleton)
    skeleton = named(rf"\bmethod\s*\(\s*(?::(?P<sym>\w+)|{lit})\s*\)\s*\.\s*(?:call|\[\])\s*\(",
                     lambda v, m: v + "(", skeleton)
    return named(rf"(?<![\w\x00.$]){lit}(?=\s*\()", lambda v, m: v, skeleton)  # ('sys' . 'tem')('ls'); $f(...)


def evaluated(skeleton: str, values: list[str], calls: re.Pattern[str]) -> list[str]:
    """The literal strings passed to exec/eval/Function and friends."""
    out: list[str] = []
    for m in calls.finditer(skeleton):
        start = m.end()
        if skeleton[start - 1] == "(":
            region = skeleton[start:balanced(skeleton, start, "(", ")")]
        else:
            end = re.search(r"[;\n}]", skeleton[start:])
            region = skeleton[start - 1:start + (end.start() if end else len(skeleton))]
        out += [values[int(i)] for i in _LIT.findall(region) if values[int(i)].strip()]
    return out


def piped_commands(skeleton: str, values: list[str], lang: str) -> list[str]:
    """Commands that code writes into or reads from: awk `print X | "cmd"`, perl `open(F, "|-", "cmd")`. What is
    printed into a shell is itself a command."""
    out: list[str] = []
    if lang == "awk":
        for m in re.finditer(rf"\bprintf?\s*\(?\s*{_L}\s*\)?\s*\|\s*{_L}", skeleton):
            printed, target = values[int(m.group(1))], values[int(m.group(2))]
            out.append(printed if target.strip() in _SHELLS else target)
    for m in re.finditer(rf"\bopen\s*\(?\s*(?:my\s+)?[\w$]+\s*,\s*{_L}(?:\s*,\s*{_L})?", skeleton):
        mode = values[int(m.group(1))].strip()
        if m.group(2) and mode in ("|-", "-|"):
            out.append(values[int(m.group(2))])
        elif not m.group(2) and (mode.startswith("|") or mode.endswith("|")):
            out.append(mode.strip("|").strip())
    return out


def without_local_scripts(code: str) -> str:
    """exec(open('scripts/x.py').read()) runs a script in the repository, as `python scripts/x.py` does; it is not
    code hidden from the guard."""
    return re.sub(r"""open\(\s*(['"])(?![/~]|\.\.)[\w./-]+\.(?:py|rb|pl|js)\1\s*\)\.read\(\)""", "local_script", code)


_ARGV_LISTS = re.compile(r"\bsys\.argv\[(\d+):\]|@ARGV\b|(?<![\w$@.])ARGV\b(?!\s*\[)"
                         r"|\bprocess\.argv\.slice\(\s*(\d+)\s*\)|\barray_slice\(\s*\$argv\s*,\s*(\d+)\s*\)"
                         r"|\bDeno\.args\b(?!\s*\[)")


_SQL_LITERAL = re.compile(r"^\s*(?:drop|truncate|delete\s+from|update\s+\S+\s+set|alter\s+table)\b", re.I)
# Deletes of every row through an ORM: User.delete_all, Order.objects.all().delete(), session.query(X).delete(),
# Model.destroy({ where: {} }), Model.destroy({ truncate: true }), prisma's deleteMany(), schemas dropped through an
# ORM or driver (metadata.drop_all, drop_database, dropCollection, knex.schema.dropTable)
_ORM_ALL = re.compile(r"\b[A-Z]\w*(?:\.all)?\.(?:delete_all|destroy_all)\b|\.objects(?:\.all\(\))?\.delete\(\)"
                      r"|\bquery\(\s*\w+\s*\)\.delete\(\)|\.destroy\(\s*\{\s*(?:where\s*:\s*\{\s*\}|truncate\s*:\s*true)"
                      r"|\.deleteMany\(\s*(?:\{\s*\})?\s*\)|\bdrop_all\s*\(|\bdrop_database\s*\(|\bdropDatabase\s*\("
                      r"|\bdrop_collection\s*\(|\bdropCollection\s*\(|\bdrop_table\s*\(|\bdropTable\s*\(")
_HTTP_DELETE = re.compile(rf"\b(?:requests|httpx|axios|session|client|http)\.delete\s*\(\s*{_L}"
                          rf"|\bfetch\s*\(\s*{_L}\s*,\s*\{{[^}}]*method\s*:\s*{_L}"
                          rf"|\bRequest\s*\(\s*{_L}[^)]*method\s*=\s*{_L}")


def code_queries(skeleton: str, values: list[str]) -> list[str]:
    """SQL the code sends (its string literals that are statements) and deletes of every row through an ORM, for the
    database rules."""
    found = [values[int(i)] for i in _LIT.findall(skeleton) if _SQL_LITERAL.match(values[int(i)])]
    return found + [m.group(0) for m in _ORM_ALL.finditer(skeleton)]


def http_deletes(skeleton: str, values: list[str]) -> list[str]:
    """HTTP DELETE requests the code makes (requests.delete(url), fetch(url, {method: 'DELETE'})), as the curl
    command that would make them."""
    out = []
    for m in _HTTP_DELETE.finditer(skeleton):
        lits = [values[int(g)] for g in m.groups() if g is not None]
        if len(lits) == 1 or lits[-1].upper() == "DELETE":
            out.append(f"curl -X DELETE '{lits[0]}'")
    return out


def argv_lists(code: str, params: list[str]) -> str:
    """Parameter lists (sys.argv[1:], @ARGV, ARGV, process.argv.slice(2)) as lists of their strings: code that runs
    its parameters (perl -e 'exec @ARGV' rm -rf x) runs them."""
    if not params:
        return code

    def items(m: re.Match[str]) -> str:
        python, node, php = m.group(1), m.group(2), m.group(3)
        start = int(python) - 1 if python else int(node) - 2 if node else int(php) - 1 if php else 0
        quoted = ", ".join("'" + p.replace("\\", "\\\\").replace("'", "\\'") + "'" for p in params[max(start, 0):])
        return f"({quoted})" if m.group(0) == "@ARGV" else f"[{quoted}]"

    return _ARGV_LISTS.sub(items, code)


def perl_shifts(code: str) -> str:
    """A bare `shift` in a perl one-liner takes the next parameter: the first is $ARGV[0], the next $ARGV[1]."""
    count = iter(range(64))
    return re.sub(r"(?<![\w$@>-])shift\b(?!\s*[(@])", lambda m: f"$ARGV[{next(count, 63)}]", code)


_BUILDER = re.compile(r"\bCommand::new\(([^()]*)\)((?:\s*\.\s*args?\s*\((?:[^()]|\([^()]*\))*\))*)")


def _builder_args(m: re.Match[str]) -> str:
    """Rust's Command::new("rm").arg("-rf").args(["x"]) as one call: Command::new("rm", "-rf", "x")."""
    parts = re.findall(r"\.\s*args?\s*\(\s*&?\[?((?:[^()]|\([^()]*\))*?)\]?\s*\)", m.group(2))
    return f"Command::new({', '.join([m.group(1), *parts])})"


def normalize_imports(code: str) -> str:
    """__import__('os').system(...) is os.system(...)."""
    code = _BUILDER.sub(_builder_args, code)
    code = re.sub(r"__import__\(\s*(['\"])(\w+)\1\s*\)", r"\2", code)
    return re.sub(r"\bgetattr\(\s*([\w.]+)\s*,\s*(['\"])(\w+)\2\s*\)", r"\1.\3", code)  # getattr(os, 'system')


def callback_deletes(skeleton: str, values: list[str]) -> list[tuple[str, bool]]:
    """Deletes passed as callbacks: PHP array_map("unlink", glob(...)), Python map(os.remove, glob.glob(...))."""
    out: list[tuple[str, bool]] = []
    for m in re.finditer(rf"\barray_map\s*\(\s*{_L}\s*,[^\x00]*{_L}", skeleton):
        if values[int(m.group(1))] in ("unlink", "rmdir"):
            out.append((values[int(m.group(2))], False))
    for m in re.finditer(rf"\bmap\s*\(\s*(os\.remove|os\.unlink|shutil\.rmtree|os\.rmdir)\s*,[^\x00]*{_L}", skeleton):
        out.append((values[int(m.group(2))], m.group(1) == "shutil.rmtree"))
    return out


def iterated(skeleton: str, index: int) -> bool:
    """Whether literal `index` is a directory the code lists (os.listdir('.'), glob('*.log'), Path('x').iterdir()):
    a delete of what it yields deletes things under it, not it."""
    lit = f"\x00{index}\x00"
    return bool(re.search(rf"(?:listdir|scandir|walk|iterdir|readdirSync|readdir|glob|rglob|entries|children)\s*\(\s*"
                          rf"{re.escape(lit)}|{re.escape(lit)}\s*\)?\s*\.\s*(?:iterdir|rglob|glob)\s*\(", skeleton))


def opened_for_writing(skeleton: str, values: list[str]) -> list[str]:
    """Path('x').open('a'), open(Path('x'), 'w'): paths opened with a mode that writes."""
    return [values[int(m.group(1))] for m in re.finditer(rf"{_L}\s*\.\s*open\s*\(\s*(?:mode\s*=\s*)?{_L}", skeleton)
            if re.search(r"[wax+]", values[int(m.group(2))])]


def chdir_target(skeleton: str, values: list[str]) -> str | None:
    """The directory code changes into first (os.chdir(...), process.chdir(...), Dir.chdir(...), chdir(...))."""
    m = re.search(rf"\bchdir\s*\(?\s*{_L}", skeleton)
    return values[int(m.group(1))] if m else None


def strip_local_scripts(skeleton: str, values: list[str]) -> str:
    """The skeleton with `open('scripts/x.py').read()` (a script in the repository) taken out."""
    def local(m: re.Match[str]) -> str:
        path = values[int(m.group(1))]
        return "local_script" if re.fullmatch(r"(?![/~]|\.\.)[\w./-]+\.(?:py|rb|pl|js)", path) else m.group(0)

    return re.sub(rf"open\(\s*{_L}\s*\)\.read\(\)", local, skeleton)
