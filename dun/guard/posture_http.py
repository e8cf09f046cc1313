"""The posture over HTTP (posture.py): writes to messaging, paging, status and store APIs, to paths that silence or
stop any server, to a telemetry service's monitors, mail sent by curl, and a payment service's live key."""

from __future__ import annotations

import re

from dun.guard.hosts import host_of, is_local
from dun.guard.posture_tables import after as _after

_LIVE_KEY = re.compile(r"\b(?:sk|rk)_live_\w+")
# Hosts that carry messages, pages and alerting, store listings; paths that silence or stop on any server
_OPS_HOSTS = re.compile(r"(?:^|\.)(?:hooks\.slack\.com|slack\.com|discord(?:app)?\.com|webhook\.office\.com"
                        r"|outlook\.office\.com|pagerduty\.com|opsgenie\.com|statuspage\.io|mailgun\.net"
                        r"|sendgrid\.com|twilio\.com|postmarkapp\.com|sparkpost\.com|resend\.com|api\.telegram\.org"
                        r"|appstoreconnect\.apple\.com"
                        r"|androidpublisher\.googleapis\.com|api\.mailchimp\.com|mandrillapp\.com"
                        r"|api\.pushover\.net|ntfy\.sh|chat\.googleapis\.com|api\.victorops\.com"
                        r"|events\.splunk\w*\.com|api\.incident\.io|api\.firehydrant\.io|rootly\.com|zapier\.com"
                        r"|ifttt\.com|pushbullet\.com|graph\.microsoft\.com|gmail\.googleapis\.com|api\.brevo\.com"
                        r"|api\.sendinblue\.com|api\.mailjet\.com|api\.smtp2go\.com|api\.elasticemail\.com"
                        r"|rest\.nexmo\.com|api\.vonage\.com|api\.messagebird\.com|api\.plivo\.com|api\.sinch\.com"
                        r"|api\.line\.me|api\.twitter\.com|api\.x\.com|graph\.facebook\.com|api\.linkedin\.com"
                        r"|webexapis\.com|api\.zoom\.us|victorops\.com|betterstack\.com|uptimerobot\.com"
                        r"|squadcast\.com|grafana\.net)$", re.I)
_OPS_PATHS = re.compile(r"/send(?:Mail|Message|_message|-message)?/?$|/chat\.postMessage\b|/hooks?/|/webhooks?/"
                        r"|/api/v\d/statuses/?$|/silences?\b|/-/(?:quit|reload)\b|/downtime\b|/maintenance_windows\b|/mute\b|/heartbeats/"
                        r"[^/]+/disable\b|/alertmanager/[^?]*/silences|/api/(?:v\d/)?(?:alerts|incidents)/?$", re.I)
_WRITE_FLAGS = frozenset({"-d", "--data", "--data-raw", "--data-binary", "--data-urlencode", "-F", "--form", "--json",
                          "-T", "--upload-file", "--post-data", "--post-file"})
_RESERVED_MAIL = re.compile(r"@(?:[\w-]+\.)*(?:example\.(?:com|org|net)|[\w-]+\.(?:example|test|invalid|localhost))>?$",
                            re.I)
# Telemetry services take data all day (metrics, events, errors); their monitors, downtimes and issue states are
# what others rely on
_TELEMETRY = re.compile(r"(?:^|\.)(?:datadoghq\.(?:com|eu)|newrelic\.com|sentry\.io|honeycomb\.io"
                        r"|logz\.io|sumologic\.com)$", re.I)
_TELEMETRY_PATHS = re.compile(r"/(?:monitor|downtime|mute|synthetics|slo|issues|alert|policies|triggers)", re.I)
_READ_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


def ops_url(words: list[str]) -> str | None:
    """The URL of a write to a messaging, paging, alerting or store API, or to a path that silences a server."""
    methods = [w.upper() for w in _after(words, "-X") + _after(words, "--request") + [
        w[2:] for w in words if w.startswith("-X") and len(w) > 2]]
    methods += [w for w in words[:2] if w.upper() in ("POST", "PUT", "PATCH", "DELETE")]  # httpie: http POST url
    if any(host_of(w) and w.split("?", 1)[0].endswith("/graphql") for w in words if "://" in w) and not any(
            "mutation" in w for w in words):
        return None  # a GraphQL query reads
    writes = (methods and methods[-1].upper() not in _READ_METHODS) or (
        not methods and (any(w.split("=", 1)[0] in _WRITE_FLAGS for w in words) or any(
            re.match(r"^[\w.\[\]-]+:?=", w) for w in words[1:] if not w.startswith("-") and "://" not in w)))
    rcpt = _after(words, "--mail-rcpt")
    if any(w.startswith(("smtp://", "smtps://")) for w in words) and any(not _RESERVED_MAIL.search(r) for r in rcpt):
        return next(w for w in words if w.startswith(("smtp://", "smtps://")))  # curl smtp://... --mail-rcpt
    if not writes:
        return None
    if any(_LIVE_KEY.search(w) for w in words):
        return "a payment service's live key"  # curl https://api.stripe.com/v1/refunds -u sk_live_...
    for word in words:
        host = host_of(word) if "://" in word else None
        if host is None or is_local(host):
            continue
        path = word.split(host, 1)[1]
        bare = path.split("?", 1)[0]
        if _OPS_HOSTS.search(host) or _OPS_PATHS.search(bare) or (_TELEMETRY.search(host) and (
                _TELEMETRY_PATHS.search(bare) or any("mutation" in w for w in words) or
                (methods and methods[-1].upper() in ("PUT", "DELETE")))):
            return host
    return None


def people_host(host: str) -> bool:
    """A host that carries messages or pages to people, or a store's listing (the hosts of ops_url)."""
    return bool(_OPS_HOSTS.search(host))
