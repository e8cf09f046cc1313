"""Command-line option parsing for the programs the guard knows: which words are flags, which are option values and
which are operands, with combined short flags (`-rf`, `-sSLo out`) and `--long=value` handled."""

from __future__ import annotations

from dataclasses import dataclass, field

from dun.guard.expand import Val


@dataclass(frozen=True)
class Spec:
    short: str = ""  # short options that take a value (-o FILE, -oFILE)
    long: frozenset[str] = frozenset()  # long options that take a value (--output FILE, --output=FILE)
    attached: str = ""  # short options whose value, when present, is attached (-i.bak, -psecret)
    words: bool = False  # single-dash words are whole options (find, sqlite3: -name, -cmd)
    stop: bool = False  # options end at the first operand (git, sh, sudo, env)
    plus: bool = False  # +o, +x are options too (shells)


@dataclass
class Opts:
    flags: list[str] = field(default_factory=list)  # -r, -f, --force, and --force-with-lease=x as written
    values: dict[str, list[Val]] = field(default_factory=dict)
    operands: list[Val] = field(default_factory=list)
    end: int = 0  # with Spec.stop: the index of the first operand

    def has(self, *names: str) -> bool:
        return any(n in self.flags for n in names)

    def value(self, *names: str) -> list[Val]:
        return [v for n in names for v in self.values.get(n, [])]


_OFF = frozenset({"false", "0", "no", "off"})


def sliced(val: Val, start: int) -> Val:
    def shift(at: int | None) -> int | None:
        return None if at is None else max(at - start, 0)

    return Val(val.text[start:], shift(val.unknown_at), shift(val.glob_at), val.subs, val.dl,
               unknown_kind=val.unknown_kind)


def parse(args: list[Val], spec: Spec = Spec()) -> Opts:
    out = Opts(end=len(args))
    i = 0
    while i < len(args):
        text = args[i].text
        if text == "--":
            out.operands += args[i + 1:]
            out.end = i + 1
            break
        if text.startswith("--") or (spec.words and text.startswith("-") and len(text) > 1):
            name, eq, setting = text.partition("=")
            if not (eq and setting.lower() in _OFF):  # --draft=false, --volumes=0: the flag is not given
                out.flags.append(name)
            if eq:
                out.flags.append(text)
                out.values.setdefault(name, []).append(sliced(args[i], len(name) + 1))
            elif name in spec.long and i + 1 < len(args):
                out.values.setdefault(name, []).append(args[i + 1])
                i += 1
        elif _is_option(text, spec) and args[i].unknown_at != 0:
            i += _short(args, i, spec, out)
        else:
            out.operands.append(args[i])
            if spec.stop:
                out.operands += args[i + 1:]
                out.end = i
                break
        i += 1
    return out


def _is_option(text: str, spec: Spec) -> bool:
    return len(text) > 1 and (text.startswith("-") or (spec.plus and text.startswith("+")))


def _short(args: list[Val], i: int, spec: Spec, out: Opts) -> int:
    """Parse one word of combined short flags; return how many extra words were consumed."""
    text = args[i].text
    sign = text[0]
    for j, ch in enumerate(text[1:], 1):
        name = sign + ch
        out.flags.append(name)
        if ch in spec.attached:
            if text[j + 1:]:
                out.values.setdefault(name, []).append(sliced(args[i], j + 1))
            return 0
        if ch in spec.short:
            if text[j + 1:]:
                out.values.setdefault(name, []).append(sliced(args[i], j + 1))
                return 0
            if i + 1 < len(args):
                out.values.setdefault(name, []).append(args[i + 1])
                return 1
            return 0
    return 0


def _long(*names: str) -> frozenset[str]:
    return frozenset(names)


SPECS: dict[str, Spec] = {
    "cp": Spec("tS", _long("--target-directory", "--suffix")),
    "mv": Spec("tS", _long("--target-directory", "--suffix")),
    "ln": Spec("tS", _long("--target-directory", "--suffix")),
    "install": Spec("tSmog", _long("--target-directory", "--suffix", "--mode", "--owner", "--group")),
    "touch": Spec("drt", _long("--date", "--reference")),
    "mkdir": Spec("m", _long("--mode", "--context")),
    "truncate": Spec("sr", _long("--size", "--reference")),
    "sed": Spec("efl", _long("--expression", "--file", "--line-length"), attached="i"),
    "perl": Spec("eEx", attached="iIMmdlC0"),
    "curl": Spec("AbcCdDeEFHKmoPQrtTuUwxXyYz", _long(
        "--output", "--output-dir", "--data", "--data-raw", "--data-binary", "--data-urlencode", "--header",
        "--request", "--user", "--url", "--config", "--cookie", "--cookie-jar", "--dump-header", "--upload-file",
        "--write-out", "--proxy", "--max-time", "--connect-timeout", "--retry", "--user-agent", "--referer", "--form",
        "--cacert", "--cert", "--key", "--resolve", "--limit-rate", "--retry-delay", "--retry-max-time")),
    "wget": Spec("OoaPtTUeiBQlwDRAIX", _long(
        "--output-document", "--directory-prefix", "--output-file", "--append-output", "--tries", "--timeout",
        "--user-agent", "--execute", "--input-file", "--header", "--user", "--password")),
    "tar": Spec("fCTXbHgLNVIK", _long("--file", "--directory", "--files-from", "--exclude-from",
                                       "--use-compress-program", "--transform")),
    "unzip": Spec("dx", _long()),
    "rsync": Spec("eBfT", _long("--rsh", "--filter", "--exclude", "--include", "--temp-dir", "--partial-dir",
                                "--log-file", "--backup-dir", "--chmod", "--chown")),
    "dd": Spec(),
    "git": Spec("Cc", _long("--git-dir", "--work-tree", "--namespace", "--exec-path", "--config-env"), stop=True),
    "git push": Spec("o", _long("--push-option", "--repo", "--receive-pack", "--exec")),
    "git checkout": Spec("bB", _long("--orphan", "--conflict")),
    "git switch": Spec("cC", _long("--create", "--force-create", "--orphan")),
    "git restore": Spec("s", _long("--source")),
    "git clean": Spec("e", _long("--exclude")),
    "git clone": Spec("boujc", _long("--branch", "--origin", "--upload-pack", "--reference", "--depth", "--config",
                                     "--separate-git-dir", "--filter")),
    "git worktree": Spec("bB", _long("--reason")),
    "git config": Spec("f", _long("--file", "--blob", "--type", "--default", "--comment", "--value")),
    "git commit": Spec("mFcCt", _long("--message", "--file", "--author", "--date", "--template", "--fixup")),
    "psql": Spec("cdfhLopPRTUvF", _long("--command", "--dbname", "--file", "--host", "--port", "--username", "--set",
                                         "--variable", "--output", "--pset", "--log-file")),
    "mysql": Spec("eDhPSu", _long("--execute", "--database", "--host", "--port", "--socket", "--user"), attached="p"),
    "sqlite3": Spec(long=_long("-cmd", "-separator", "-newline", "-nullvalue", "-init"), words=True),
    "duckdb": Spec(long=_long("-c", "-s", "-cmd", "-init"), words=True),
    "sqlcmd": Spec("QqSUPdiohstv"),
    "clickhouse-client": Spec("qhudp", _long("--query", "--host", "--user", "--database", "--port", "--password")),
    "cockroach": Spec("ed", _long("--execute", "--database", "--url", "--host", "--user")),
    "mongosh": Spec("uph", _long("--eval", "--host", "--port", "--username", "--password", "--file")),
    "redis-cli": Spec("hpanuc"),
    "usql": Spec("cf", _long("--command", "--file")),
    "snowsql": Spec("qfacdsuw", _long("--query", "--filename")),
    "bq": Spec(),
    "pg_restore": Spec("dfFhpUnNtTIjLPSW", _long("--dbname", "--file", "--format", "--host", "--port", "--username",
                                               "--schema", "--table", "--index", "--jobs", "--use-list", "--role")),
    "shell": Spec("oO", _long("--rcfile", "--init-file"), stop=True, plus=True),
    "python": Spec("cmWX", stop=True),
    "node": Spec("epr", _long("--eval", "--print", "--require"), stop=True),
    "interp": Spec("eErI", stop=True),
    "expect": Spec("cfD", stop=True),
    "awk": Spec("Fvfei", _long("--field-separator", "--assign", "--file", "--source", "--include"), stop=True),
    "pwsh": Spec(long=_long("-c", "-command", "-Command", "-File", "-file", "-f", "-EncodedCommand", "-enc", "-ec",
                            "-ExecutionPolicy", "-ep", "-WorkingDirectory", "-wd"), words=True, stop=True),
}
SPECS.update({
    "git prune": Spec(long=_long("--expire")),
    "git gc": Spec(),
    "aws": Spec(long=_long("--region", "--profile", "--output", "--endpoint-url", "--query", "--color",
                           "--ca-bundle", "--cli-read-timeout", "--cli-connect-timeout", "--cli-binary-format")),
    "gh": Spec("XfFHqtpRn", _long("--method", "--raw-field", "--field", "--header", "--jq", "--template", "--input",
                                  "--repo", "--hostname", "--preview", "--cache", "--title", "--body", "--notes")),
    "docker": Spec("Hcl", _long("--host", "--context", "--config", "--log-level", "--restart")),
    "kubectl": Spec("nlfcos", _long("--namespace", "--context", "--kubeconfig", "--selector", "--filename",
                                   "--output", "--cluster", "--user", "--server", "--grace-period", "--timeout")),
    "helm": Spec("n", _long("--namespace", "--kube-context", "--kubeconfig")),
    "kill": Spec("sn", _long("--signal")),
    "crontab": Spec("u"),
    "cqlsh": Spec("eukp", _long("--execute", "--keyspace", "--username", "--password")),
    "gcloud": Spec(long=_long("--project", "--zone", "--region", "--format", "--account", "--configuration")),
    "az": Spec("gnso", _long("--resource-group", "--name", "--subscription", "--output", "--query")),
})
SPECS["docker compose"] = Spec("fp", _long("--file", "--project-name", "--profile", "--env-file", "--ansi",
                                          "--project-directory", "--progress", "--parallel"))
SPECS["podman"] = SPECS["nerdctl"] = SPECS["docker"]
SPECS["docker-compose"] = SPECS["podman-compose"] = SPECS["podman compose"] = SPECS["docker compose"]
SPECS["gawk"] = SPECS["mawk"] = SPECS["nawk"] = SPECS["awk"]
SPECS["oc"] = SPECS["kubectl"]
SPECS["mariadb"] = SPECS["mysqladmin"] = SPECS["mysql"]
SPECS["terraform"] = SPECS["tofu"] = SPECS["terragrunt"] = Spec(words=True)  # -destroy, -auto-approve
SPECS["mongo"] = SPECS["mongosh"]
SPECS["influx"] = SPECS["hdfs"] = SPECS["hadoop"] = SPECS["nomad"] = Spec(
    long=_long("-execute", "-database", "-host", "-format", "-address", "-namespace", "-region"), words=True)
SPECS["pgcli"] = SPECS["mycli"] = SPECS["litecli"] = Spec("hpUdDeuP", _long("--execute", "--host", "--port", "--user",
                                                                            "--dbname", "--database"))
SPECS["migrate"] = Spec(long=_long("-path", "-database", "-source", "-database-url"), words=True)  # golang-migrate
SPECS["cypher-shell"] = Spec("uapd", _long("--username", "--address", "--password", "--database", "--format"))
SPECS["arangosh"] = Spec(long=_long("--javascript.execute-string", "--server.endpoint", "--server.database"))
SPECS["gradle"] = SPECS["gradlew"] = Spec("xbcIp", attached="PD")  # -Pkey=value, -Dkey=value, -x TASK
SPECS["mvn"] = SPECS["mvnw"] = Spec("fsPplbtT", attached="D")
