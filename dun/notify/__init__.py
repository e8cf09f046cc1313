"""Notifications: a run completed, stopped, opened its circuit, waits on a usage limit, spent 80% of its budget,
met tampering or unverified claims, or a new deficiency was found.

`emit(root, event, payload, settings)` sends to every `notify.urls` entry (apprise) and to `notify.command`, when the
event is in `notify.events`. It never raises: a failed delivery is one line on stderr and a line in
`.dun/logs/events.jsonl` (and so in the history database), like a successful one.
"""

from __future__ import annotations

import socket
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dun.notify.messages import EVENTS, render

if TYPE_CHECKING:
    from dun.config.sections import Notify
    from dun.core.redact import Redactor

__all__ = ["EVENTS", "emit", "render"]


def emit(root: Path, event: str, payload: Mapping[str, object], settings: Notify,
         redactor: Redactor | None = None) -> list[dict[str, object]]:
    """Deliver `event` on every configured channel; returns what was recorded for each delivery (its record
    cleaned by `redactor`, the command's)."""
    try:
        return _emit(root, event, payload, settings, redactor)
    except Exception as exc:  # a notification must never stop the loop
        sys.stderr.write(f"dun: notification '{event}' failed: {exc}".splitlines()[0] + "\n")
        return []


def _emit(root: Path, event: str, payload: Mapping[str, object], settings: Notify,
          redactor: Redactor | None) -> list[dict[str, object]]:
    from dun.history.events import append
    from dun.notify.channels import send_apprise, send_command, url_channel
    from dun.notify.throttle import admit, with_digest

    if event not in (settings.events or EVENTS):
        return []
    urls, command = list(settings.urls), list(settings.command)
    if not urls and not command:
        return []
    payload = {"host": socket.gethostname(), **payload, "event": event}
    title, body = render(event, payload)
    digest = admit(root, event, title, settings.interval_min * 60)
    if digest is None:  # within the interval: held for a digest, recorded so the history shows it
        return [append(root, {"run_id": payload.get("run_id"), "kind": "notification", "event": event,
                              "channel": "held", "ok": True, "error": None, "title": title}, redactor)]
    body = with_digest(body, digest)
    attempts: list[tuple[str, Any]] = [(url_channel(u), lambda u=u: send_apprise(u, title, body)) for u in urls]
    if command:
        timeout = settings.timeout_s
        attempts.append((f"command:{Path(command[0].split()[0]).name}",
                         lambda: send_command(command, root, timeout, title, body, payload)))
    recorded = []
    for channel, send in attempts:
        try:
            error = send()
        except Exception as exc:
            error = f"{type(exc).__name__}: {exc}".splitlines()[0][:300]
        if error:
            sys.stderr.write(f"dun: notification '{event}' via {channel} failed: {error}\n")
        recorded.append(append(root, {"run_id": payload.get("run_id"), "kind": "notification", "event": event,
                                      "channel": channel, "ok": error is None, "error": error, "title": title},
                              redactor))
    return recorded
