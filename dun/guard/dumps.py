"""Data dumped out of a store shared with others, and secrets read from a hosted secret store: what such a command
prints is followed by the walker like a secret (marks.py), so it may not reach a network sink (`pg_dump -h db.prod |
curl -T -`, `| nc`, `| aws s3 cp - s3://...`) or a file in the repository, where it would be committed. A dump of a
database on this machine, a schema-only dump, and one kept under /tmp stay free."""

from __future__ import annotations

import itertools
import posixpath
import re

from dun.guard.effects import Effect, Facts
from dun.guard.expand import Ctx, Env, Val
from dun.guard.hosts import host_of
from dun.guard.paths import classify
from dun.guard.remotestate import DUMPERS, HELP, KV_CLIENTS, SQL_CLIENTS, hosts_of, shared

_DUMP_QUERY = re.compile(r"\bcopy\b[^;]*\bto\s+stdout\b|\\copy\b|^\s*select\b|\bselect\b[^;]*\bfrom\b"
                         r"|\.find\s*\(|\.aggregate\s*\(|printjson", re.I)


def dumped(prog: str, args: list[Val], raw: list[str] | None = None) -> str | None:
    """The data a command prints out of a shared store (a dump, an export, a query's rows from a server other than
    this machine, a secret read from a hosted secret store, a browser's saved logins), for the walker to follow to a
    network sink or into the repository as it follows a secret; None for anything else."""
    words, raw = [a.text for a in args], raw or []
    if HELP.intersection(words) or words == ["-h"]:
        return None
    leading = " ".join(w for w in words[:4] if not w.startswith("-"))
    if any(rx.match(leading) for rx in _SECRET_READS.get(prog, ())) and (
            not leading.startswith("ssm") or "--with-decryption" in words):
        return f"what {prog} {leading} prints (secrets or a backup)"
    if prog in ("sqlite3", "duckdb", "litecli") and any(_BROWSER_DATA.search(w) for w in words):
        return "a browser's saved logins, cookies or history"
    if prog in ("ssh", "autossh") and any(w.split()[0:1] and w.split()[0] in DUMPERS for w in words[1:]):
        target = next((w.split("@")[-1] for w in words if not w.startswith("-")), "another machine")
        return f"a database dump run on {target}"
    if prog in DUMPERS and raw[:1] and posixpath.basename(raw[0]) in ("kubectl", "oc"):
        return f"a {prog} run in a cluster's pod"  # kubectl exec -n prod pg-0 -- pg_dump shop: a shared cluster's
    in_bucket = words[2:3] and words[2].startswith("s3://") and "-" in words
    if (prog == "aws" and words[:2] == ["s3", "cp"] and in_bucket) or (
            prog in ("gsutil", "gcloud") and "cat" in words[:2]):  # aws s3 cp s3://b/x - | ...: the object's data
        return f"objects of {next((w for w in words if '://' in w), 'a bucket')}"
    if prog == "aws" and words[:1] == ["dynamodb"] and len(words) > 1 and words[1] in ("scan", "query",
                                                                                     "export-table-to-point-in-time"):
        return "rows of a DynamoDB table"
    if prog == "etcdctl" and "snapshot" in words and (host := shared(hosts_of(prog, words))):
        return f"a snapshot of etcd on {host}"
    if prog in KV_CLIENTS and ("--rdb" in words or "--scan" in words) and (host := shared(hosts_of(prog, words))):
        return f"the key-value store on {host}"
    if prog in DUMPERS:
        if "--schema-only" in words or "--no-data" in words or ("-s" in words and prog == "pg_dump"):
            return None
        source = shared(hosts_of(prog, words))
        return f"a {prog} of the data on {source}" if source else None
    if prog in SQL_CLIENTS:
        query = " ".join(w.split("=", 1)[-1] for w in words)
        server = shared(hosts_of(prog, words))
        if server and _DUMP_QUERY.search(query):
            return f"rows read from {server}"
    return None


# Reads of a hosted secret store that print the secret (not `list`, not the names)
_SECRET_READS: dict[str, tuple[re.Pattern[str], ...]] = {
    "gcloud": (re.compile(r"^secrets versions access\b"),),
    "az": (re.compile(r"^keyvault (?:secret|key|certificate) (?:show|download)\b"),),
    "aws": (re.compile(r"^secretsmanager (?:get-secret-value|batch-get-secret-value)\b"),
            re.compile(r"^ssm get-parameters?(?:-by-path)?\b"),),
    "vault": (re.compile(r"^(?:kv get|read)\b"),),
    "heroku": (re.compile(r"^config(?:$|\s)"), re.compile(r"^pg:backups:(?:download|url)\b")),
    "doppler": (re.compile(r"^secrets(?: download| get)?(?:$|\s)"),), "op": (re.compile(r"^(?:read|item get)\b"),),
}
_BROWSER_DATA = re.compile(r"Login Data|/Cookies$|cookies\.sqlite|logins\.json|key[34]\.db|Web Data|"
                           r"places\.sqlite|/History$", re.I)
_UPLOADS = (("aws", "s3", "cp"), ("gsutil", "cp", ""), ("rclone", "rcat", ""), ("az", "storage", "blob"),
            ("s3cmd", "put", ""), ("mc", "pipe", ""))


def uploaded(prog: str, args: list[Val], secret: str | None) -> str | None:
    """What a cloud copy reading stdin (aws s3 cp - s3://x, rclone rcat, gsutil cp - gs://x) uploads, and what a
    database client loads into a shared server other than the one the data came from (pg_dump -h a | psql -h b)."""
    if not secret:
        return None
    words = [a.text for a in args]
    if (prog in SQL_CLIENTS or prog in KV_CLIENTS) and (server := shared(hosts_of(prog, words))) and \
            server not in secret:
        return f"{secret}, loaded into {server}"
    for name, first, second in _UPLOADS:
        if prog == name and words[:1] == [first] and (not second or second in words[1:2]) and (
                "-" in words or "/dev/stdin" in words or first in ("rcat", "pipe")):
            return secret
    return None


_FILE_OPTIONS = frozenset({"-f", "--file", "-o", "--out", "--output", "--archive", "-r", "--result-file",
                           "--outputFile", "--output-file", "--outfile"})


def mark_written(facts: Facts, args: list[Val], ctx: Ctx, env: Env) -> None:
    """A dump of a shared store written to a file by its own option (pg_dump -f, mongoexport --out, mysqldump -r):
    the file holds the data from then on (a later `curl -T FILE` sends it), and one inside the repository is on its
    way to a commit."""
    words = [a.text for a in args]
    if (facts.program not in DUMPERS and facts.program != "etcdctl") or (desc := dumped(facts.program, args)) is None:
        return
    files = [w.split("=", 1)[1] for w in words if w.split("=", 1)[0] in _FILE_OPTIONS and "=" in w]
    files += [b for a, b in itertools.pairwise(words) if a in _FILE_OPTIONS]
    files += [b for a, b in itertools.pairwise(words) if a == "save" and facts.program == "etcdctl"]
    for name in files:
        if name in ("-", "/dev/stdout") or host_of(name) is not None:
            continue
        path, where = classify(Val(name), ctx, env)
        facts.effects.append(Effect("write", path, where))
        facts.notes.setdefault("reads-secret", desc)
        if where == "inside":
            facts.signals.add("exfiltrate")
            facts.notes.setdefault("exfiltrate", f"secret: {desc}, written into the repository")
