"""Built-in rules about databases, which no filesystem sandbox protects: SQL that drops or empties, database clients
and services, framework and migration tools that drop, reset or roll everything back, and search indices deleted by
pattern."""

from __future__ import annotations

from dun.guard.ruletypes import Match, Rule

_NO_WHERE = r"(;|$|\breturning\b)"
_HTTP_DELETE = ("-X=DELETE", "--request=DELETE", "-X=delete", "--request=delete")
_HTTPIE = ("http", "https", "xh", "xhs")
# Elasticsearch/OpenSearch index patterns: every index (_all) or every one a wildcard matches (logs-*)
_MANY_INDICES = ("*://*/*[*]*", "*:[0-9]*/*[*]*", "*/_all", "*/_all[/?,]*", "*/[*]", "*/[*][/?]*")
_RAILS = ("rails", "rake")
_SYMFONY = ("console", "php", "symfony")  # bin/console, php bin/console, symfony console
_DOCTRINE_DROP = ("doctrine:database:drop", "doctrine:schema:drop", "d:d:d", "d:s:d")
# Migration tools and database services whose commands drop, reset or empty a database
_DB_TOOL_MATCHES = (
    Match(programs=("mix",), subcommands=("ecto.drop", "ecto.reset")),
    Match(programs=("mix",), subcommands=("ecto.rollback",), flags_any=("--all",)),
    Match(programs=("diesel",), subcommands=("database",), actions=("reset", "drop")),
    Match(programs=("diesel",), subcommands=("migration",), actions=("redo", "revert"), flags_any=("--all", "-a")),
    Match(programs=("sqlx", "cargo-sqlx"), subcommands=("database", "db"), actions=("drop", "reset")),
    Match(programs=("sqlx", "cargo-sqlx"), subcommands=("migrate",), actions=("revert",), args_any=("0",),
          flags_any=("--target-version",)),  # sqlx migrate revert --target-version 0: every migration undone
    Match(programs=("goose",), args_any=("reset",)),
    Match(programs=("goose",), args_any=("down-to",)),
    Match(programs=("migrate",), args_any=("drop",)), Match(programs=("migrate",), subcommands=("drop",)),
    Match(programs=("migrate",), args_any=("down",), flags_any=("-all", "--all")),
    Match(programs=("migrate",), subcommands=("down",), flags_any=("-all", "--all")),
    Match(programs=("dbmate",), subcommands=("drop",)),
    Match(programs=("atlas",), subcommands=("schema",), actions=("clean",)),
    Match(programs=("mikro-orm", "mikro-orm-esm"), subcommands=("schema:drop", "schema:fresh", "migration:fresh")),
    Match(programs=("supabase",), subcommands=("db",), actions=("reset",)),
    Match(programs=("pscale",), subcommands=("database", "branch", "db"), actions=("delete", "rm")),
    Match(programs=("turso",), subcommands=("db",), actions=("destroy", "delete")),
    Match(programs=("neonctl", "neon"), args_any=("delete",)),
    Match(programs=("influx",), args_any=("delete",)), Match(programs=("influx",), subcommands=("delete",)),
    Match(programs=("kafka-topics", "kafka-topics.sh", "kafka-consumer-groups", "kafka-consumer-groups.sh"),
          flags_any=("--delete",)),
    Match(programs=("kafka-delete-records", "kafka-delete-records.sh")),
    Match(programs=("rabbitmqctl",), subcommands=("reset", "force_reset", "purge_queue", "delete_queue",
                                                  "delete_vhost", "delete_user")),
    Match(programs=("rabbitmqadmin",), args_any=("delete", "purge")),
    Match(programs=("nats",), subcommands=("stream", "kv", "object", "consumer"), actions=("rm", "del", "purge")),
    Match(programs=("mongorestore",), flags_any=("--drop",)),
    Match(programs=_SYMFONY, args_any=_DOCTRINE_DROP), Match(programs=_SYMFONY, subcommands=_DOCTRINE_DROP),
    Match(programs=_SYMFONY, args_any=("doctrine:fixtures:load",), flags_none=("--append",)),
    Match(programs=_SYMFONY, subcommands=("doctrine:fixtures:load",), flags_none=("--append",)),
    Match(programs=_RAILS, subcommands=("db:migrate:reset",)),
    Match(programs=_RAILS, subcommands=("db:migrate",), args_any=("VERSION=0",)),
    Match(programs=_RAILS, subcommands=("db:rollback", "db:migrate:down"), args_any=("STEP=[1-9][0-9]*",)),
    Match(programs=("yii",), subcommands=("migrate/fresh",)),
    Match(programs=("yii",), subcommands=("migrate/down",), args_any=("all",)),
)

DATA_RULES: tuple[Rule, ...] = (
    Rule("sql.drop", "sends SQL DROP or TRUNCATE", (Match(queries=(r"\bdrop\b", r"\btruncate\b")),)),
    Rule("db.drop", "drops, resets or flushes a database",
         (Match(programs=("dropdb", "dropuser")), Match(programs=("mysqladmin",), subcommands=("drop",)),
          Match(signals=("db-destroy",)),  # any tool's words: wp db reset, dotnet ef database drop, drush sql-drop
          Match(programs=("pg_restore",), flags_any=("-c", "--clean"), values_any=("-d=*", "--dbname=*")),
          Match(queries=(r"\bflush(all|db)\b", r"\bdropDatabase\s*\(", r"\.drop\s*\(", r"\._drop(?:Database)?\s*\(",
                         r"\bdrop_(?:all|database|collection|table)\s*\(", r"\bdrop(?:Collection|Table)\s*\(")),
          Match(programs=("rails", "rake"), subcommands=("db:drop*", "db:reset", "db:purge", "db:schema:load",
                                                         "db:truncate_all", "db:seed:replant")),
          Match(programs=("python*",), subcommands=("manage.py", "*/manage.py"), args_any=("flush", "reset_db")),
          Match(programs=("manage.py", "django-admin"), subcommands=("flush", "reset_db")),
          Match(programs=("prisma",), subcommands=("migrate",), args_any=("reset",)),
          Match(programs=("prisma",), subcommands=("db",), flags_any=("--force-reset",)),
          Match(programs=("php",), subcommands=("artisan",),
                args_any=("migrate:fresh", "migrate:reset", "migrate:refresh", "db:wipe")),
          Match(programs=("sequelize", "sequelize-cli"), subcommands=("db:drop", "db:migrate:undo:all",
                                                                      "db:seed:undo:all")),
          Match(programs=("flyway",), subcommands=("clean",)),
          Match(programs=("liquibase",), subcommands=("dropAll", "drop-all")),
          Match(queries=(r"\bdrop(?:All)?Users?\s*\(", r"\bdropRole\s*\(")),
          Match(programs=("typeorm",), subcommands=("schema:drop",)),
          Match(programs=("knex",), subcommands=("migrate:rollback", "migrate:down"), flags_any=("--all",)),
          Match(programs=("python*",), subcommands=("manage.py", "*/manage.py"), actions=("migrate",),
                args_any=("zero",)),  # manage.py migrate app zero: every migration of the app undone
          Match(programs=("manage.py", "django-admin"), subcommands=("migrate",), args_any=("zero",)),
          Match(programs=("alembic",), subcommands=("downgrade",), args_any=("base",)),
          Match(programs=("flask",), subcommands=("db",), args_any=("base",)),
          *_DB_TOOL_MATCHES)),
    Rule("db.delete-all", "deletes or overwrites every row or key (DELETE/UPDATE without WHERE, redis DEL, "
         "deleteMany({}), etcd del, Elasticsearch DELETE _all)",
         (Match(queries=(rf"\bdelete\s+from\s+[\w.\"`\[\]]+\s*{_NO_WHERE}",
                         rf"\bwhere\s+(1\s*=\s*1|true|1|not\s+false)\s*{_NO_WHERE}",
                         r"\bupdate\s+[\w.\"`\[\]]+\s+set\b(?:(?!\bwhere\b)[^;])*(;|$)",
                         r"^\s*(del|unlink|hdel)\b.*(\{\}|\$|`|\*)",
                         r"\b(deleteMany|remove|delete_many)\s*\(\s*(\{\s*\})?\s*\)",
                         r"\b(updateMany|update_many|replaceMany)\s*\(\s*\{\s*\}\s*,",
                         r"\b[A-Z]\w*(?:\.all)?\.(?:delete_all|destroy_all)\b|\.objects(?:\.all\(\))?\.delete\(\)",
                         r"\bquery\(\s*\w+\s*\)\.delete\(\)|\.destroy\(\s*\{\s*(?:where\s*:\s*\{\s*\}|truncate\s*:)",
                         r"\bmatch\s*\(\s*\w*\s*(?::\s*\w+)?\s*\)\s*(?:detach\s+)?delete\b")),  # Cypher, all nodes
          Match(programs=("etcdctl",), subcommands=("del",)),
          Match(programs=("curl",), values_any=_HTTP_DELETE, subcommands=_MANY_INDICES),
          Match(programs=_HTTPIE, subcommands=("DELETE", "delete"), actions=_MANY_INDICES),
          Match(programs=("curl", *_HTTPIE), args_any=("*/_delete_by_query*",), values_any=("*match_all*",)),
          Match(programs=("curl", *_HTTPIE), subcommands=("*/_delete_by_query*",), values_any=("*match_all*",)),
          Match(programs=_HTTPIE, args_any=("*/_delete_by_query*",)))),
)
