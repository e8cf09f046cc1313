"""Production named by the environment or the settings rather than by a verb, and the state changes aimed there.

`RAILS_ENV=production bin/rails db:migrate`, `alembic -c alembic.prod.ini downgrade base`, `psql "$PROD_DATABASE_URL"
-c "DELETE ..."`, `heroku run rails db:rollback -a shoplet-prod`, `echo 'Order.delete_all' | heroku run rails console
-a shoplet-prod`: the program is an everyday one (a migration tool, a database client, a console) and its verb is
everyday too; what makes it dangerous is where it points. This module reads "the target is production" across the
shapes that say so (an environment variable set for the command, a settings module, a config or properties file, an
environment, app, org or context option, a host, a variable or command substitution named for production) and
whether the command changes state there: a migration, rollback or repair, a runner or shell given code that writes,
SQL that writes or administers the server, a queue, cache or topic cleared, a console or database shell fed on stdin.
Reads stay free: a SELECT, `--sql` to a file, `migrate status`, `heroku logs`, `config:get`.

Decided: the session's own environment is not read (NODE_ENV=production is common in build images); only variables
the command line itself sets (a prefix, an export earlier on the line) are.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from dun.guard.effects import Facts, program_name
from dun.guard.ruletypes import Match, Rule

if TYPE_CHECKING:
    from dun.guard.expand import Val
    from dun.guard.runs import Stream

__all__ = ["PROD_RULES", "carried", "changes", "judge_prod", "production"]

_PROD = r"(?:prod|production|prd)"
_PROD_VALUE = re.compile(rf"(?:^|[^a-z0-9]){_PROD}(?:$|[^a-z0-9])", re.I)
# Variables that choose the environment an app runs in; their value alone says production.
_ENV_NAMES = re.compile(r"(?:RAILS|RACK|NODE|APP|MIX|FLASK|DJANGO|DEPLOY|APP_|SPRING_PROFILES|ASPNETCORE|DOTNET|"
                        r"GO|PHP|LARAVEL|SYMFONY|STAGE|TARGET|JAVA|SST)?_?(?:ENV|ENVIRONMENT|STAGE|SETTINGS_MODULE|"
                        r"PROFILES_ACTIVE|ACTIVE)$")
# A variable or command substitution named for production: $PROD_DATABASE_URL, ${DATABASE_URL_PRODUCTION},
# $(heroku config:get DATABASE_URL -a shoplet-prod).
_PROD_REF = re.compile(rf"\$\{{?\w*(?<![A-Za-z0-9]){_PROD}(?![a-z0-9])\w*|\$\{{?{_PROD}_\w*|\$\(.*?-{_PROD}\b.*?\)",
                       re.I)
# A host whose name says production: db.prod.acme.internal, api-prod.example.com.
_PROD_HOST = re.compile(rf"(?:^|[@/=,\s]|^-\w)(?:[\w-]+\.)*(?:[\w]+-)?{_PROD}(?:-[\w]+)?(?:\.[\w-]+){{2,}}", re.I)
# Options whose value names the environment, the settings, a config file, the app, the org or the context.
_TARGET_OPTS = frozenset({
    "--settings", "-c", "--config", "--defaults-file", "-configFiles", "--env-file", "-environment", "--environment",
    "-e", "--env", "-E", "-a", "--app", "-o", "--target-org", "-u", "--target-username", "--context",
    "--kube-context", "-p", "--profile", "-x", "--url", "-database", "--database-url", "--stage", "-s", "--site"})
_PROD_NAME = re.compile(rf"[a-z][a-z0-9]*(?:-[a-z0-9]+)*-{_PROD}", re.I)  # acme-prod, gke-prod: no dots or paths
_FILE_PROD = re.compile(rf"(?:^|[./_-]){_PROD}(?:[./_-]|$)", re.I)


def production(facts: Facts, assigned: list[tuple[str, str | None]]) -> str | None:
    """What names production for this command (a variable, an option, a host), or None. `assigned` holds the
    variables the command line sets, each both as written and as expanded."""
    for name, value in assigned:
        if value and _ENV_NAMES.search(name) and _PROD_VALUE.search(value):
            return f"{name}={value}"
        if value and (_PROD_REF.search(value) or _PROD_HOST.search(value)):
            return f"{name}={value}"
    words = facts.words
    for i, word in enumerate(words):
        flag, eq, value = word.partition("=")
        if word.startswith("-") and not eq and flag in _TARGET_OPTS and i + 1 < len(words):
            value, eq = words[i + 1], "="
        if word.startswith("-") and eq and flag in _TARGET_OPTS and _FILE_PROD.search(value):
            return word if "=" in word else f"{word} {value}"
        if ref := _PROD_REF.search(word):
            return ref.group(0)
        if ("://" in word or not word.startswith("-")) and (host := _PROD_HOST.search(word)):
            return host.group(0).lstrip("@/=, ")
    for word in words:
        if _PROD_NAME.fullmatch(word):
            return word  # gcloud sql instances restore-backup ledger-prod: a resource named for production
    return None  # longtail's prod-target reads any word (values-prod.yaml): too wide for everyday verbs


# Verbs (or parts of a verb: db:migrate, rollback-count) that change a database, an app or a queue.
_WRITE_PARTS = frozenset({
    "migrate", "migration", "rollback", "downgrade", "upgrade", "repair", "update", "force", "stamp", "revert", "reset",
    "drop", "clean", "seed", "truncate", "flush", "flushdb", "flushall", "clear", "purge", "delete", "del", "destroy",
    "unset", "detach", "killall", "kill", "restart", "resize", "promote", "copy", "apply", "restore", "unschedule",
    "maintenance", "loaddata", "sqlflush", "baseline", "undo", "up", "down", "goto", "deploy", "resolve", "push",
    "remove", "rm", "set", "expire", "hset", "lpush", "rpush", "xadd", "publish", "import", "load", "redo", "sync",
    "changelog", "execute", "createsuperuser", "changepassword", "credentials", "shutdown", "label", "annotate",
    "patch", "cp", "scale", "rollout", "edit", "replace", "cordon", "drain", "taint", "restore-backup"})
_HTTP = frozenset({"curl", "http", "https", "xh", "wget", "httpie"})
_HTTP_WRITE = re.compile(r"(?:^|\s)(?:-X\s*|--request[=\s])(?:POST|PUT|PATCH|DELETE)\b|"
                         r"(?:^|\s)(?:-d|--data\S*)(?:\s|=)")
_RPC_WRITE = re.compile(r"[./](?:Post|Create|Delete|Update|Set|Remove|Cancel|Refund|Transfer|Purge|Reset|Drop)\w*$")
# Parts that only read, whatever else the verb says (db:migrate:status, flyway info).
_READ_PARTS = frozenset({
    "status", "info", "history", "show", "current", "heads", "validate", "diff", "check", "list", "ls", "logs",
    "log", "get", "describe", "inspect", "showmigrations", "sqlmigrate", "version", "help", "plan", "pending",
    "dump", "print", "lint", "explain", "select", "keys", "scan", "ttl", "type", "ps", "releases", "sql", "template",
    "render", "preview", "can-i", "whoami", "top", "events", "api-resources", "auth-check"})
# Programs that carry a payload: the code, SQL or command they are given is what changes state.
_CARRIERS = frozenset({"run", "runner", "exec", "shell", "console", "c", "dbshell", "psql", "pg:psql", "redis:cli",
                       "cli", "apex", "debug", "ssh", "mongosh", "mongo", "mysql", "sqlcmd", "sqlplus", "eval",
                       "query", "sql", "r"})
_SQL_WRITE = re.compile(
    r"\b(?:DELETE\s+FROM|UPDATE\s+[\w.\"`]+\s+SET|TRUNCATE|INSERT\s+INTO|MERGE\s+INTO|REPLACE\s+INTO|"
    r"DROP\s+(?:TABLE|INDEX|COLUMN|DATABASE|SCHEMA|VIEW|USER|ROLE|TRIGGER|FUNCTION|SEQUENCE|TYPE|EXTENSION)|"
    r"ALTER\s+(?:TABLE|SYSTEM|DATABASE|USER|ROLE|INDEX|SCHEMA|SEQUENCE)|"
    r"(?<!SHOW )CREATE\s+(?:TABLE|INDEX|USER|ROLE|DATABASE)|"
    r"GRANT|REVOKE|VACUUM\s+FULL|REINDEX|CLUSTER\s+\w|RESET\s+MASTER|PURGE\s+BINARY|KILL\s+\d|"
    r"pg_terminate_backend|pg_cancel_backend|pg_drop_replication_slot|pg_reload_conf|pg_promote|"
    r"FLUSHDB|FLUSHALL|(?-i:SHUTDOWN|CONFIG\s+SET))\b", re.I)
_SQL_READ = re.compile(r"^\s*(?:SELECT|SHOW|EXPLAIN|DESCRIBE|DESC|WITH)\b", re.I)
_DRY = frozenset({"--check", "--plan", "--sql", "--help", "--dryrun", "--noop", "--print", "--what-if"})
# ORM, cache and queue calls in code that change state (Order.delete_all, Rails.cache.clear, .objects.all().delete()).
_CODE_WRITE = re.compile(
    r"\.(?:delete_all|destroy_all|update_all|update_columns?|update_attribute|insert_all|upsert_all|delete|"
    r"destroy|update|save|create|clear|refund|cancel|drop|remove|purge|truncate|flush\w*|bulk_update|bulk_create|"
    r"deleteMany|deleteOne|updateMany|updateOne|insertOne|insertMany|dropDatabase|adminCommand|createUser|"
    r"perform_now|perform_later|deliver_now|deliver_later)\b!?|\brs\.(?:remove|stepDown|reconfig)\b|"
    r"\b(?:delete|update|insert|upsert|undelete)\s+\[|\bDatabase\.(?:delete|update|insert|upsert)")  # apex DML
_FLAG_WRITE = frozenset({"--delete", "--alter", "--execute", "--reset-offsets", "--delete-offsets", "--force",
                         "--confirm"})
_SCRIPT_OPTS = frozenset({"-f", "--file", "-i", "--script", "-script"})


_RUN = frozenset({"run", "exec", "ssh", "console", "debug", "run:detached", "ssh:console"})
_RUNNERS = {p: _RUN for p in ("heroku", "kubectl", "oc", "fly", "flyctl", "railway", "render", "gcloud", "az",
                               "aws", "docker", "podman", "scalingo", "dokku", "cf", "clever", "platform", "upsun")}


def _reads(word: str) -> bool:
    parts, low = _parts(word), word.lower()
    if low == "sql":
        return False  # gcloud sql instances ...: the service's name, not a read
    return low in _READ_PARTS or (bool(parts) and parts[-1] in _READ_PARTS)


def _parts(word: str) -> list[str]:
    return [p for p in re.split(r"[:._/-]", word.lower()) if p]


def changes(facts: Facts, feed: str | None, fed: bool) -> str | None:
    """What this command changes (a short phrase), or None when it only reads or cannot be seen to write."""
    words = facts.words
    if "--" in words and facts.program in _RUNNERS:
        words = words[words.index("--") + 1:]  # kubectl exec POD -- CMD: CMD says what it does
    text = " ".join(words)
    if (m := _SQL_WRITE.search(text)) and not re.fullmatch(r"(?i)select\b.*", m.group(0)):
        return f"sends {m.group(0).split()[0].upper()}"
    if feed is not None and (m := _SQL_WRITE.search(feed) or _CODE_WRITE.search(feed)):
        return f"is fed {m.group(0)}"
    if m := _CODE_WRITE.search(text):
        return f"runs code calling {m.group(0)}"
    if any(w in _DRY or (w.startswith("--dry-run") and w not in ("--dry-run=none", "--dry-run=false"))
           for w in words):
        return None  # alembic upgrade --sql > out.sql, migrate --plan, --dry-run=server: printed, not done
    if any(_SQL_READ.match(w) for w in words):
        return None  # psql -c "SELECT ...": a read (the writes were looked for above)
    plain = [w for w in words if not w.startswith("-")][:5]
    carriers = [w for w in plain if w.lower() in _CARRIERS]
    if fed and feed is None and carriers:
        return f"{carriers[0]} is fed statements the guard cannot see"
    if carriers and any(w in _SCRIPT_OPTS for w in words):
        return f"{carriers[0]} runs a script file"
    if facts.program in ("psql", "mysql", "sqlcmd", "mongosh", "mongo", "sqlplus") and (
            any(w in _SCRIPT_OPTS for w in words) or (fed and feed is None)):
        return f"{facts.program} runs a script"
    if any(_reads(w) for w in plain):
        return None  # db:migrate:status, flyway info, update-sql; but ps:resize changes
    if facts.program in _HTTP and (m := _HTTP_WRITE.search(text)):
        return f"sends {m.group(0).strip()}"
    if facts.program in ("kcat", "kafkacat") and "-P" in facts.flags:
        return "produces messages"
    if facts.program == "grpcurl" and words and _RPC_WRITE.search(words[-1]):
        return f"calls {words[-1]}"
    fl = next((f for f in facts.flags if f.partition("=")[0] in _FLAG_WRITE), "")
    if fl and (facts.program.startswith(("kafka", "kcat", "rpk")) or "--execute" in facts.flags or fl == "--delete"):
        return f"{fl} changes state"
    for w in plain:
        parts = _parts(w)
        if hit := next((p for p in parts if p in _WRITE_PARTS), None):
            if w.lower() in ("set",) and facts.program in ("gcloud", "kubectl", "aws", "az"):
                return None
            return f"{w}" if hit == w.lower() else f"{w} ({hit})"
    if facts.program == "redis-cli" and any(w.upper() in ("DEL", "UNLINK", "SET", "EXPIRE", "HDEL", "LPOP")
                                            for w in words):
        return "a redis write"
    return None


def carried(argv: list[Val], feed: Stream | None) -> list[Facts]:
    """A runner that carries its command to another machine (heroku run, kubectl exec, ssh) is judged whole: the
    production it names is the runner's (-a shoplet-prod, --context gke-prod), the change is in what it carries."""
    prog, words = program_name(argv[0]) if argv else "", [v.text for v in argv[1:]]
    if prog not in _RUNNERS or not _RUNNERS[prog].intersection(words):
        return []
    facts = Facts(unit=" ".join(v.text for v in argv), program=prog,
                  flags=[w for w in words if w.startswith("-")], words=words)
    where = production(facts, [])
    if where is not None and (what := changes(facts, feed.text if feed is not None else None, feed is not None)):
        facts.signals.add("prod-write")
        facts.notes["prod-write"] = f"why: {where} names production; {prog} {what}"
    return [facts] if "prod-write" in facts.signals else []


def judge_prod(facts: Facts, assigned: list[tuple[str, str | None]], raw: list[str], feed: Stream | None) -> None:
    """Raise `prod-write` when this command changes state on production, read from where it points. `assigned`: the
    variables set on the command line, expanded; `raw`: the command's own assignments as written; `feed`: its stdin."""
    assigned = assigned + [(m.group(1), w[m.end():]) for w in raw if (m := re.match(r"(\w+)=", w))]
    if "prod-write" in facts.signals or facts.test_db or (
            "nonprod-target" in facts.signals and "prod-target" not in facts.signals):
        return
    where = production(facts, assigned)
    if where is None:
        return
    what = changes(facts, feed.text if feed is not None else None, feed is not None)
    if what:
        facts.signals.add("prod-write")
        facts.notes["prod-write"] = f"why: {where} names production; {facts.program} {what}"


PROD_RULES: tuple[Rule, ...] = (
    Rule("prod.write", "changes state on production; aim it at a local or staging target, print the SQL, or leave "
         "it to the operator",
         (Match(signals=("prod-write",)),)),
)
