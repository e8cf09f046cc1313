"""Destructive raw HTTP to a server this task did not start: DELETE from curl, wget, httpie, xh (and from code, which
codemore.py reads as curl), and PUT/POST/PATCH to a server's settings, access or bulk-delete endpoints (`_cluster/
settings`, `_close`, `_delete_by_query`, ACLs, admin APIs, collaborators) or with a bulk-delete body. A server on
this machine or reached by a one-word compose name (hosts.py) is free: that is where a task's test servers run."""

from __future__ import annotations

import re

from dun.guard.effects import Facts
from dun.guard.hosts import host_of, is_local

HTTP_CLIENTS = frozenset({"curl", "wget", "http", "https", "xh", "xhs", "curlie", "httpie", "hurl", "wget2"})
_HTTPIE_VALUES = frozenset({"-a", "--auth", "-A", "--auth-type", "-o", "--output", "--session", "--session-read-only",
                            "--verify", "--cert", "--cert-key", "--proxy", "--timeout", "-p", "--print",
                            "--format-options"})
# Public test APIs that hold nothing: they echo the request or fake a REST resource (httpbin.org/delete)
_ECHO_SERVICES = frozenset({"httpbin.org", "httpbingo.org", "postman-echo.com", "jsonplaceholder.typicode.com",
                            "reqres.in", "dummyjson.com"})
_METHODS = frozenset({"GET", "HEAD", "OPTIONS", "POST", "PUT", "PATCH", "DELETE"})
# Endpoints whose writes change a server's settings, access or lifecycle, or delete in bulk
_ADMIN_PATH = re.compile(r"/_cluster/settings|/_config/|/_users/|/_settings\b|/_close\b|/_delete_by_query"
                         r"|/_security/|/_shutdown|/_snapshot/|/_ilm/|/_all\b|/\*|/_plugins/_security|/admin/|/acl\b|/acls?/|/v1/agent/"
                         r"(?:force-)?leave|/v1/operator/|/v1/sys/|/api/v1/admin/|delete_series|/_flush\b|/users?/"
                         r"[^/?]+/(?:roles|password)|/permissions\b|/collaborators\b|/access_tokens\b|/deploy_tokens\b|/memberships/|/members\b"
                         r"|/invitations\b|/owners?\b|/admins?\b|/keys\b|/hooks\b|/protection\b"
                         r"|/(?:[^/?]*[-_.])?(?:delete|purge|destroy|drop|wipe|truncate|flush)"
                         r"(?:[-_.][^/?]*|all|everything)?(?:[/?]|$)", re.I)
# Bodies of a PUT or PATCH that disable something, make someone an admin or make a repository public (a POST's may
# be a search for them)
_SETTING_BODY = re.compile(r"\"private\"\s*:\s*false|\"visibility\"\s*:\s*\"public\""
                           r"|\"(?:status|state|enabled?|active)\"\s*:\s*(?:\"(?:disabled|off|inactive)\"|false)"
                           r"|^role=(?:admin|owner|superuser)$|\"role\"\s*:\s*\"(?:admin|owner|superuser)\"", re.I)
# Bodies that delete in bulk
_DELETE_BODY = re.compile(r"<delete>|\"delete\"\s*:|FLUSHALL|\bdrop\s+(?:table|database|schema|index|collection|user)\b"
                          r"|\btruncate\s+table\b", re.I)
_BODY_OPTIONS = ("-d=", "--data=", "--data-binary=", "--data-raw=", "--data-urlencode=", "--json=", "--body-data=",
                 "--post-data=")



def _note(facts: Facts, why: str) -> None:
    facts.signals.add("http-destroy")
    facts.notes.setdefault("http-destroy", f"why: {why}")


_CODE_WRITE = (re.compile(r"""\.(?:put|post|patch)\s*\(\s*['"`](https?://[^'"`\s]+)""", re.I),  # requests.put(url)
               re.compile(r"""\b(?:fetch|request)\s*\(\s*['"`](https?://[^'"`\s]+)['"`]\s*,\s*\{[^}]*method\s*:\s*"""
                          r"""['"](?:PUT|POST|PATCH)""", re.I))  # fetch(url, {method: 'PUT'})
INTERPRETER = re.compile(r"(?:python|pypy|node|nodejs|bun|deno|ruby|perl|php)[0-9.]*")


def code_writes(facts: Facts, words: list[str]) -> None:
    """Interpreter code writing to a server's settings, access or bulk-delete endpoints (requests.put(url), fetch
    with method PUT): its DELETE calls are read as curl already (codemore.py)."""
    for m in (m for rx in _CODE_WRITE for m in rx.finditer(" ".join(words))):
        url = m.group(1)
        host = host_of(url) or ""
        if not is_local(host) and _ADMIN_PATH.search(url.split(host, 1)[-1]):
            _note(facts, f"code writes to {url[:60]}, a server's settings, access or bulk delete")
            return


def mark(facts: Facts, prog: str, words: list[str]) -> None:
    """Raise http-destroy for a destructive request of an HTTP client to a server other than this machine."""
    values = facts.values
    if prog in ("curl", "curlie"):
        methods = [v.split("=", 1)[1].upper() for v in values if v.startswith(("-X=", "--request="))]
        urls = [facts.sub, *facts.operands, *(v.split("=", 1)[1] for v in values if v.startswith("--url="))]
        bodies = [v.split("=", 1)[1] for v in values if v.startswith(_BODY_OPTIONS)]
    elif prog in ("wget", "wget2"):
        methods = [w.split("=", 1)[1].upper() for w in words if w.startswith("--method=")]
        methods += [words[i + 1].upper() for i, w in enumerate(words[:-1]) if w == "--method"]
        urls = [w for w in words if not w.startswith("-")]
        bodies = [w.split("=", 1)[1] for w in words if w.startswith(_BODY_OPTIONS)]
    else:  # httpie, xh: [METHOD] URL [items]
        rest = [w for i, w in enumerate(words) if not w.startswith("-") and (i == 0 or words[i - 1] not in
                                                                               _HTTPIE_VALUES)]
        methods = [rest[0].upper()] if rest and rest[0].upper() in _METHODS else []
        urls = rest[1:2] if methods else rest[:1]
        bodies = rest[2:] if methods else rest[1:]
    urls = ["localhost" + u if u.startswith(":") else u for u in urls]  # httpie's :3000/x is localhost
    targets = [(u, h) for u in urls if u and (h := host_of(u) or (u.split("/", 1)[0] if "/" in u else None))]
    target = next(((u, h) for u, h in targets if not is_local(h) and h.lower() not in _ECHO_SERVICES), None)
    method = methods[-1] if methods else ("POST" if bodies else "GET")
    if target is None and method == "DELETE" and (hidden := next((u for u in urls if u.startswith("$")), None)):
        _note(facts, f"DELETE on a server named by {hidden.split('/', 1)[0]}, which the guard "
              "cannot resolve")
        return
    if target is None:
        return
    url, host = target
    path = url.split(host, 1)[-1]
    if method == "DELETE":
        _note(facts, f"DELETE on {host}, a server this task did not start")
    elif method in ("PUT", "POST", "PATCH") and (_ADMIN_PATH.search(path) or any(_DELETE_BODY.search(b) or (
            method != "POST" and _SETTING_BODY.search(b)) for b in bodies)):
        _note(facts, f"{method} to {path[:50] or '/'} on {host} changes the server's settings, "
              "access or data in bulk")
