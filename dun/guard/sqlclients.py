"""The statements a command sends to a database: the query options and operands of the database shells the guard
knows (psql -c, mysql -e, redis-cli's words, bq query ...), and for any other program a destructive statement given
to its query option (trino --execute 'DROP ...')."""

from __future__ import annotations

import re

from dun.guard.expand import Val
from dun.guard.options import SPECS, Spec, parse

_PYTHON = re.compile(r"(python|pypy)[0-9.]*")
# program -> (options whose value is a query, index of the first operand that is a query, required subcommand)
SQL_CLIENTS: dict[str, tuple[tuple[str, ...], int | None, str]] = {
    "psql": (("-c", "--command"), None, ""), "mysql": (("-e", "--execute"), None, ""),
    "mariadb": (("-e", "--execute"), None, ""), "sqlite3": (("-cmd",), 1, ""), "duckdb": (("-c", "-s", "-cmd"), 1, ""),
    "sqlcmd": (("-Q", "-q"), None, ""), "clickhouse-client": (("-q", "--query"), None, ""),
    "cockroach": (("-e", "--execute"), None, "sql"), "mongosh": (("--eval",), None, ""),
    "mongo": (("--eval",), None, ""),
    "redis-cli": ((), 0, ""), "usql": (("-c", "--command"), None, ""), "snowsql": (("-q", "--query"), None, ""),
    "bq": ((), 0, "query"), "cqlsh": (("-e", "--execute"), None, ""),
    **{name: (("-e", "--execute"), None, "") for name in ("pgcli", "mycli", "litecli", "iredis")},
    "influx": (("-execute", "--execute"), None, ""), "cypher-shell": ((), 0, ""),
    "arangosh": (("--javascript.execute-string",), None, ""), "typeorm": ((), 0, "query"),
}
_SQL_START = re.compile(r"^\s*(?:drop|truncate|delete\s+from|update\s+\S+\s+set|alter\s+table|flushall|flushdb)\b",
                        re.I)
_QUERY_OPTIONS = ("-e", "--execute", "-q", "--query", "-Q", "--sql", "-c", "--command", "-execute")
_TEXT_TOOLS = frozenset({"grep", "egrep", "fgrep", "rg", "ag", "ack", "sed", "awk", "gawk", "git", "echo", "printf",
                         "sh", "bash", "zsh", "dash", "python", "python3", "node", "ruby", "perl", "php", "jq", "yq",
                         "xargs", "find", "vim", "vi", "nvim", "emacs", "less", "man", "tmux", "script", "su", "sudo",
                         "flock", "watch", "timeout", "env", "nix-shell", "sg", "docker", "kubectl"})


def queries(prog: str, args: list[Val]) -> list[str]:
    spec = SQL_CLIENTS.get(prog)
    if spec is None:  # any other database shell: an option's value that is a destructive statement (trino --execute)
        if prog in _TEXT_TOOLS or _PYTHON.fullmatch(prog):
            return []
        words = [a.text for a in args]
        return [v for i, w in enumerate(words[:-1]) if w in _QUERY_OPTIONS and _SQL_START.match(v := words[i + 1])] + [
            w.split("=", 1)[1] for w in words if w.startswith(tuple(o + "=" for o in _QUERY_OPTIONS if o[1] == "-"))
            and _SQL_START.match(w.split("=", 1)[1])]
    opts = parse(args, SPECS.get(prog, Spec()))
    found = [v.text for v in opts.value(*spec[0])]
    operands = opts.operands
    if spec[2]:
        if not operands or operands[0].text != spec[2]:
            return []
        operands = operands[1:]
    if spec[1] is not None:
        found += [" ".join(v.text for v in operands[spec[1]:])]
    return found
