"""`dun service`: run `dun loop` under the system's supervisor (a systemd user unit, or a launchd agent on macOS)."""
