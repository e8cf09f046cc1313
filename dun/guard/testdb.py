"""Databases that exist to be thrown away: the test environment of a framework (RAILS_ENV=test rails db:reset,
MIX_ENV=test mix ecto.reset, rails -e test) and a database named for tests (psql -d app_test, dropdb test_app,
DATABASE_URL=.../app_test). The database rules (sql.drop, db.drop, db.delete-all) do not apply to them: the test
suite rebuilds them on every run, and resetting them is how developers get a clean one."""

from __future__ import annotations

import re
from collections.abc import Mapping

from dun.guard.effects import Facts

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
