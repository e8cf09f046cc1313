"""Which machine a command talks to, and whether that machine is this one.

The guard lets an agent do as it likes to servers it runs itself (a test database or search node the task started on
localhost, a compose service reached by its one-word name, a unix socket) and holds back what it sends to any other
host: a shared cluster, a production database, a private address on the office network. A one-word host named for
production (`prod-ora`) is not a compose service."""

from __future__ import annotations

import re

_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://(?:[^@/?#]*@)?(\[[^\]]*\]|[^:/?#]*)")
_USER_AT = re.compile(r"^[\w.+-]+@([\w.-]+)(?::|$)")  # agent@db.prod.internal, user@host:path
_HOST_PORT = re.compile(r"^([\w.-]+|\[[0-9a-fA-F:]+\]):\d+(?:[/?]|$)")  # es:9200/x, db.prod.internal:5432
_LOCAL = re.compile(r"^(?:localhost|.*\.localhost|127(?:\.\d+){3}|::1|\[::1\]|0\.0\.0\.0|0|host\.docker\.internal"
                    r"|host\.containers\.internal|ip6-localhost)$", re.I)
_PROD = re.compile(r"(?:^|[^a-z])(?:prod|production|prd|live)(?:$|[^a-z])", re.I)
# Options whose value names the server (psql -h, mongosh --host, sqlcmd -S, redis-cli -u URL, --uri, --url)
HOST_OPTIONS = frozenset({"-h", "--host", "--hostname", "-H", "-S", "--server", "--uri", "--url", "-u", "--endpoint",
                          "--endpoint-url", "--addr", "--address", "--bootstrap-server", "--brokers", "--dsn",
                          "--connection", "--conn", "--db-url", "--database-url"})


def host_of(word: str) -> str | None:
    """The host a word names: a URL's, `user@host`'s, `host:port`'s; None when it names none."""
    if m := _URL.match(word):
        return m.group(1).strip("[]") or "localhost"  # postgresql:///db: the local socket
    if m := _USER_AT.match(word):
        return m.group(1)
    if m := _HOST_PORT.match(word):
        return m.group(1).strip("[]")
    return None


def is_local(host: str) -> bool:
    """This machine, a unix socket, or a service named by one word (a compose or port-forwarded test server)."""
    if not host or host.startswith("/") or _LOCAL.match(host):
        return True
    return "." not in host and ":" not in host and not _PROD.search(host)


def option_hosts(words: list[str], options: frozenset[str] = HOST_OPTIONS) -> list[str]:
    """The hosts named by server options (`-h db`, `--host=db`, `-u redis://db:6379`)."""
    out: list[str] = []
    for i, word in enumerate(words):
        flag, eq, value = word.partition("=")
        if flag in options and (eq or i + 1 < len(words)):
            value = value if eq else words[i + 1]
            out.append(host_of(value) or value.split(":", 1)[0].split("/", 1)[0])
    return [h for h in out if h and not h.startswith("-")]


def remote_hosts(words: list[str]) -> list[str]:
    """Every host other than this machine that the words name, by option, URL, `user@host` or `host:port`."""
    found = option_hosts(words) + [h for w in words if (h := host_of(w)) is not None]
    return [h for h in dict.fromkeys(found) if not is_local(h)]
