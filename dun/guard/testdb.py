"""Databases that exist to be thrown away: the test environment of a framework (RAILS_ENV=test rails db:reset,
MIX_ENV=test mix ecto.reset, rails -e test) and a database named for tests (psql -d app_test, dropdb test_app,
DATABASE_URL=.../app_test). The database rules (sql.drop, db.drop, db.delete-all) do not apply to them: the test
suite rebuilds them on every run, and resetting them is how developers get a clean one.

Local databases are free of them the same way (`local_db`), when the command itself names this machine: a server
on localhost, 127.0.0.1, ::1 or a unix socket (`dropdb -h localhost`, `redis-cli -h 127.0.0.1 FLUSHDB`, `flyway
-url=jdbc:...//localhost/app`, a DATABASE_URL set on the line to one), a tool's `--local` instance (`wrangler d1
--local`, `supabase db reset`, whose default is the local stack), a database named for development (`-d app_dev`,
`psql shoplet_development`, RAILS_ENV=development, `sqlite3 db/dev.sqlite3`), or a local search node's index named
for tests or development. What names production or another host, a variable the guard cannot read (`psql
"$DATABASE_URL"`), or nothing at all stays denied: a bare `rails db:reset`, `manage.py flush`, `prisma migrate reset`
or `alembic downgrade base` works on whatever the project's configuration points at, which the guard does not read,
and the default development database holds the developer's data."""

from __future__ import annotations

import re
from collections.abc import Mapping

from dun.guard.effects import Facts
from dun.guard.hosts import host_of
from dun.guard.posture_own import local_value

TEST_SCOPED_RULES = frozenset({"sql.drop", "db.drop", "db.delete-all"})
_TEST_NAME = re.compile(r"(?:^|[_\-.])tests?(?:$|[_\-.])", re.I)  # app_test, test_app, app-test, not contest
_FRAMEWORK_ENV = {"rails": "RAILS_ENV", "rake": "RAILS_ENV", "mix": "MIX_ENV", "php": "APP_ENV"}
_CLIENTS = frozenset({"psql", "mysql", "mariadb", "dropdb", "createdb", "mongosh", "mongo", "pg_restore",
                      "clickhouse-client", "cockroach", "usql", "mysqladmin", "sqlcmd"})
_NAME_OPTIONS = ("-d=", "--dbname=", "-D=", "--database=")
_NAMED_DB = re.compile(r"\b(?:drop|create|alter)\s+(?:database|schema|keyspace)\s+(?:if\s+(?:not\s+)?exists\s+)?"
                       r"([`\"\[]?[\w.-]+[`\"\]]?)|\\c(?:onnect)?\s+([\w.-]+)|\buse\s+([\w.-]+)", re.I)
_TABLE_LEVEL = re.compile(r"\b(?:drop\s+table|truncate|delete\s+from|update\s+\w)", re.I)
_UNNAMED_DB = re.compile(r"getSiblingDB|getMongo|\$\(|\$\{|\bdatabase\s*\(", re.I)
_OTHER_DB = re.compile(r"\b(?:database|schema|keyspace)\b|\\c(?:onnect)?\b|\buse\b|getSiblingDB|getMongo", re.I)


def _db_name(text: str) -> str:
    """The database of a name or URL (postgres://u@h:5432/app_test?sslmode=disable -> app_test)."""
    return text.split("?", 1)[0].rstrip("/").rsplit("/", 1)[-1] if "://" in text else text


def test_scoped(facts: Facts, env: Mapping[str, str | None]) -> bool:
    """Whether the command works on a test database only. `env`: the variables set for it (prefix assignments and
    exports earlier in the line)."""
    prog = facts.program
    wanted = _FRAMEWORK_ENV.get(prog)
    if wanted is not None:
        given = [v.split("=", 1)[1] for v in facts.values if v.startswith(("-e=", "--environment=", "--env="))]
        given += [o.split("=", 1)[1] for o in [facts.sub, *facts.operands]
                  if o.startswith((wanted + "=", "--env=", "--environment="))]
        setting = given[-1] if given else env.get(wanted)  # rake db:reset RAILS_ENV=test
        return setting in ("test", "testing")
    if prog.startswith("python") and facts.sub.endswith("manage.py"):
        return any(o.startswith("--settings=") and _TEST_NAME.search(o[11:].replace(".", "_"))
                   for o in facts.operands) or bool(_TEST_NAME.search((env.get("DJANGO_SETTINGS_MODULE") or "")
                                                                      .replace(".", "_")))
    if prog in _CLIENTS:
        if any(_OTHER_DB.search(q) for q in facts.queries):
            return _names_test_databases(facts)  # DROP DATABASE x, \c other, use(...): the databases it names
        names = [v.split("=", 1)[1] for v in facts.values if v.startswith(_NAME_OPTIONS)]
        names += [facts.sub] if facts.sub and not facts.sub.startswith("-") else []
        return bool(names) and all(_TEST_NAME.search(_db_name(n)) for n in names)
    url = env.get("DATABASE_URL")
    tools = prog in ("prisma", "knex", "sequelize", "sequelize-cli", "typeorm") or "db-destroy" in facts.signals
    return tools and bool(url) and bool(_TEST_NAME.search(_db_name(url or "")))


def _names_test_databases(facts: Facts) -> bool:
    """The query names the databases it works on (DROP DATABASE IF EXISTS api_test; CREATE DATABASE api_test), and
    every one is named for tests, as is the database it connects to, if any; table-level statements with no database
    to connect to would run on the server's default one. A bare `test` is the server's shared schema, not a suite's."""
    named = [next(g for g in m.groups() if g).strip('`"[]') for q in facts.queries for m in _NAMED_DB.finditer(q)]
    conn = [v.split("=", 1)[1] for v in facts.values if v.startswith(_NAME_OPTIONS)]
    return bool(named) and all(_TEST_NAME.search(n) and n.lower() not in ("test", "tests") for n in named) and all(
        _TEST_NAME.search(_db_name(c)) for c in conn) and not any(
        _UNNAMED_DB.search(q) or (_TABLE_LEVEL.search(q) and not conn) for q in facts.queries)


# -- local databases ----------------------------------------------------------------------------------------------
_DEV_NAME = re.compile(r"(?:^|[_\-./])(?:dev|development|local|tests?|testing)(?:$|[_\-.\d])", re.I)
_PROD_WORD = re.compile(r"(?:^|[^a-z])(?:prod|production|live)(?:$|[^a-z])", re.I)
_DEV_ENVS = frozenset({"development", "dev", "local", "test", "testing"})
# Variables that point a client at its server: set to anything not on this machine (or unread), the target is unknown
_SERVER_VARS = ("DATABASE_URL", "PGHOST", "MYSQL_HOST", "REDIS_URL", "REDIS_HOST", "MONGODB_URI", "MONGO_URL",
                "SQLALCHEMY_DATABASE_URI", "DB_HOST")
_HOST_OPTIONS = ("-h", "--host", "--hostname", "-H", "--server", "--bootstrap-server", "--uri", "--url", "-url",
                 "-database", "--database-url", "--db-url")
_HTTP = frozenset({"curl", "wget", "http", "https", "xh", "xhs", "httpie", "curlie"})


def _option_values(words: list[str], options: tuple[str, ...]) -> list[str]:
    out = []
    for i, word in enumerate(words):
        flag, eq, value = word.partition("=")
        if flag in options and (eq or (i + 1 < len(words) and not words[i + 1].startswith("-"))):
            out.append(value if eq else words[i + 1])
    return out


def _servers(facts: Facts) -> list[str]:
    """The servers the words name: URLs (jdbc: too) and host options' values; cqlsh takes its host as an operand."""
    words = facts.words
    urls = [w.split("=", 1)[1] if w.startswith("-") and "=" in w else w for w in words if "://" in w]
    named = [u.removeprefix("jdbc:") for u in urls]
    options = _HOST_OPTIONS if facts.program not in _HTTP else ()  # curl -H is a header
    named += [v for v in _option_values(words, options) if "://" not in v]
    if facts.program == "cqlsh" and facts.sub and not facts.sub.startswith("-"):
        named.append(facts.sub)
    return named


def _env_local(env: Mapping[str, str | None]) -> bool:
    """No server variable is set, or each one set leads to this machine (an unread one does not)."""
    for name in _SERVER_VARS:
        if name in env and not (env[name] and "$" not in (env[name] or "") and local_value(env[name] or "")):
            return False
    return True


def local_db(facts: Facts, env: Mapping[str, str | None]) -> bool:
    """Whether the database this command works on is named as on this machine: see the module's docstring."""
    if "prod-target" in facts.signals or any(_PROD_WORD.search(q) for q in facts.queries):
        return False  # psql -h localhost -c 'DROP DATABASE app_production': a copy of production's data, or a tunnel
    servers = _servers(facts)
    if any("$" in s for s in servers) or not _env_local(env):
        return False
    if facts.program in _HTTP:  # a local search node: the index must be named for tests (not `_all`, not `*`)
        return bool(servers) and all(_local_host(s) and _DEV_NAME.search(s.split("://", 1)[-1].split("/", 1)[-1]
                                                                           .split("/", 1)[0]) for s in servers)
    if servers:
        return all(local_value(s) or _local_host(s) for s in servers)
    if "--local" in facts.words and "--remote" not in facts.words:
        return True
    url = env.get("DATABASE_URL")
    if url and "$" not in url and (local_value(url) or _local_host(url)):
        return True
    if facts.program == "supabase":  # supabase db reset: the local stack unless told --linked or --db-url
        return facts.sub == "db" and not {"--linked", "--db-url"} & {w.split("=", 1)[0] for w in facts.words}
    if facts.program in ("rails", "rake"):
        given = [o.split("=", 1)[1] for o in [facts.sub, *facts.operands] if o.startswith("RAILS_ENV=")]
        given += [v.split("=", 1)[1] for v in facts.values if v.startswith(("-e=", "--environment="))]
        setting = given[-1] if given else env.get("RAILS_ENV")
        return setting in _DEV_ENVS and "DISABLE_DATABASE_ENVIRONMENT_CHECK" not in env
    if facts.program in ("sqlite3", "sqlite", "litecli") and facts.sub and not facts.sub.startswith("-"):
        return bool(_DEV_NAME.search(facts.sub)) and not facts.sub.startswith(("/", "~", "..", "$"))
    names = [v.split("=", 1)[1] for v in facts.values if v.startswith(_NAME_OPTIONS)]
    names += [facts.sub] if facts.sub and not facts.sub.startswith("-") and facts.program in _CLIENTS else []
    return bool(names) and all(_DEV_NAME.search(_db_name(n)) for n in names) and not any(
        _OTHER_DB.search(q) for q in facts.queries)


def _local_host(server: str) -> bool:
    host = host_of(server) if "://" in server else server.split(":", 1)[0]
    return local_value(host) if host else False
