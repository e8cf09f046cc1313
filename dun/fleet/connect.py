"""Opening the fleet store `fleet.store` (or $DUN_FLEET_STORE) names: the file of this machine or Redis."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING
from urllib.parse import quote, urlsplit, urlunsplit

from dun.core.errors import ConfigError
from dun.fleet.store import LOCAL, PASSWORD_ENV, STORE_ENV, FleetStore, check_configured, public_url

if TYPE_CHECKING:
    from dun.core.redact import Redactor


def store_url(configured: str | None, explicit: str | None = None) -> str:
    """The store's URL: `explicit` (a command line's --store), else DUN_FLEET_STORE, else `fleet.store`, with
    DUN_FLEET_PASSWORD added to a URL that has none."""
    url = (explicit or os.environ.get(STORE_ENV) or configured or LOCAL).strip()
    password = os.environ.get(PASSWORD_ENV)
    if url == LOCAL or not password:
        return url
    parts = urlsplit(url)
    if parts.password is not None:
        return url
    host = parts.netloc.rpartition("@")[2]
    user = parts.username or ""
    return urlunsplit(parts._replace(netloc=f"{user}:{quote(password, safe='')}@{host}"))


def open_store(configured: str | None, timeout_s: float = 2.0, explicit: str | None = None,
               redactor: Redactor | None = None) -> FleetStore:
    """The store `explicit` (--store), DUN_FLEET_STORE or `fleet.store` names; ConfigError (exit 2) when it is
    malformed or the redis client library is missing. Opening never connects: an unreachable store shows at its
    first use. Only `fleet.store` may not hold a password (the agent reads the repository's config); a password
    joins what `redactor` (the command's) hides."""
    given = "--store" if explicit else f"${STORE_ENV}" if os.environ.get(STORE_ENV) else None
    url = store_url(configured, explicit)
    problem = check_configured(public_url(url) if given else (configured or LOCAL))
    if problem:
        raise ConfigError(f"{given or 'fleet.store'} {problem}")
    if url == LOCAL:
        from dun.fleet.limits import LocalStore

        return LocalStore()
    password = urlsplit(url).password
    if password and redactor is not None:
        redactor.add_secret(password)  # never written into a log or a report
    try:
        from dun.fleet.redisstore import RedisStore
    except ImportError:
        raise ConfigError("fleet.store is a Redis URL but the redis client library is missing: "
                          "pip install 'dun-loop[fleet]'") from None
    return RedisStore(url, timeout_s)
