"""Where a notification goes: apprise URLs (the optional `dun-loop[notify]` extra) and a plain command."""

from __future__ import annotations

import importlib
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit


def url_channel(url: str) -> str:
    """A name for the log that never includes the URL itself (apprise URLs carry tokens and passwords)."""
    return f"apprise:{urlsplit(url).scheme or '?'}"


def send_apprise(url: str, title: str, body: str) -> str | None:
    """Deliver to one apprise URL; None when sent, else why not (one line)."""
    try:
        apprise: Any = importlib.import_module("apprise")  # optional: typed as Any so mypy needs no stubs
    except ImportError:
        return "apprise is not installed (pip install 'dun-loop[notify]')"
    sender = apprise.Apprise()
    if not sender.add(url):
        return f"not an apprise URL this apprise supports ({url_channel(url)})"
    with apprise.LogCapture(level=apprise.logging.WARNING) as captured:
        ok = sender.notify(title=title, body=body, body_format=apprise.NotifyFormat.TEXT)
        said = [line.strip() for line in captured.getvalue().splitlines() if line.strip()]
    if ok:
        return None
    return (said[-1] if said else "apprise reported a failure")[:300]


def send_command(command: list[str], root: Path, timeout_s: float, title: str, body: str,
                 payload: Mapping[str, object]) -> str | None:
    """Run `notify.command` with the event in its environment; None when it exited 0."""
    from dun.core.proc import run_streaming

    argv = ["sh", "-c", command[0]] if len(command) == 1 and any(c.isspace() for c in command[0]) else command
    env = {**os.environ, "DUN_EVENT": str(payload.get("event")), "DUN_TITLE": title, "DUN_MESSAGE": body,
           "DUN_NOTIFY_JSON": json.dumps({**payload, "title": title, "message": body}, default=str)}
    res = run_streaming(argv, root, timeout_s, tail_lines=3, env=env)
    if res.start_error:
        return f"{argv[0]}: {res.start_error}"
    if res.timed_out:
        return f"timed out after {timeout_s:g}s"
    if res.exit_code != 0:
        tail = [line.strip() for line in res.tail if line.strip()][-1:]
        return f"exited {res.exit_code}" + (f": {tail[0][:200]}" if tail else "")
    return None
